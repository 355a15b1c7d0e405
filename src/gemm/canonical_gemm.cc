// gemm/canonical_gemm.cc — the canonical GEMM's CPU paths: K-blocking around gemm/pack.h's packing,
// and one register-blocked microkernel per instruction set, each lane one output element's fma chain.
//
// Blocking (BLIS-style, Goto & van de Geijn 2008): op(B) is packed KC x NR panel by panel and op(A)
// MR x KC tile by tile, zero-padded at the edges (padding produces outputs that are thrown away,
// never terms of a kept one); the microkernel keeps an MR x NR tile of C in registers and runs k in
// increasing order. For the second and later KC blocks the tile is loaded from C, where the first
// block left the FP32 partial: the chain continues exactly (no extra rounding), so K-blocking is
// invisible in the bits. Every path computes c = fma(a, b, c) per lane and k: the bits are the
// definition's (gemm/canonical_dot.h) whatever the path, the blocking or the alignment.
#include "gemm/canonical_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/check.h"
#include "core/cpu_pool.h"
#include "gemm/canonical_dot.h"
#include "gemm/pack.h"

namespace zt::gemm {
namespace {

constexpr int64_t kKc = 256;  // k per packed block: an A tile and a B panel stay in L1/L2
constexpr int64_t kMc = 96;   // rows of A packed at once (a multiple of both MRs below)

std::atomic<int> g_forced{-1};  // -1: not forced by set_canonical_isa()

Isa isa_from_env_or_cpu() {
  if (const char* e = std::getenv("ZT_GEMM_ISA"); e && *e) {
    const std::string s(e);
    for (const Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512})
      if (s == isa_name(isa)) {
        ZT_CHECK(isa_supported(isa), "ZT_GEMM_ISA=", s, ": this CPU does not support it");
        return isa;
      }
    ZT_FAIL("ZT_GEMM_ISA=", s, " is not one of scalar, avx2, avx512");
  }
  if (isa_supported(Isa::avx512)) return Isa::avx512;
  if (isa_supported(Isa::avx2)) return Isa::avx2;
  return Isa::scalar;
}

// ---- the scalar path: the definition, row by row (k outer, j inner: the same chain per element)
void gemm_scalar(const Operand& A, const Operand& B, int64_t m, int64_t n, int64_t k, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float a = A.at(i, p);
      for (int64_t j = 0; j < n; ++j) row[j] = fmaf(a, B.at(p, j), row[j]);
    }
  }
}

// ---- packing: gemm/pack.h (op(A) into MR-row tiles, op(B) into NR-column panels; copies only)

// ---- microkernels: an MR x NR tile of C, k in increasing order; `first` starts the chain at +0,
// otherwise it continues from the partial in C
__attribute__((target("avx2,fma"))) void micro_avx2(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                                    bool first) {
  constexpr int MR = 6;
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(c + r * ldc);
    acc[r][1] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(c + r * ldc + 8);
  }
  for (int64_t q = 0; q < kc; ++q) {
    const __m256 b0 = _mm256_loadu_ps(b + q * 16), b1 = _mm256_loadu_ps(b + q * 16 + 8);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + q * MR + r);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    _mm256_storeu_ps(c + r * ldc, acc[r][0]);
    _mm256_storeu_ps(c + r * ldc + 8, acc[r][1]);
  }
}

