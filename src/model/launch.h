// model/launch.h — the launch helpers shared by ModelOps' two source files (model_ops.cc,
// model_ops_gemm.cc): the ranges an op touches, an op of ops/ as a kernel on a stream, a CPU
// kernel as the host runtime's launch, and the linear layers' GEMMs as kernels (FP32 operands, or
// 16-bit ones for the vendor's tensor cores).
// Private to model/model_ops*.
//
// The spans are what the emulated device's race checker sees (device/emulated_runtime.h), so each
// names every byte its kernel reads or writes: a whole tensor for an element or row op, the
// rectangle a strided GEMM operand covers (row stride times rows: the gaps between its rows are
// included, an over-statement that can only make the checker stricter).
// The GEMM kernels follow `--gemm` (kernels/blas.h's process-wide backend, read when the kernel is
// enqueued). canonical: gemm/canonical_gemm_kernel.h's one-thread-per-element bodies; the host body
// enumerates the grid a GPU would run (device/host_launch.h), so every element is the canonical
// chain, bitwise the CPU's `--gemm canonical`, and in a build with the CUDA kernels the CUDA body is
// the tiled kernel of gemm/cuda/canonical_gemm_cuda.h on the launch's stream (each output the same
// chain).
// blas: the vendor's library inside the kernel; on the emulated device OpenBLAS on the opened
// device memory, the very call the CPU makes (bitwise the CPU's `--gemm blas` on the same CPU), on
// a GPU cuBLAS (gemm/cuda/blas_gemm_cuda.h: the GPU's own bits, repeatable, never the CPU's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "device/host_launch.h"
#include "device/item_grid.h"
#include "device/runtime.h"
#include "fp/bf16.h"
#include "gemm/canonical_gemm_kernel.h"
#include "gemm/half_gemm.h"
#include "kernels/blas.h"
#include "kernels/cast.h"
#include "ops/op_launch.h"
#if defined(ZT_WITH_CUDA_KERNELS)
#include "gemm/cuda/blas_gemm_cuda.h"
#include "gemm/cuda/canonical_gemm_cuda.h"
#endif

