// On a GPU: every CUDA kernel of the model's non-GEMM ops (ops/cuda) and of the optimizer
// (optim/cuda) against the CPU kernels, bit for bit, on order-sensitive inputs — the very cases
// the host test runs through the host launch layer (tests/support/kernel_cases/), here with
// buffers in CUDA managed memory, which the CPU kernel and the device both address. Without a
// device it prints why and exits 77, which CTest reports as skipped.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "fp/bf16.h"
#include "fp/fp16.h"
#include "ops/cuda/ops_cuda.h"
#include "optim/cuda/optim_cuda.h"
#include "support/kernel_cases/attention.h"
#include "support/kernel_cases/cross_entropy.h"
#include "support/kernel_cases/elementwise.h"
#include "support/kernel_cases/embedding.h"
#include "support/kernel_cases/layernorm.h"
#include "support/kernel_cases/linear.h"
#include "support/kernel_cases/optim.h"

namespace {

// std::allocator's contract over cudaMallocManaged: the buffers of a case live where both the
// CPU kernel and the device kernel can read and write them.
template <typename T>
struct Managed {
  using value_type = T;
  Managed() = default;
  template <typename U>
  Managed(const Managed<U>&) {}
  T* allocate(std::size_t n) {
    void* p = nullptr;
    if (cudaMallocManaged(&p, (n ? n : 1) * sizeof(T)) != cudaSuccess) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { cudaFree(p); }
  template <typename U>
  bool operator==(const Managed<U>&) const {
    return true;
  }
};

template <typename Op>
constexpr bool kOptimizerOp = std::is_same_v<Op, zt::AdamElements> || std::is_same_v<Op, zt::SgdElements> ||
                              std::is_same_v<Op, zt::UnscaleCheckElements>;

// The device environment of the shared cases: managed vectors, the CUDA launchers (finished
// before run returns, so the case reads the results on the host), a failure count.
struct DeviceEnv {
  template <typename T>
  using vec = std::vector<T, Managed<T>>;
  int* checked;
  int* failures;
  template <typename Op>
  void run(const Op& op) const {
    if constexpr (kOptimizerOp<Op>) {
      zt::optim::cuda::launch(op, nullptr);
    } else {
      zt::ops::cuda::launch(op, nullptr);
    }
    const cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
      std::printf("FAIL: CUDA error %s\n", cudaGetErrorString(err));
      ++*failures;
    }
  }
  void check(bool same, const std::string& what) const {
    ++*checked;
    if (!same) {
      ++*failures;
      std::printf("FAIL %s: bits differ from the CPU kernel's, first at %s\n", what.c_str(),
                  zt::test::last_difference().c_str());
    }
  }
};

template <typename T>
void model_cases(const DeviceEnv& env) {
  zt::test::case_layernorm<T>(env);
  zt::test::case_gelu<T>(env);
  zt::test::case_residual<T>(env);
  zt::test::case_cross_entropy<T>(env);
  zt::test::case_attention_blocks<T>(env);
  zt::test::case_embedding<T>(env);
  zt::test::case_linear<T>(env);
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  int checked = 0, failures = 0;
  const DeviceEnv env{&checked, &failures};
  model_cases<float>(env);
  model_cases<zt::fp16>(env);
  model_cases<zt::bf16>(env);
  zt::test::case_cast<zt::fp16>(env);
  zt::test::case_cast<zt::bf16>(env);
  zt::test::case_optim(env);
  std::printf("kernels on the GPU: %d of %d comparisons bitwise equal to the CPU kernels\n", checked - failures,
              checked);
  return failures == 0 ? 0 : 1;
}
