// gemm/cuda/cublas_loader.h — cuBLAS loaded when a run first asks for it, not when a program starts.
//
// Why: linking libcublas puts it (and libcublasLt) in every program's start-up, and the dynamic
// loader's relocations touch about 150 MiB of their pages before main() runs. Every CPU run would
// carry that in its resident memory, which this project measures and compares with predictions
// (bench/zero/offload.sh's peak RSS, chapter 14). So the programs link only the CUDA runtime,
// and the seven cuBLAS functions the GEMM uses are looked up by name with dlopen/dlsym the first
// time a cuBLAS handle is made, i.e. only in a run with --device cuda and --gemm blas, or in the
// cuBLAS benchmark row. Not here: any other cuBLAS function, or a fallback when the library is
// missing (the error names it and the library file).
#pragma once

#include <cublas_v2.h>

namespace zt::gemm::cuda {

/// The cuBLAS entry points the GEMM uses, resolved from libcublas.so.N, N = CUBLAS_VER_MAJOR (the major
/// version of the headers this build was compiled against). Names are the library's exported
/// ones (cublas_v2.h maps cublasCreate to cublasCreate_v2, and so on).
struct CublasApi {
  /// cublasGemmEx's exported signature (under nvcc, cublas_api.h adds a C++ overload of the name).
  using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                      const void*, cudaDataType, int, const void*, cudaDataType, int, const void*,
                                      void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  decltype(&cublasCreate_v2) create = nullptr;           ///< cublasCreate
  decltype(&cublasDestroy_v2) destroy = nullptr;         ///< cublasDestroy
  decltype(&cublasSetStream_v2) set_stream = nullptr;    ///< cublasSetStream
  decltype(&cublasSetMathMode) set_math_mode = nullptr;  ///< cublasSetMathMode
  GemmExFn gemm_ex = nullptr;                 ///< cublasGemmEx (the exported form with a cublasComputeType_t)
  decltype(&cublasSgemm_v2) sgemm = nullptr;  ///< cublasSgemm
};

/// The library's file name, e.g. "libcublas.so.13". @return it.
const char* cublas_library_name();

/// The entry points, loaded on the first call (thread-safe; later calls return the same table).
/// @return the table, every pointer set.
/// @throws zt::Error naming the library and the loader's message when it or a symbol is missing.
const CublasApi& cublas();

}  // namespace zt::gemm::cuda