// AVX-512: 12 rows x 32 columns, 24 of the 32 vector registers as accumulators, so each step of k
// makes 24 FMAs per two loads of B and twelve broadcasts of A (16 per two and eight at 8 x 32). On
// a Xeon host with AVX-512 the larger tile, with a change of packing, took the model's products
// from 0.69-0.95x OpenBLAS's SkylakeX kernel to 0.74-1.07x (chapter 13). The tile's shape changes
// who computes an element, never its chain over k.
__attribute__((target("avx512f"))) void micro_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                                     bool first) {
  constexpr int MR = 12;
  __m512 acc[MR][2];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc);
    acc[r][1] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc + 16);
  }
  for (int64_t q = 0; q < kc; ++q) {
    const __m512 b0 = _mm512_loadu_ps(b + q * 32), b1 = _mm512_loadu_ps(b + q * 32 + 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(a[q * MR + r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    _mm512_storeu_ps(c + r * ldc, acc[r][0]);
    _mm512_storeu_ps(c + r * ldc + 16, acc[r][1]);
  }
}

using Micro = void (*)(int64_t, const float*, const float*, float*, int64_t, bool);

// The blocked driver around one microkernel. Edge tiles run on a full-size scratch tile (its
// padding rows/columns computed and discarded) and only the valid part is copied in or out.
void gemm_blocked(const Operand& A, const Operand& B, int64_t m, int64_t n, int64_t k, float* c, int64_t ldc,
                  int64_t MR, int64_t NR, Micro micro) {
  const int64_t nc = n;  // the model's N fit one packed B (at most a few MB)
  thread_local std::vector<float> bpack, apack;
  const int64_t n_panels = (nc + NR - 1) / NR;
  bpack.resize(static_cast<std::size_t>(n_panels * NR * std::min(k, kKc)));
  apack.resize(static_cast<std::size_t>(kMc * std::min(k, kKc)));
  float edge[12 * 32];  // the largest MR x NR below
  for (int64_t p0 = 0; p0 < k; p0 += kKc) {
    const int64_t kc = std::min(kKc, k - p0);
    const bool first = p0 == 0;
    pack_b(B, p0, kc, 0, nc, NR, bpack.data());
    for (int64_t i0 = 0; i0 < m; i0 += kMc) {
      const int64_t mc = std::min(kMc, m - i0);
      pack_a(A, i0, mc, p0, kc, MR, apack.data());
      for (int64_t jr = 0; jr < nc; jr += NR) {
        const int64_t cols = std::min(NR, nc - jr);
        const float* bp = bpack.data() + (jr / NR) * kc * NR;
        for (int64_t ir = 0; ir < mc; ir += MR) {
          const int64_t rows = std::min(MR, mc - ir);
          const float* ap = apack.data() + (ir / MR) * kc * MR;
          float* ct = c + (i0 + ir) * ldc + jr;
          if (rows == MR && cols == NR) {
            micro(kc, ap, bp, ct, ldc, first);
            continue;
          }
          if (!first)
            for (int64_t r = 0; r < rows; ++r)
              std::memcpy(edge + r * NR, ct + r * ldc, static_cast<std::size_t>(cols) * sizeof(float));
          micro(kc, ap, bp, edge, NR, first);
          for (int64_t r = 0; r < rows; ++r)
            std::memcpy(ct + r * ldc, edge + r * NR, static_cast<std::size_t>(cols) * sizeof(float));
        }
      }
    }
  }
}

// ---- the triangular product: element (i, j) chains over k in [lo(i), hi(i)), lanes along j
template <typename Lane>
void trmm_rows(const Operand& A, bool trans, int64_t m, int64_t n, const float* src, int64_t lds, float* dst,
               int64_t ldd, Lane lane) {
  for (int64_t i = 0; i < m; ++i) {
    const int64_t lo = trans ? i : 0, hi = trans ? m : i + 1;
    lane(A, i, lo, hi, n, src, lds, dst + i * ldd);
  }
}

void lane_scalar(const Operand& A, int64_t i, int64_t lo, int64_t hi, int64_t n, const float* src, int64_t lds,
                 float* out) {
  for (int64_t j = 0; j < n; ++j) out[j] = 0.0f;
  for (int64_t p = lo; p < hi; ++p) {
    const float a = A.at(i, p);
    for (int64_t j = 0; j < n; ++j) out[j] = fmaf(a, src[p * lds + j], out[j]);
  }
}

// The vector lanes keep one accumulator per output element, chained over p in order, as
// lane_scalar does. A single accumulator would wait on its own fused multiply-add each step (a
// latency of about four cycles); a block of independent accumulators across j (never across p)
// keeps the FMA units busy and leaves every element's chain, and so its bits, unchanged.
__attribute__((target("avx2,fma"))) void lane_avx2(const Operand& A, int64_t i, int64_t lo, int64_t hi, int64_t n,
                                                   const float* src, int64_t lds, float* out) {
  constexpr int kBlock = 8;  // 8 accumulators of 8 lanes: 64 columns, an attention head's width
  int64_t j = 0;
  for (; j + 8 * kBlock <= n; j += 8 * kBlock) {
    __m256 acc[kBlock];
    for (int c = 0; c < kBlock; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t p = lo; p < hi; ++p) {
      const __m256 a = _mm256_set1_ps(A.at(i, p));
      const float* s = src + p * lds + j;
      for (int c = 0; c < kBlock; ++c) acc[c] = _mm256_fmadd_ps(a, _mm256_loadu_ps(s + 8 * c), acc[c]);
    }
    for (int c = 0; c < kBlock; ++c) _mm256_storeu_ps(out + j + 8 * c, acc[c]);
  }
  for (; j + 8 <= n; j += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t p = lo; p < hi; ++p)
      acc = _mm256_fmadd_ps(_mm256_set1_ps(A.at(i, p)), _mm256_loadu_ps(src + p * lds + j), acc);
    _mm256_storeu_ps(out + j, acc);
  }
  for (; j < n; ++j) {
    float acc = 0.0f;
    for (int64_t p = lo; p < hi; ++p) acc = fmaf(A.at(i, p), src[p * lds + j], acc);
    out[j] = acc;
  }
}

// AVX-512 has 16 lanes, so a head's 64 columns give only four accumulators per row: too few to
// cover the FMA latency on two ports. Two rows at a time give eight independent chains. Rows i and
// i + 1 chain over ranges that overlap on [L, H); each row runs its own part before L, the shared
// part together with the other row, then its own part after H, so every element still chains over
// p in ascending order, one FMA per step, as lane_scalar does.
template <int C>
__attribute__((target("avx512f"))) inline void chain_avx512(const Operand& A, int64_t i, int64_t p0, int64_t p1,
                                                            const float* s, int64_t lds, __m512* acc) {
  for (int64_t p = p0; p < p1; ++p) {
    const __m512 a = _mm512_set1_ps(A.at(i, p));
    const float* r = s + p * lds;
    for (int c = 0; c < C; ++c) acc[c] = _mm512_fmadd_ps(a, _mm512_loadu_ps(r + 16 * c), acc[c]);
  }
}

/// Columns [0, 16 C) of rows i and, when `two`, i + 1; row r chains over [lo_r, hi_r).
template <int C>
__attribute__((target("avx512f"))) void pair_avx512(const Operand& A, int64_t i, bool two, int64_t lo0, int64_t hi0,
                                                    int64_t lo1, int64_t hi1, const float* s, int64_t lds, float* out0,
                                                    float* out1) {
  __m512 acc0[C], acc1[C];
  for (int c = 0; c < C; ++c) acc0[c] = acc1[c] = _mm512_setzero_ps();
  if (!two) {
    chain_avx512<C>(A, i, lo0, hi0, s, lds, acc0);
  } else {
    const int64_t L = std::max(lo0, lo1), H = std::min(hi0, hi1);
    chain_avx512<C>(A, i, lo0, L, s, lds, acc0);
    chain_avx512<C>(A, i + 1, lo1, L, s, lds, acc1);
    for (int64_t p = L; p < H; ++p) {
      const __m512 a0 = _mm512_set1_ps(A.at(i, p)), a1 = _mm512_set1_ps(A.at(i + 1, p));
      const float* r = s + p * lds;
      for (int c = 0; c < C; ++c) {
        const __m512 b = _mm512_loadu_ps(r + 16 * c);
        acc0[c] = _mm512_fmadd_ps(a0, b, acc0[c]);
        acc1[c] = _mm512_fmadd_ps(a1, b, acc1[c]);
      }
    }
    chain_avx512<C>(A, i, H, hi0, s, lds, acc0);
    chain_avx512<C>(A, i + 1, H, hi1, s, lds, acc1);
    for (int c = 0; c < C; ++c) _mm512_storeu_ps(out1 + 16 * c, acc1[c]);
  }
  for (int c = 0; c < C; ++c) _mm512_storeu_ps(out0 + 16 * c, acc0[c]);
}

__attribute__((target("avx512f"))) void trmm_rows_avx512(const Operand& A, bool trans, int64_t m, int64_t n,
                                                         const float* src, int64_t lds, float* dst, int64_t ldd) {
  for (int64_t i = 0; i < m; i += 2) {
    const bool two = i + 1 < m;
    const int64_t lo0 = trans ? i : 0, hi0 = trans ? m : i + 1;
    const int64_t lo1 = trans ? i + 1 : 0, hi1 = trans ? m : i + 2;
    float* out0 = dst + i * ldd;
    float* out1 = two ? out0 + ldd : nullptr;
    int64_t j = 0;
    for (; j + 64 <= n; j += 64)
      pair_avx512<4>(A, i, two, lo0, hi0, lo1, hi1, src + j, lds, out0 + j, two ? out1 + j : nullptr);
    for (; j + 16 <= n; j += 16)
      pair_avx512<1>(A, i, two, lo0, hi0, lo1, hi1, src + j, lds, out0 + j, two ? out1 + j : nullptr);
    for (; j < n; ++j)
      for (int r = 0; r < (two ? 2 : 1); ++r) {
        float acc = 0.0f;
        for (int64_t p = r ? lo1 : lo0; p < (r ? hi1 : hi0); ++p) acc = fmaf(A.at(i + r, p), src[p * lds + j], acc);
        (r ? out1 : out0)[j] = acc;
      }
  }
}

}  // namespace

