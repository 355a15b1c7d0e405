// On a GPU: stochastic rounding to fp16 and bf16 gives the same bits as on the CPU, for a sweep
// of float patterns with the counter-based random bits of fp/random_bits.h. Without a device it
// prints why and exits 77, which CTest reports as skipped.
#include <cstdio>
#include <vector>

#include "device/cuda_probe.h"
#include "fp/cuda/convert_cuda.h"
#include "fp/random_bits.h"
#include "fp/stochastic_round.h"

int main() {
  if (zt::device::probe_cuda().devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  std::vector<float> in;
  for (uint64_t b = 0; b < (1ull << 32); b += 4093) in.push_back(zt::bit_cast_hd<float>(uint32_t(b)));
  const uint64_t seed = 42;
  std::vector<uint16_t> h(in.size()), bf(in.size());
  zt::cuda::round_to_fp16_stochastic(in.data(), h.data(), in.size(), seed);
  zt::cuda::round_to_bf16_stochastic(in.data(), bf.data(), in.size(), seed);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const uint16_t r = zt::random16(seed, i);
    bad += (h[i] != zt::fp16_bits_stochastic(in[i], r)) + (bf[i] != zt::bf16_bits_stochastic(in[i], r));
  }
  std::printf("%zu patterns, %zu mismatches\n", in.size(), bad);
  return bad == 0 ? 0 : 1;
}
