// gemm/pack.cc — the canonical GEMM's packing (see the header): the copying cases as memcpy per
// row, the transposing cases as 4 x 4 SSE register transposes.
#include "gemm/pack.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace zt::gemm {
namespace {

std::atomic<bool> g_scalar_only{false};

// out[q * W + x] = src[q * ld + x] for q < kc, x < width; zeros for width <= x < W.
void copy_rows(const float* src, int64_t ld, int64_t width, int64_t W, int64_t kc, float* out) {
  for (int64_t q = 0; q < kc; ++q) {
    std::memcpy(out + q * W, src + q * ld, static_cast<std::size_t>(width) * sizeof(float));
    std::fill(out + q * W + width, out + (q + 1) * W, 0.0f);
  }
}

// The transposing case, one float at a time: out[q * W + r] = src[r * ld + q] for r < rows,
// zeros for rows <= r < W, q < kc.
void transpose_rows_scalar(const float* src, int64_t ld, int64_t rows, int64_t W, int64_t kc, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = src + r * ld;
    for (int64_t q = 0; q < kc; ++q) out[q * W + r] = row[q];
  }
  for (int64_t q = 0; q < kc; ++q) std::fill(out + q * W + rows, out + (q + 1) * W, 0.0f);
}

// The first `width` floats of v (width 1 .. 4) to dst by exact-width stores: a full store would
// spill into the next column's slots, already written by the previous row group.
inline void store_first(float* dst, __m128 v, int64_t width) {
  if (width == 4) return _mm_storeu_ps(dst, v);
  if (width >= 2) {
    _mm_storel_pi(reinterpret_cast<__m64*>(dst), v);
    v = _mm_movehl_ps(v, v);
    dst += 2;
    width -= 2;
  }
  if (width == 1) _mm_store_ss(dst, v);
}

// The same with SSE's 4 x 4 register transpose: for each group of four rows (r0 .. r0 + 3; rows at
// or past `rows` are zero vectors, which writes the padding too) and each four k (q0 .. q0 + 3),
// four row loads, two stages of shuffles (pairs, then halves) and four column stores of the group's
// width. Four, not eight: SSE is in every x86-64 CPU, and the 8 x 8 AVX2 transpose's cross-lane
// shuffles measured slower than this on a Zen 1 EPYC (vperm2f128 is eight micro-ops there). The k
// left after the last whole four are copied one float at a time.
void transpose_rows_sse(const float* src, int64_t ld, int64_t rows, int64_t W, int64_t kc, float* out) {
  const int64_t kc4 = kc - kc % 4;
  for (int64_t r0 = 0; r0 < W; r0 += 4) {
    const int64_t width = std::min<int64_t>(4, W - r0);
    const int64_t live = std::clamp<int64_t>(rows - r0, 0, 4);  // rows of this group inside the matrix
    const float* row[4];
    for (int64_t r = 0; r < 4; ++r) row[r] = r < live ? src + (r0 + r) * ld : nullptr;
    for (int64_t q0 = 0; q0 < kc4; q0 += 4) {
      __m128 v[4];
      for (int64_t r = 0; r < 4; ++r) v[r] = r < live ? _mm_loadu_ps(row[r] + q0) : _mm_setzero_ps();
      const __m128 t0 = _mm_unpacklo_ps(v[0], v[1]), t1 = _mm_unpacklo_ps(v[2], v[3]);
      const __m128 t2 = _mm_unpackhi_ps(v[0], v[1]), t3 = _mm_unpackhi_ps(v[2], v[3]);
      float* dst = out + q0 * W + r0;
      store_first(dst, _mm_movelh_ps(t0, t1), width);
      store_first(dst + W, _mm_movehl_ps(t1, t0), width);
      store_first(dst + 2 * W, _mm_movelh_ps(t2, t3), width);
      store_first(dst + 3 * W, _mm_movehl_ps(t3, t2), width);
    }
    for (int64_t q = kc4; q < kc; ++q)
      for (int64_t r = 0; r < width; ++r) out[q * W + r0 + r] = r < live ? row[r][q] : 0.0f;
  }
}

void transpose_rows(const float* src, int64_t ld, int64_t rows, int64_t W, int64_t kc, float* out) {
  if (!g_scalar_only.load(std::memory_order_relaxed)) return transpose_rows_sse(src, ld, rows, W, kc, out);
  transpose_rows_scalar(src, ld, rows, W, kc, out);
}

}  // namespace

void set_pack_scalar_only(bool scalar_only) { g_scalar_only.store(scalar_only, std::memory_order_relaxed); }

void pack_b(const Operand& B, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t NR, float* out) {
  for (int64_t jr = 0; jr < nc; jr += NR) {
    const int64_t cols = std::min(NR, nc - jr);
    float* panel = out + (jr / NR) * kc * NR;
    if (!B.trans)  // row q of the panel is part of row p0 + q of B
      copy_rows(B.data + p0 * B.ld + j0 + jr, B.ld, cols, NR, kc, panel);
    else  // op(B)[p, j] = B[j, p]: column x of the panel is row j0 + jr + x of B
      transpose_rows(B.data + (j0 + jr) * B.ld + p0, B.ld, cols, NR, kc, panel);
  }
}

void pack_a(const Operand& A, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int64_t MR, float* out) {
  for (int64_t ir = 0; ir < mc; ir += MR) {
    const int64_t rows = std::min(MR, mc - ir);
    float* tile = out + (ir / MR) * kc * MR;
    if (!A.trans)  // row r of the tile is row i0 + ir + r of A
      transpose_rows(A.data + (i0 + ir) * A.ld + p0, A.ld, rows, MR, kc, tile);
    else  // op(A)[i, p] = A[p, i]: the tile's column q is part of row p0 + q of A
      copy_rows(A.data + p0 * A.ld + i0 + ir, A.ld, rows, MR, kc, tile);
  }
}

}  // namespace zt::gemm