const char* isa_name(Isa isa) {
  static constexpr const char* kNames[] = {"scalar", "avx2", "avx512"};  // in the enum's order
  const auto i = static_cast<std::size_t>(isa);
  return i < std::size(kNames) ? kNames[i] : "?";
}

bool isa_supported(Isa isa) {
  if (isa == Isa::avx2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == Isa::avx512) return __builtin_cpu_supports("avx512f");
  return isa == Isa::scalar;
}

Isa canonical_isa() {
  const int forced = g_forced.load(std::memory_order_acquire);
  if (forced >= 0) return static_cast<Isa>(forced);
  static const Isa chosen = isa_from_env_or_cpu();
  return chosen;
}

void set_canonical_isa(Isa isa) {
  ZT_CHECK(isa_supported(isa), "canonical GEMM path ", isa_name(isa), " is not supported by this CPU");
  g_forced.store(static_cast<int>(isa), std::memory_order_release);
}

void gemm_canonical_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                        const float* b, int64_t ldb, float* c, int64_t ldc) {
  ZT_CHECK(m >= 0 && n >= 0 && k >= 0, "gemm_canonical_f32: negative size");
  if (m == 0 || n == 0) return;
  const Operand A{a, lda, trans_a}, B{b, ldb, trans_b};
  if (k == 0) {  // the empty chain: +0
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  const Isa isa = canonical_isa();
  const int64_t MR = isa == Isa::avx512 ? 12 : 6, NR = isa == Isa::avx512 ? 32 : 16;
  const Micro micro = isa == Isa::avx512 ? micro_avx512 : isa == Isa::avx2 ? micro_avx2 : nullptr;  // null: scalar
  // One block of C: rows [i0, i1) x columns [j0, j1), its operands offset to start there.
  const auto block = [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    const Operand Ab{A.trans ? a + i0 : a + i0 * lda, lda, trans_a};
    const Operand Bb{B.trans ? b + j0 * ldb : b + j0, ldb, trans_b};
    float* cb = c + i0 * ldc + j0;
    if (micro)
      gemm_blocked(Ab, Bb, i1 - i0, j1 - j0, k, cb, ldc, MR, NR, micro);
    else
      gemm_scalar(Ab, Bb, i1 - i0, j1 - j0, k, cb, ldc);
  };
  // Threads (core/cpu_pool.h) split C, never k: each thread computes whole elements, each by the
  // chain above, so the bits do not depend on the thread count. C is cut along its longer side in
  // whole register tiles (MR rows or NR columns), and only when a part keeps kMinPartFmas of work:
  // below that, waking a thread costs more than it saves.
  constexpr int64_t kMinPartFmas = int64_t{1} << 18;
  const bool by_rows = m / MR >= n / NR;
  const int64_t tiles = by_rows ? (m + MR - 1) / MR : (n + NR - 1) / NR;
  const int64_t tile_fmas = (by_rows ? MR * n : NR * m) * k;
  parallel_for(tiles, std::max<int64_t>(1, kMinPartFmas / std::max<int64_t>(tile_fmas, 1)),
               [&](int64_t lo, int64_t hi) {
                 if (by_rows)
                   block(lo * MR, std::min(m, hi * MR), 0, n);
                 else
                   block(0, m, lo * NR, std::min(n, hi * NR));
               });
}

void trmm_canonical_f32(bool trans, int64_t m, int64_t n, const float* a, int64_t lda, float* b, int64_t ldb) {
  ZT_CHECK(m >= 0 && n >= 0, "trmm_canonical_f32: negative size");
  if (m == 0 || n == 0) return;
  // B is both input and output: compute from a copy of it
  thread_local std::vector<float> src;
  src.resize(static_cast<std::size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    std::memcpy(src.data() + i * n, b + i * ldb, static_cast<std::size_t>(n) * sizeof(float));
  const Operand A{a, lda, trans};
  const Isa isa = canonical_isa();
  if (isa == Isa::avx512)
    trmm_rows_avx512(A, trans, m, n, src.data(), n, b, ldb);
  else
    trmm_rows(A, trans, m, n, src.data(), n, b, ldb, isa == Isa::avx2 ? lane_avx2 : lane_scalar);
}

}  // namespace zt::gemm
