// collective/nccl/local_reduce_cuda.h — the deterministic local reduction on a CUDA device: the N
// rows a rank received in a deterministic reduce-scatter, combined element by element along the
// canonical tree over rank index, by the kernel whose per-thread body is
// collective/local_reduce_body.h's row_reduce_thread (the body the CPU tests run on the host).
// It is not a collective: it moves no data between ranks and knows no communicator.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

#include "collective/collective.h"

namespace zt::nccl {

/// Queue out[i] = canonical tree over q < nrows of rows[q * stride + i], i < n, on a stream; the
/// same bits as reduce_rows_canonical on the CPU (local_reduce.h). Device pointers only.
/// @param rows row 0 (device memory); row q starts stride elements after row q-1.
/// @param stride elements between row starts (>= n). @param nrows N >= 1.
/// @param out n results (device memory); may alias row 0, must not overlap other rows.
/// @param n elements per row. @param dtype element type. @param op sum or max (NaN-propagating).
/// @param acc accumulation of 16-bit sums. @param stream where the kernel is queued.
/// Throws zt::Error if the launch fails (errors of the running kernel surface on the stream).
void reduce_rows_canonical_cuda(const void* rows, std::size_t stride, std::size_t nrows, void* out, std::size_t n,
                                DType dtype, ReduceOp op, Accumulation acc, cudaStream_t stream);

}  // namespace zt::nccl
