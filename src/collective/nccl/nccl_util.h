// collective/nccl/nccl_util.h — small helpers shared by the NCCL backend's two source files: CUDA
// error checks, the NCCL element type of a DType, and waiting for a non-blocking communicator
// with a deadline. Internal to src/collective/nccl (no public API).
#pragma once

#include <chrono>
#include <string>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "collective/dtype.h"
#include "core/check.h"

namespace zt::nccl {

/// Throw a zt::Error for a failed CUDA call. @param err its result. @param what the call and
/// its context, for the message.
inline void check_cuda(cudaError_t err, const std::string& what) {
  ZT_CHECK(err == cudaSuccess, what, ": CUDA error: ", cudaGetErrorString(err));
}

/// NCCL's element type for a DType. @param d the dtype. @return ncclFloat32, ncclFloat16 or ncclBfloat16.
inline ncclDataType_t nccl_type(DType d) {
  return d == DType::fp32 ? ncclFloat32 : (d == DType::fp16 ? ncclFloat16 : ncclBfloat16);
}

/// Text of an NCCL result, with the library's last message for the communicator.
/// @param result the result. @param comm the communicator (may be null). @return "what: detail".
inline std::string nccl_text(ncclResult_t result, ncclComm_t comm) {
  const char* last = ncclGetLastError(comm);
  return concat(ncclGetErrorString(result), last && *last ? concat(" (", last, ")") : std::string());
}

/// Wait until a non-blocking communicator leaves ncclInProgress (after creation, a split, or a
/// call that returned ncclInProgress), polling ncclCommGetAsyncError.
/// @param comm the communicator. @param deadline when to give up.
/// @return ncclSuccess, the error NCCL reported, or ncclInProgress if the deadline passed.
ncclResult_t wait_while_in_progress(ncclComm_t comm, std::chrono::steady_clock::time_point deadline);

}  // namespace zt::nccl
