// tests/fp/hw_convert.cc — see hw_convert.h.
#include "hw_convert.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace zt::test {

#if defined(__x86_64__)

bool cpu_has_f16c() { return __builtin_cpu_supports("f16c"); }
bool cpu_has_avx512bf16() { return __builtin_cpu_supports("avx512bf16"); }

__attribute__((target("avx,f16c"))) void f16c_fp16_bits(const float* in, uint16_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
}

__attribute__((target("avx,f16c"))) void f16c_float_from_fp16(const uint16_t* in, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
}

__attribute__((target("avx512f,avx512bf16"))) void avx512_bf16_bits(const float* in, uint16_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 16) {
    const __m256bh b = _mm512_cvtneps_pbh(_mm512_loadu_ps(in + i));
    std::memcpy(out + i, &b, sizeof b);
  }
}

#else

bool cpu_has_f16c() { return false; }
bool cpu_has_avx512bf16() { return false; }
void f16c_fp16_bits(const float*, uint16_t*, std::size_t) {}
void f16c_float_from_fp16(const uint16_t*, float*, std::size_t) {}
void avx512_bf16_bits(const float*, uint16_t*, std::size_t) {}

#endif

}  // namespace zt::test
