// collective/local_reduce.h — the element-wise reductions a collective applies locally.
//
// Deterministic mode: reduce_rows_canonical combines the N copies of a chunk (one per rank, in
// rank order) with the canonical aligned pairwise tree over ranks (reduce/canonical_tree.h),
// applied in place to blocks of elements at a time, so the tree costs one pass over the rows
// and no copies of partial sums.
// Fast mode: elementwise functions with Gloo's reduction signature (out = a op b), for 16-bit
// types widening to float and rounding back after every operation (gloo::float16 is a different
// type from zt::fp16, and Gloo has no bf16).
// The arithmetic of every add (the combines, widening and rounding, max_nan) is
// local_reduce_body.h's, shared with the CUDA kernel of the NCCL backend.
// This file decides no order of summation itself: the tree is canonical_tree.h's.
#pragma once

#include <cstddef>

#include "collective/collective.h"
#include "collective/local_reduce_body.h"

namespace zt {

/// out[i] = op over rows (canonical tree over row index) of rows[q][i], for i < n.
/// @param rows nrows pointers, each to n elements of dtype (row q is rank q's copy); scratch:
/// fp32 rows are overwritten with partial sums. @param nrows number of rows (>= 1).
/// @param out n elements of dtype; may alias rows[0], must not overlap other rows.
/// @param n elements per row. @param dtype element type. @param op reduction.
/// @param acc for 16-bit sums: fp32 (round once) or storage (round after every add).
void reduce_rows_canonical(void* const* rows, std::size_t nrows, void* out, std::size_t n, DType dtype, ReduceOp op,
                           Accumulation acc);

/// Elementwise reduction with Gloo's AllreduceOptions::Func signature.
using ElementwiseFn = void (*)(void* out, const void* a, const void* b, std::size_t n);

/// The fast-mode elementwise function for a dtype and op (16-bit: widen, op, round).
/// @param dtype element type. @param op reduction. @return the function.
ElementwiseFn elementwise_fn(DType dtype, ReduceOp op);

}  // namespace zt
