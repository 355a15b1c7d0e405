// collective/local_reduce_body.h — the arithmetic of the deterministic local reduction, written
// once for the CPU and the GPU (ZT_HD, fp/hd.h): how a rank's N received rows of one chunk are
// combined, element by element, along the canonical tree over row (= rank) index.
//
// Three pieces, each used by both paths:
//  - the combine of two partial values (SumF32, SumRounded<T>, MaxNan) and the widening/rounding
//    of 16-bit elements, which collective/local_reduce.cc's blocked CPU loop calls for every add;
//  - dispatch_row_reduce: the one mapping from (dtype, op, accumulation) to element type and
//    combine, used by the CPU path, the CUDA launcher (collective/nccl/local_reduce_cuda.cu) and
//    the host test that runs the kernel body;
//  - the CUDA kernel's per-thread body (row_reduce_thread, one thread per element, looping over
//    the rows with reduce/canonical_tree_hd.h) and its launch geometry (row_reduce_geometry),
//    which the CUDA launcher and device/host_launch.h's launch_on_host both use, so a CPU test
//    runs every device thread's arithmetic bit for bit.
// Why the CPU loop and the kernel body give the same bits: both evaluate the same tree (the
// canonical one; canonical_tree_hd.h is canonical_tree.h's tree evaluated iteratively), on the
// same float leaves (widen_hd), with the same combine and the same final rounding (narrow_hd), and
// neither contracts or reassociates (-ffp-contract=off, --fmad=false). The CPU loop only
// interleaves the elements differently (blocks of rows in place, for speed); each element's
// operations are the same. tests/collective/test_local_reduce_body.cc checks it bitwise.
// This file owns no order of summation (canonical_tree.h does) and no memory.
#pragma once

#include <cstdint>

#include "collective/collective.h"
#include "device/host_launch.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "fp/hd.h"
#include "reduce/canonical_tree_hd.h"

