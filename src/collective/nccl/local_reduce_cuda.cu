// collective/nccl/local_reduce_cuda.cu — the CUDA launcher of the canonical row reduction
// (local_reduce_cuda.h). The kernel is a thin shell around local_reduce_body.h's per-thread body;
// the element type and combine come from dispatch_row_reduce and the grid from
// row_reduce_geometry, the same functions the host test runs through launch_on_host. Built with
// --fmad=false (cmake/ZtCuda.cmake): the body has no multiply, but nothing may be contracted.
#include "collective/nccl/local_reduce_cuda.h"

#include <cuda_runtime.h>

#include "collective/local_reduce_body.h"
#include "core/check.h"

namespace zt::nccl {
namespace {

template <typename T, typename Combine>
__global__ void row_reduce_kernel(RowReduceArgs<T> args, Combine combine) {
  const device::ThreadIndex t{{blockIdx.x, blockIdx.y, blockIdx.z},
                              {threadIdx.x, threadIdx.y, threadIdx.z},
                              {blockDim.x, blockDim.y, blockDim.z}};
  row_reduce_thread(t, args, combine);
}

}  // namespace

void reduce_rows_canonical_cuda(const void* rows, std::size_t stride, std::size_t nrows, void* out, std::size_t n,
                                DType dtype, ReduceOp op, Accumulation acc, cudaStream_t stream) {
  ZT_CHECK(nrows >= 1 && nrows < (std::size_t{1} << 32), "reduce_rows_canonical_cuda: ", nrows, " rows");
  ZT_CHECK(stride >= n, "reduce_rows_canonical_cuda: row stride ", stride, " < row length ", n);
  if (n == 0) return;
  const RowReduceGeometry g = row_reduce_geometry(n);
  ZT_CHECK(uint64_t(g.grid.x) * g.block.x >= n && g.grid.x <= 0x7fffffffu, "reduce_rows_canonical_cuda: ", n,
           " elements exceed one launch's grid");
  dispatch_row_reduce(dtype, op, acc, [&](auto tag, auto combine) {
    using T = typename decltype(tag)::type;
    RowReduceArgs<T> a;
    a.rows = static_cast<const T*>(rows);
    a.stride = stride;
    a.nrows = static_cast<uint32_t>(nrows);
    a.out = static_cast<T*>(out);
    a.n = n;
    row_reduce_kernel<<<dim3(g.grid.x, g.grid.y, g.grid.z), dim3(g.block.x, g.block.y, g.block.z), 0, stream>>>(
        a, combine);
  });
  const cudaError_t err = cudaGetLastError();
  ZT_CHECK(err == cudaSuccess, "reduce_rows_canonical_cuda: kernel launch failed: ", cudaGetErrorString(err));
}

}  // namespace zt::nccl
