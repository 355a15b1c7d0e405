// gemm/cuda/blas_gemm_cuda.cu — cuBLAS behind blas_gemm_cuda.h: one handle per host thread and
// device, pedantic FP32, row-major arguments turned into cuBLAS's column-major view. cuBLAS itself
// is loaded with the first handle (cublas_loader.h), so programs that never use it do not map it.
#include "gemm/cuda/blas_gemm_cuda.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <map>
#include <utility>

#include "core/check.h"
#include "gemm/cuda/cublas_loader.h"
#include "gemm/cuda/cuda_status.h"

namespace zt::gemm::cuda {
namespace {

// A handle owns its workspace; created on the device current when first asked for. Pedantic
// for the FP32 GEMMs; the default math mode for the 16-bit ones (the tensor cores).
struct Handle {
  cublasHandle_t h = nullptr;
  explicit Handle(bool pedantic = true) {
    check(cublas().create(&h), "create");
    check(cublas().set_math_mode(h, pedantic ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH), "math mode");
  }
  ~Handle() { cublas().destroy(h); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

// This thread's handle for the current device, bound to `stream` (cublasSetStream also returns
// the handle to its own default workspace, so no workspace is shared between streams).
cublasHandle_t handle_on(void* stream, bool pedantic = true) {
  thread_local std::map<std::pair<int, bool>, Handle> handles;
  int device = 0;
  check(cudaGetDevice(&device), "current device");
  cublasHandle_t h = handles.try_emplace({device, pedantic}, pedantic).first->second.h;
  check(cublas().set_stream(h, static_cast<cudaStream_t>(stream)), "bind the stream");
  return h;
}

}  // namespace

// Row-major C[m,n] = op(A) op(B) is, read column-major, C^T[n,m] = op(B)^T op(A)^T: cuBLAS's
// first operand is B, its second A, with the same transposition flags.
void blas_gemm_async(const GemmArgs& g, void* stream) {
  if (g.m == 0 || g.n == 0) return;
  const float one = 1.0f, zero = 0.0f;
  check(cublas().gemm_ex(handle_on(stream), g.b.trans ? CUBLAS_OP_T : CUBLAS_OP_N,
                         g.a.trans ? CUBLAS_OP_T : CUBLAS_OP_N, int(g.n), int(g.m), int(g.k), &one, g.b.data,
                         CUDA_R_32F, int(g.b.ld), g.a.data, CUDA_R_32F, int(g.a.ld), &zero, g.c, CUDA_R_32F, int(g.ldc),
                         CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT),
        "GemmEx");
}

// The same column-major view as blas_gemm_async, the operands 16-bit and the compute FP32 on the
// tensor cores.
void blas_half_gemm_async(const HalfGemmArgs& g, void* stream) {
  if (g.m == 0 || g.n == 0) return;
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType_t t = g.type == HalfType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  check(cublas().gemm_ex(handle_on(stream, false), g.b.trans ? CUBLAS_OP_T : CUBLAS_OP_N,
                         g.a.trans ? CUBLAS_OP_T : CUBLAS_OP_N, int(g.n), int(g.m), int(g.k), &one, g.b.data, t,
                         int(g.b.ld), g.a.data, t, int(g.a.ld), &zero, g.c, CUDA_R_32F, int(g.ldc), CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT),
        "GemmEx (16-bit operands)");
}

}  // namespace zt::gemm::cuda