namespace zt {

/// max that propagates NaN from either side (std::max and fmaxf do not), so overflow flags
/// survive a max over ranks. @param a left operand. @param b right operand.
/// @return a if a is NaN, else b if b is NaN, else the larger.
ZT_HD float max_nan(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? b : a;
}

/// An element widened to float (exact for fp16 and bf16). @param x the element. @return x as float.
ZT_HD float widen_hd(float x) { return x; }
/// @copydoc widen_hd(float)
ZT_HD float widen_hd(fp16 x) { return static_cast<float>(x); }
/// @copydoc widen_hd(float)
ZT_HD float widen_hd(bf16 x) { return static_cast<float>(x); }

/// A float rounded to the element type T (round to nearest even; identity for float).
/// @param x the value. @return x as a T.
template <typename T>
ZT_HD T narrow_hd(float x) {
  return T(x);
}

/// Combine for fp32 sums and 16-bit sums accumulated in fp32: one float add.
struct SumF32 {
  /// @param a left (earlier) partial. @param b right partial. @return a + b in float.
  ZT_HD float operator()(float a, float b) const { return a + b; }
};

/// Combine for 16-bit sums with Accumulation::storage: add in float, round to T after every add.
template <typename T>
struct SumRounded {
  /// @param a left (earlier) partial. @param b right partial. @return a + b rounded to T, as float.
  ZT_HD float operator()(float a, float b) const { return widen_hd(narrow_hd<T>(a + b)); }
};

/// Combine for ReduceOp::max, NaN-propagating (max_nan).
struct MaxNan {
  /// @param a left partial. @param b right partial. @return max_nan(a, b).
  ZT_HD float operator()(float a, float b) const { return max_nan(a, b); }
};

/// An element type as a value, so a generic lambda can receive it (dispatch_row_reduce).
template <typename T>
struct TypeTag {
  using type = T;  ///< the element type
};

/// Call f(TypeTag<T>{}, combine) with the element type and combine of (dtype, op, acc): fp32 ->
/// float with SumF32 (storage accumulation of fp32 is fp32); 16-bit sums -> SumF32, or
/// SumRounded<T> for Accumulation::storage; max -> MaxNan (the max of representable values is
/// representable, so accumulation does not matter). The one place this mapping is made.
/// @param dtype element type. @param op reduction. @param acc accumulation of 16-bit sums.
/// @param f a generic callable. @return whatever f returns.
template <typename F>
decltype(auto) dispatch_row_reduce(DType dtype, ReduceOp op, Accumulation acc, F&& f) {
  const auto with_type = [&](auto tag) -> decltype(auto) {
    using T = typename decltype(tag)::type;
    if (op == ReduceOp::max) return f(tag, MaxNan{});
    if (acc == Accumulation::storage && dtype != DType::fp32) return f(tag, SumRounded<T>{});
    return f(tag, SumF32{});
  };
  switch (dtype) {
    case DType::fp16:
      return with_type(TypeTag<fp16>{});
    case DType::bf16:
      return with_type(TypeTag<bf16>{});
    case DType::fp32:
    default:
      return with_type(TypeTag<float>{});
  }
}

/// What one launch of the row reduction works on: nrows rows of n elements, row q starting at
/// rows + q * stride (the receive buffer of a deterministic reduce-scatter holds them back to back).
template <typename T>
struct RowReduceArgs {
  const T* rows = nullptr;  ///< row 0's first element
  uint64_t stride = 0;      ///< elements from one row's start to the next's (>= n)
  uint32_t nrows = 0;       ///< N >= 1, one row per rank, in rank order
  T* out = nullptr;         ///< n results; may alias row 0 only
  uint64_t n = 0;           ///< elements per row
};

/// Threads per block of the row reduction: one thread per element, so any block size gives the
/// same bits; 256 is a common occupancy choice and not a multiple of the CPU loop's 1024 block.
inline constexpr uint32_t kRowReduceBlock = 256;

/// Grid and block of one launch of the row reduction.
struct RowReduceGeometry {
  device::Dim3 grid;   ///< blocks
  device::Dim3 block;  ///< threads per block
};
/// The launch geometry over n elements, used by the CUDA launcher and by launch_on_host alike.
/// @param n elements per row.
/// @return ceil(n / kRowReduceBlock) blocks of kRowReduceBlock threads, in x.
ZT_HD RowReduceGeometry row_reduce_geometry(uint64_t n) {
  RowReduceGeometry g;
  g.grid.x = device::blocks_for(n, kRowReduceBlock);
  g.block.x = kRowReduceBlock;
  return g;
}

/// Leaf i of one element's tree: row q's element, widened.
template <typename T>
struct RowLeaf {
  const T* column;  ///< &rows[element]
  uint64_t stride;  ///< elements between rows
  /// @param q the row (rank). @return that row's element as float.
  ZT_HD float operator()(uint32_t q) const { return widen_hd(column[q * stride]); }
};

/// The kernel's per-thread body: element i = global x index; out[i] = the canonical tree over
/// rows 0..nrows-1 of rows[q][i], combined with `combine`, rounded once to T. Threads past n do
/// nothing. @param t this thread's place in the grid. @param a the launch's arguments.
/// @param combine SumF32, SumRounded<T> or MaxNan (dispatch_row_reduce chooses).
template <typename T, typename Combine>
ZT_HD void row_reduce_thread(const device::ThreadIndex& t, const RowReduceArgs<T>& a, const Combine& combine) {
  const uint64_t i = uint64_t(t.block.x) * t.block_dim.x + t.thread.x;  // 64-bit: n may exceed 2^32
  if (i >= a.n) return;
  const RowLeaf<T> leaf{a.rows + i, a.stride};
  a.out[i] = narrow_hd<T>(canonical_reduce_hd<float>(a.nrows, leaf, combine));
}

}  // namespace zt
