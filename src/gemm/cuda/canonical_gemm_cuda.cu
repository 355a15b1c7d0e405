// gemm/cuda/canonical_gemm_cuda.cu — the canonical GEMM's CUDA kernels (element and tiled) and the
// cuBLAS comparison, declared in canonical_gemm_cuda.h. Built with --fmad=false (cmake/ZtCuda.cmake):
// the only fused operations are the explicit fmaf of the definition.
#include "gemm/cuda/canonical_gemm_cuda.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <vector>

#include "core/check.h"
#include "gemm/canonical_gemm_kernel.h"
#include "gemm/cuda/cublas_loader.h"
#include "gemm/cuda/cuda_status.h"

namespace zt::gemm::cuda {
namespace {

__device__ device::ThreadIndex here() {
  return {{blockIdx.x, blockIdx.y, blockIdx.z},
          {threadIdx.x, threadIdx.y, threadIdx.z},
          {blockDim.x, blockDim.y, blockDim.z}};
}

__global__ void element_gemm(GemmArgs g) { canonical_gemm_thread(here(), g); }

// 64 x 64 outputs per block, k staged 16 at a time through shared memory, 16 x 16 threads with
// 4 x 4 outputs each (rows ty + 16 r, columns tx + 16 s). Each output's accumulator runs over k in
// increasing order, block after block, with one fmaf per k: the definition. A partial last k block
// is cut short rather than padded with zeros (fma(0, 0, -0) is +0: padding could flip a zero's sign).
constexpr int kTile = 64, kTileK = 16, kThreads = 16, kPer = kTile / kThreads;

__global__ void tiled_gemm(GemmArgs g) {
  __shared__ float As[kTileK][kTile];  // As[q][r] = op(A)[row0 + r, k0 + q]
  __shared__ float Bs[kTileK][kTile];  // Bs[q][c] = op(B)[k0 + q, col0 + c]
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kThreads + tx;
  const int64_t row0 = int64_t(blockIdx.y) * kTile, col0 = int64_t(blockIdx.x) * kTile;
  float acc[kPer][kPer];
  for (int r = 0; r < kPer; ++r)
    for (int s = 0; s < kPer; ++s) acc[r][s] = 0.0f;
  for (int64_t k0 = 0; k0 < g.k; k0 += kTileK) {
    const int kn = g.k - k0 < kTileK ? int(g.k - k0) : kTileK;
    for (int e = tid; e < kTileK * kTile; e += kThreads * kThreads) {
      const int q = e / kTile, x = e % kTile;
      const bool kin = q < kn;
      As[q][x] = kin && row0 + x < g.m ? g.a.at(row0 + x, k0 + q) : 0.0f;
      Bs[q][x] = kin && col0 + x < g.n ? g.b.at(k0 + q, col0 + x) : 0.0f;
    }
    __syncthreads();
    for (int q = 0; q < kn; ++q)
      for (int r = 0; r < kPer; ++r) {
        const float a = As[q][ty + kThreads * r];
        for (int s = 0; s < kPer; ++s) acc[r][s] = fmaf(a, Bs[q][tx + kThreads * s], acc[r][s]);
      }
    __syncthreads();
  }
  for (int r = 0; r < kPer; ++r)
    for (int s = 0; s < kPer; ++s) {
      const int64_t i = row0 + ty + kThreads * r, j = col0 + tx + kThreads * s;
      if (i < g.m && j < g.n) g.c[i * g.ldc + j] = acc[r][s];
    }
}

// cuBLAS is column-major: row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
void cublas_gemm(cublasHandle_t h, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float* c, int64_t ldc) {
  const float one = 1.0f, zero = 0.0f;
  check(cublas().sgemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, int(n), int(m), int(k), &one,
                       b, int(ldb), a, int(lda), &zero, c, int(ldc)),
        "sgemm");
}

void launch(DeviceGemm kind, cublasHandle_t h, const GemmArgs& g) {
  switch (kind) {
    case DeviceGemm::element: {
      const device::Dim3 grid = element_grid(g.m, g.n);
      element_gemm<<<dim3(grid.x, grid.y), dim3(kElementBlock, kElementBlock)>>>(g);
      break;
    }
    case DeviceGemm::tiled:
      tiled_gemm<<<dim3(unsigned((g.n + kTile - 1) / kTile), unsigned((g.m + kTile - 1) / kTile)),
                   dim3(kThreads, kThreads)>>>(g);
      break;
    case DeviceGemm::cublas:
      cublas_gemm(h, g.a.trans, g.b.trans, g.m, g.n, g.k, g.a.data, g.a.ld, g.b.data, g.b.ld, g.c, g.ldc);
      break;
  }
  check(cudaGetLastError(), "kernel launch");
}

struct DeviceBuffer {
  float* p = nullptr;
  explicit DeviceBuffer(std::size_t n) { check(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(float)), "malloc"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Cublas {
  cublasHandle_t h = nullptr;
  Cublas() { check(cublas().create(&h), "create"); }
  ~Cublas() { cublas().destroy(h); }
};

}  // namespace

void gemm_f32_host(DeviceGemm kind, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  // stored extents: A is [M,K] or [K,M], B [K,N] or [N,K], C [M,N], each with its row stride
  const std::size_t na = std::size_t((trans_a ? k : m) * lda), nb = std::size_t((trans_b ? n : k) * ldb),
                    nc = std::size_t(m * ldc);
  DeviceBuffer da(na), db(nb), dc(nc);
  check(cudaMemcpy(da.p, a, na * sizeof(float), cudaMemcpyHostToDevice), "copy A");
  check(cudaMemcpy(db.p, b, nb * sizeof(float), cudaMemcpyHostToDevice), "copy B");
  check(cudaMemcpy(dc.p, c, nc * sizeof(float), cudaMemcpyHostToDevice), "copy C");
  Cublas blas;
  launch(kind, blas.h, GemmArgs{{da.p, lda, trans_a}, {db.p, ldb, trans_b}, m, n, k, dc.p, ldc});
  check(cudaMemcpy(c, dc.p, nc * sizeof(float), cudaMemcpyDeviceToHost), "copy C back");
}

// The engine's GEMM on a GPU is the tiled kernel: each output's chain is the element kernel's, so
// the bits are the same (checked against `element` and the CPU on a device), about ten times faster.
void canonical_gemm_async(const GemmArgs& g, void* stream) {
  if (g.m == 0 || g.n == 0) return;
  tiled_gemm<<<dim3(unsigned((g.n + kTile - 1) / kTile), unsigned((g.m + kTile - 1) / kTile)), dim3(kThreads, kThreads),
               0, static_cast<cudaStream_t>(stream)>>>(g);
  check(cudaGetLastError(), "canonical GEMM launch");
}

double time_gemm_ms(DeviceGemm kind, int64_t m, int64_t n, int64_t k, int reps) {
  std::vector<float> ha(std::size_t(m * k)), hb(std::size_t(n * k));
  uint32_t s = 12345;
  const auto next = [&s] {  // small integers / 64: exact in FP32, nothing denormal
    s = s * 1664525u + 1013904223u;
    return float(int(s >> 25) - 64) / 64.0f;
  };
  for (auto& x : ha) x = next();
  for (auto& x : hb) x = next();
  DeviceBuffer da(ha.size()), db(hb.size()), dc(std::size_t(m * n));
  check(cudaMemcpy(da.p, ha.data(), ha.size() * sizeof(float), cudaMemcpyHostToDevice), "copy A");
  check(cudaMemcpy(db.p, hb.data(), hb.size() * sizeof(float), cudaMemcpyHostToDevice), "copy B");
  Cublas blas;
  const GemmArgs g{{da.p, k, false}, {db.p, k, true}, m, n, k, dc.p, n};
  for (int w = 0; w < 2; ++w) launch(kind, blas.h, g);
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  check(cudaEventRecord(start), "record");
  for (int r = 0; r < reps; ++r) launch(kind, blas.h, g);
  check(cudaEventRecord(stop), "record");
  check(cudaEventSynchronize(stop), "sync");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return double(ms) / reps;
}

}  // namespace zt::gemm::cuda
