// gemm/cuda/cublas_loader.cc — dlopen/dlsym of the cuBLAS entry points (see cublas_loader.h).
#include "gemm/cuda/cublas_loader.h"

#include <dlfcn.h>

#include "core/check.h"

namespace zt::gemm::cuda {
namespace {

#define ZT_STR2(x) #x
#define ZT_STR(x) ZT_STR2(x)
constexpr const char* kLibrary = "libcublas.so." ZT_STR(CUBLAS_VER_MAJOR);
#undef ZT_STR
#undef ZT_STR2

template <typename F>
void resolve(void* lib, const char* name, F& out) {
  dlerror();  // clear
  void* p = dlsym(lib, name);
  const char* why = dlerror();
  ZT_CHECK(p != nullptr && why == nullptr, "cuBLAS: ", kLibrary, " has no symbol ", name, " (", why ? why : "null",
           "); it does not match the cuBLAS ", CUBLAS_VER_MAJOR, ".x headers this build used");
  out = reinterpret_cast<F>(p);
}

CublasApi load() {
  // RTLD_LOCAL: its symbols stay out of the global namespace; the handle is never closed (cuBLAS
  // registers state with the CUDA runtime for the life of the process).
  void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    ZT_FAIL("cuBLAS could not be loaded (", kLibrary, "): ", why ? why : "unknown reason",
            "; --gemm blas on a CUDA device needs the CUDA Toolkit's cuBLAS on the loader's path");
  }
  CublasApi api;
  resolve(lib, "cublasCreate_v2", api.create);
  resolve(lib, "cublasDestroy_v2", api.destroy);
  resolve(lib, "cublasSetStream_v2", api.set_stream);
  resolve(lib, "cublasSetMathMode", api.set_math_mode);
  resolve(lib, "cublasGemmEx", api.gemm_ex);
  resolve(lib, "cublasSgemm_v2", api.sgemm);
  return api;
}

}  // namespace

const char* cublas_library_name() { return kLibrary; }

const CublasApi& cublas() {
  static const CublasApi api = load();  // C++11 magic static: one load, thread-safe
  return api;
}

}  // namespace zt::gemm::cuda
