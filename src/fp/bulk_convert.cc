// fp/bulk_convert.cc — array conversions float <-> fp16, F16C when the CPU has it (see the header).
#include "fp/bulk_convert.h"

#include <atomic>
#include <type_traits>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace zt {
namespace {

std::atomic<bool> g_scalar_only{false};

void widen_scalar(const fp16* src, float* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}
void narrow_scalar(const float* src, fp16* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = fp16(src[i]);
}

#if defined(__x86_64__)
bool cpu_has_f16c() {
  // F16C is CPUID leaf 1, ECX bit 29, read directly: clang 14 (make fuzz's compiler) does not know
  // "f16c" as a __builtin_cpu_supports name; "avx" also checks that the OS saves the registers.
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
  }();
  return has;
}

// fp16 is a struct holding only its 16 bits, so an array of it is an array of uint16_t for the
// loads and stores below.
static_assert(sizeof(fp16) == 2 && std::is_standard_layout_v<fp16> && std::is_trivially_copyable_v<fp16>,
              "fp16 must be exactly its bit pattern");
__attribute__((target("avx,f16c"))) void widen_f16c(const fp16* src, float* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  widen_scalar(src + i, dst + i, n - i);
}
__attribute__((target("avx,f16c"))) void narrow_f16c(const float* src, fp16* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  narrow_scalar(src + i, dst + i, n - i);
}
#else
bool cpu_has_f16c() { return false; }
void widen_f16c(const fp16* src, float* dst, std::size_t n) { widen_scalar(src, dst, n); }
void narrow_f16c(const float* src, fp16* dst, std::size_t n) { narrow_scalar(src, dst, n); }
#endif

}  // namespace

bool bulk_fp16_uses_f16c() { return cpu_has_f16c() && !g_scalar_only.load(std::memory_order_relaxed); }

void set_bulk_fp16_scalar_only(bool scalar_only) { g_scalar_only.store(scalar_only, std::memory_order_relaxed); }

void widen_fp16(const fp16* src, float* dst, std::size_t n) {
  if (bulk_fp16_uses_f16c()) return widen_f16c(src, dst, n);
  widen_scalar(src, dst, n);
}

void narrow_fp16(const float* src, fp16* dst, std::size_t n) {
  if (bulk_fp16_uses_f16c()) return narrow_f16c(src, dst, n);
  narrow_scalar(src, dst, n);
}

}  // namespace zt
