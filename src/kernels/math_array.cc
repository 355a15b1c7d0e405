// kernels/math_array.cc — array exp/tanh with AVX2 where the CPU has it (see the header). Each
// vector step below mirrors one line of exp_d/tanh_d in kernels/math.h; branches become masks:
// every lane computes every branch, and the lane's own branch is selected at the end.
#include "kernels/math_array.h"

#include <atomic>

#include "kernels/math.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace zt::kernels {
namespace {

std::atomic<bool> g_scalar_only{false};

void exp_f_scalar(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = exp_f(x[i]);
}
void tanh_f_scalar(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = tanh_f(x[i]);
}

#if defined(__x86_64__)
bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

#define ZT_AVX2 __attribute__((target("avx2")))

ZT_AVX2 inline __m256d splat(double v) { return _mm256_set1_pd(v); }
ZT_AVX2 inline __m256d mul(__m256d a, __m256d b) { return _mm256_mul_pd(a, b); }
ZT_AVX2 inline __m256d add(__m256d a, __m256d b) { return _mm256_add_pd(a, b); }
ZT_AVX2 inline __m256d sub(__m256d a, __m256d b) { return _mm256_sub_pd(a, b); }
// Lanes where mask is set take b, the others a.
ZT_AVX2 inline __m256d select(__m256d mask, __m256d a, __m256d b) { return _mm256_blendv_pd(a, b, mask); }
// 2^e for lanes whose biased exponent field e + 1023 lies in [1, 2046], built from its bits as
// pow2i does; other lanes get meaningless bits and are never selected.
ZT_AVX2 inline __m256d pow2_bits(__m256i e_plus_bias) {
  return _mm256_castsi256_pd(_mm256_slli_epi64(e_plus_bias, 52));
}

// exp_d for four lanes.
ZT_AVX2 inline __m256d exp4(__m256d x) {
  const __m256d zero = _mm256_setzero_pd();
  const __m256d is_nan = _mm256_cmp_pd(x, x, _CMP_UNORD_Q);
  const __m256d is_over = _mm256_cmp_pd(x, splat(709.78), _CMP_GT_OQ);
  const __m256d is_under = _mm256_cmp_pd(x, splat(-745.2), _CMP_LT_OQ);
  // Special lanes compute with x = 0 (keeps k in int range); their result is replaced below.
  const __m256d xs = _mm256_andnot_pd(_mm256_or_pd(is_nan, _mm256_or_pd(is_over, is_under)), x);
  const __m256d kd = mul(xs, splat(detail::kLog2e));
  // k = (int)(kd >= 0 ? kd + 0.5 : kd - 0.5): the rounded sum, then truncation toward zero.
  const __m256d kr = select(_mm256_cmp_pd(kd, zero, _CMP_GE_OQ), sub(kd, splat(0.5)), add(kd, splat(0.5)));
  const __m256d k = _mm256_round_pd(kr, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256d r = sub(sub(xs, mul(k, splat(detail::kLn2Hi))), mul(k, splat(detail::kLn2Lo)));
  const __m256d r2 = mul(r, r), r4 = mul(r2, r2), r8 = mul(r4, r4);
  const __m256d a01 = add(splat(1.0), r), a23 = add(splat(0.5), mul(r, splat(1.0 / 6.0)));
  const __m256d a45 = add(splat(1.0 / 24.0), mul(r, splat(1.0 / 120.0)));
  const __m256d a67 = add(splat(1.0 / 720.0), mul(r, splat(1.0 / 5040.0)));
  const __m256d a89 = add(splat(1.0 / 40320.0), mul(r, splat(1.0 / 362880.0)));
  const __m256d a1011 = add(splat(1.0 / 3628800.0), mul(r, splat(1.0 / 39916800.0)));
  const __m256d b0 = add(a01, mul(r2, a23)), b1 = add(a45, mul(r2, a67)), b2 = add(a89, mul(r2, a1011));
  const __m256d p = add(add(b0, mul(r4, b1)), mul(r8, b2));
  const __m256i k64 = _mm256_cvtepi32_epi64(_mm256_cvttpd_epi32(k));  // exact: k is an integer
  __m256d res = mul(p, pow2_bits(_mm256_add_epi64(k64, _mm256_set1_epi64x(1023))));
  const __m256d k_high = _mm256_cmp_pd(k, splat(1023.0), _CMP_GT_OQ);
  if (_mm256_movemask_pd(k_high)) {  // p * pow2i(1023) * pow2i(k - 1023)
    res = select(k_high, res, mul(mul(p, splat(0x1p1023)), pow2_bits(k64)));
  }
  const __m256d k_low = _mm256_cmp_pd(k, splat(-1022.0), _CMP_LT_OQ);
  if (_mm256_movemask_pd(k_low)) {  // p * (2^(k+600) * 2^-600), pow2i's two factors
    const __m256d two_k = mul(pow2_bits(_mm256_add_epi64(k64, _mm256_set1_epi64x(600 + 1023))), splat(0x1p-600));
    res = select(k_low, res, mul(p, two_k));
  }
  res = select(is_over, res, splat(__builtin_inf()));
  res = select(is_under, res, zero);
  return select(is_nan, res, x);
}

// tanh_d for four lanes.
ZT_AVX2 inline __m256d tanh4(__m256d x) {
  const __m256d zero = _mm256_setzero_pd(), one = splat(1.0), sign = splat(-0.0);
  const __m256d is_nan = _mm256_cmp_pd(x, x, _CMP_UNORD_Q);
  const __m256d is_neg = _mm256_cmp_pd(x, zero, _CMP_LT_OQ);
  // a = x < 0 ? -x : x (so a keeps the sign of -0.0, as the scalar code does).
  const __m256d a = select(is_neg, x, _mm256_xor_pd(x, sign));
  const __m256d is_small = _mm256_cmp_pd(a, splat(0.0625), _CMP_LT_OQ);
  const __m256d is_large = _mm256_cmp_pd(a, splat(20.0), _CMP_GT_OQ);
  __m256d t = sub(one, _mm256_div_pd(splat(2.0), add(exp4(mul(splat(2.0), a)), one)));
  if (_mm256_movemask_pd(is_small)) {
    const __m256d a2 = mul(a, a);
    __m256d p = splat(21844.0 / 6081075.0);
    p = sub(mul(p, a2), splat(1382.0 / 155925.0));
    p = add(mul(p, a2), splat(62.0 / 2835.0));
    p = sub(mul(p, a2), splat(17.0 / 315.0));
    p = add(mul(p, a2), splat(2.0 / 15.0));
    p = sub(mul(p, a2), splat(1.0 / 3.0));
    t = select(is_small, t, add(a, mul(a, mul(p, a2))));
  }
  t = select(is_large, t, one);
  t = select(is_neg, t, _mm256_xor_pd(t, sign));
  return select(is_nan, t, x);
}

// Floats widen exactly to double and the result rounds once to float (nearest even), as the
// scalar wrappers' static_casts do. Two vectors per step give the out-of-order core independent
// chains to overlap.
template <__m256d (*F)(__m256d)>
ZT_AVX2 inline std::size_t run_f(const float* x, float* y, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256d v0 = F(_mm256_cvtps_pd(_mm_loadu_ps(x + i)));
    const __m256d v1 = F(_mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
    _mm_storeu_ps(y + i, _mm256_cvtpd_ps(v0));
    _mm_storeu_ps(y + i + 4, _mm256_cvtpd_ps(v1));
  }
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm256_cvtpd_ps(F(_mm256_cvtps_pd(_mm_loadu_ps(x + i)))));
  return i;
}

ZT_AVX2 void exp_f_avx2(const float* x, float* y, std::size_t n) {
  const std::size_t i = run_f<exp4>(x, y, n);
  exp_f_scalar(x + i, y + i, n - i);
}
ZT_AVX2 void tanh_f_avx2(const float* x, float* y, std::size_t n) {
  const std::size_t i = run_f<tanh4>(x, y, n);
  tanh_f_scalar(x + i, y + i, n - i);
}
#undef ZT_AVX2
#else
bool cpu_has_avx2() { return false; }
void exp_f_avx2(const float* x, float* y, std::size_t n) { exp_f_scalar(x, y, n); }
void tanh_f_avx2(const float* x, float* y, std::size_t n) { tanh_f_scalar(x, y, n); }
#endif

}  // namespace

bool math_array_uses_avx2() { return cpu_has_avx2() && !g_scalar_only.load(std::memory_order_relaxed); }

void set_math_array_scalar_only(bool scalar_only) { g_scalar_only.store(scalar_only, std::memory_order_relaxed); }

void exp_f_n(const float* x, float* y, std::size_t n) {
  if (math_array_uses_avx2()) return exp_f_avx2(x, y, n);
  exp_f_scalar(x, y, n);
}
void tanh_f_n(const float* x, float* y, std::size_t n) {
  if (math_array_uses_avx2()) return tanh_f_avx2(x, y, n);
  tanh_f_scalar(x, y, n);
}

}  // namespace zt::kernels
