// gemm/cuda/cuda_status.h — one line of zt::Error for a failed CUDA runtime or cuBLAS call, shared
// by the GEMM's two CUDA sources (canonical_gemm_cuda.cu, blas_gemm_cuda.cu). Not here: retries or
// recovery (a failed call is the end of the run: the message names it).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/check.h"

namespace zt::gemm::cuda {

/// @param err a CUDA runtime result. @param what the call, for the message.
inline void check(cudaError_t err, const char* what) {
  ZT_CHECK(err == cudaSuccess, "CUDA ", what, ": ", cudaGetErrorString(err));
}
/// @param st a cuBLAS result. @param what the call, for the message.
inline void check(cublasStatus_t st, const char* what) {
  ZT_CHECK(st == CUBLAS_STATUS_SUCCESS, "cuBLAS ", what, ": ", int(st));
}

}  // namespace zt::gemm::cuda
