// tests/support/gemm_backend.h — set the process-wide GEMM backend for one test and restore it.
//
// kernels::set_gemm_backend is process-wide and Catch2 runs a binary's test cases one after
// another in one process, so a test that needs OpenBLAS in particular (its thread splitting, say)
// must not leave it switched on for the tests after it.
#pragma once

#include "kernels/blas.h"

namespace zt_test {

/// RAII: the given backend while in scope, the previous one after.
class ScopedGemmBackend {
 public:
  /// Switch to `backend`. @param backend the backend for this scope.
  explicit ScopedGemmBackend(zt::kernels::GemmBackend backend) : previous_(zt::kernels::gemm_backend()) {
    zt::kernels::set_gemm_backend(backend);
  }
  ~ScopedGemmBackend() { zt::kernels::set_gemm_backend(previous_); }
  ScopedGemmBackend(const ScopedGemmBackend&) = delete;
  ScopedGemmBackend& operator=(const ScopedGemmBackend&) = delete;

 private:
  zt::kernels::GemmBackend previous_;
};

}  // namespace zt_test