namespace zt::model::launch {

using device::DeviceSpan;

/// The span of n elements at p. @param p the first (device memory). @param n count.
/// @return the span.
template <typename U>
DeviceSpan span(const U* p, int64_t n) {
  return device::span_of(p, static_cast<std::size_t>(n));
}

/// The bytes a row-major [rows, cols] matrix with row stride ld covers.
/// @param p its first element. @param rows rows. @param cols columns. @param ld row stride.
/// @return the span (empty for an empty matrix).
template <typename U>
DeviceSpan matrix_span(const U* p, int64_t rows, int64_t cols, int64_t ld) {
  return rows == 0 || cols == 0 ? DeviceSpan{p, 0} : span(p, (rows - 1) * ld + cols);
}

/// The bytes op(X) [rows, cols] covers in its stored layout.
/// @param x the operand. @param rows rows of op(X). @param cols columns of op(X). @return the span.
inline DeviceSpan operand_span(const gemm::Operand& x, int64_t rows, int64_t cols) {
  return x.trans ? matrix_span(x.data, cols, rows, x.ld) : matrix_span(x.data, rows, cols, x.ld);
}

/// Enqueue an op of ops/, an item op or a block op (ops/op_launch.h: a CUDA body where the build
/// has the CUDA kernels); nothing for an op without work. @param rt the runtime. @param s the
/// stream. @param name the kernel's name. @param op the op. @param reads what it reads.
/// @param writes what it writes.
template <typename Op>
void launch_op(device::Runtime& rt, device::Stream s, const char* name, const Op& op, std::vector<DeviceSpan> reads,
               std::vector<DeviceSpan> writes) {
  if (ops::empty_op(op)) return;
  rt.launch(s, ops::op_kernel(name, op, std::move(reads), std::move(writes)));
}

/// Run a CPU kernel as one launch of the host runtime (device/host_runtime.h): for an op whose
/// CPU form is another algorithm than its device form with the same bits (attention: per head
/// through the CPU's blocked GEMM, where the block ops fuse it). Host runtime only: there is no
/// device body. @param rt the runtime (its memory the host's). @param s the stream. @param name
/// the kernel's name. @param reads what it reads. @param writes what it writes. @param cpu the
/// kernel's call.
template <typename Fn>
void launch_host(device::Runtime& rt, device::Stream s, const char* name, std::vector<DeviceSpan> reads,
                 std::vector<DeviceSpan> writes, Fn cpu) {
  device::KernelLaunch l;
  l.name = name;
  l.reads = std::move(reads);
  l.writes = std::move(writes);
  l.pool_body = std::move(cpu);
  rt.launch(s, l);
}

/// Enqueue C[m,n] = op(A) op(B): with `--gemm canonical` each element the canonical chain
/// (gemm/canonical_dot.h), with `--gemm blas` the vendor's GEMM (see the file comment).
/// @param rt the runtime. @param s the stream. @param name the kernel's name. @param a op(A),
/// [m,k]. @param b op(B), [k,n]. @param m rows. @param n columns. @param k the summed dimension.
/// @param c the result. @param ldc its row stride.
inline void launch_gemm(device::Runtime& rt, device::Stream s, const std::string& name, const gemm::Operand& a,
                        const gemm::Operand& b, int64_t m, int64_t n, int64_t k, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  device::KernelLaunch l;
  l.reads = {operand_span(a, m, k), operand_span(b, k, n)};
  l.writes = {matrix_span(c, m, n, ldc)};
  l.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const gemm::GemmArgs g{a, b, m, n, k, c, ldc};
  const kernels::GemmBackend backend = kernels::gemm_backend();
  l.pool_body = [g, backend] {  // the host runtime: the CPU's GEMM of the same backend (the same bits)
    kernels::gemm_f32_on(backend, g.a.trans, g.b.trans, g.m, g.n, g.k, g.a.data, g.a.ld, g.b.data, g.b.ld, g.c, g.ldc);
  };
  if (kernels::gemm_backend() == kernels::GemmBackend::blas) {
    l.name = name + " (blas)";
    l.host_body = [g] {
      kernels::gemm_f32_on(kernels::GemmBackend::blas, g.a.trans, g.b.trans, g.m, g.n, g.k, g.a.data, g.a.ld, g.b.data,
                           g.b.ld, g.c, g.ldc);
    };
#if defined(ZT_WITH_CUDA_KERNELS)
    l.cuda_body = [g](void* stream) { gemm::cuda::blas_gemm_async(g, stream); };
#endif
    return rt.launch(s, l);
  }
  l.name = name;
  l.host_body = [g] {
    device::launch_on_host(gemm::element_grid(g.m, g.n), {gemm::kElementBlock, gemm::kElementBlock, 1},
                           [&](const device::ThreadIndex& t) { gemm::canonical_gemm_thread(t, g); });
  };
#if defined(ZT_WITH_CUDA_KERNELS)
  l.cuda_body = [g](void* stream) { gemm::cuda::canonical_gemm_async(g, stream); };
#endif
  rt.launch(s, l);
}

/// Enqueue C[m,n] = op(A) op(B) in FP32 with A and B 16-bit (T = fp16 or bf16), for `--gemm blas`
/// on a device (gemm/half_gemm.h): on a GPU cuBLAS on the tensor cores; on the emulated device both
/// operands widened (exactly) and the host's OpenBLAS call on the widenings, the very call the CPU
/// kernel makes after its own widenings, so the host's bits. No widening kernels are launched.
/// @param rt the runtime. @param s the stream. @param name the kernel's name. @param a op(A) [m,k],
/// stored with row stride lda, transposed when ta. @param lda its stride. @param ta transposed.
/// @param b op(B) [k,n]. @param ldb its stride. @param tb transposed. @param m rows. @param n
/// columns. @param k the summed dimension. @param c the FP32 result. @param ldc its row stride.
template <typename T>
void launch_half_gemm(device::Runtime& rt, device::Stream s, const std::string& name, const T* a, int64_t lda, bool ta,
                      const T* b, int64_t ldb, bool tb, int64_t m, int64_t n, int64_t k, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  device::KernelLaunch l;
  l.name = name + " (blas, 16-bit operands)";
  l.reads = {ta ? matrix_span(a, k, m, lda) : matrix_span(a, m, k, lda),
             tb ? matrix_span(b, n, k, ldb) : matrix_span(b, k, n, ldb)};
  l.writes = {matrix_span(c, m, n, ldc)};
  l.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  l.tensor_cores = true;
  const gemm::HalfGemmArgs g{{a, lda, ta},
                             {b, ldb, tb},
                             m,
                             n,
                             k,
                             c,
                             ldc,
                             std::is_same_v<T, bf16> ? gemm::HalfType::bf16 : gemm::HalfType::fp16};
  l.host_body = [g] {
    // the stored extent of each operand, widened with its stride kept: the CPU's sgemm call
    const auto widened = [](const gemm::HalfOperand& x, int64_t rows, int64_t cols) {
      const int64_t count = rows == 0 || cols == 0 ? 0 : (rows - 1) * x.ld + cols;
      std::vector<float> f(static_cast<std::size_t>(count));
      kernels::widen_into(f.data(), static_cast<const T*>(x.data), count);
      return f;
    };
    const std::vector<float> af = g.a.trans ? widened(g.a, g.k, g.m) : widened(g.a, g.m, g.k);
    const std::vector<float> bf = g.b.trans ? widened(g.b, g.n, g.k) : widened(g.b, g.k, g.n);
    kernels::gemm_f32_on(kernels::GemmBackend::blas, g.a.trans, g.b.trans, g.m, g.n, g.k, af.data(), g.a.ld, bf.data(),
                         g.b.ld, g.c, g.ldc);
  };
#if defined(ZT_WITH_CUDA_KERNELS)
  l.cuda_body = [g](void* stream) { gemm::cuda::blas_half_gemm_async(g, stream); };
#endif
  rt.launch(s, l);
}

}  // namespace zt::model::launch
