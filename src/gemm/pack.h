// gemm/pack.h — packing for the canonical GEMM's blocked CPU paths (gemm/canonical_gemm.cc): op(A)
// into MR-row tiles and op(B) into NR-column panels, k-major, zero-padded past the matrix's edge.
//
// Packing copies values and computes nothing, so no loop order, vector width or instruction set
// here can change a bit of the product: the chains over k (gemm/canonical_dot.h) are the
// microkernels' alone. What it changes is time. Two of the four (operand, transpose) cases turn
// rows of the stored matrix into columns of the packed block (op(A) not transposed, op(B)
// transposed: the Linear layer's X and W^T); done one float at a time they cost several percent of
// a training step (`perf`: 4-9% of the model's time), so they run as 4 x 4 SSE register
// transposes: four rows read along k, four columns written, rows past the edge read as zeros.
// tests/gemm/test_pack.cc checks every path against the layouts documented below, element by element,
// at the widths both microkernels use (MR 6 and 12, NR 16 and 32) and at ragged edges.
// Not here: the microkernels and the blocking loops (gemm/canonical_gemm.cc).
#pragma once

#include <cstdint>

#include "gemm/canonical_dot.h"

namespace zt::gemm {

/// op(B)[p0 + q, j0 + jr + x] for q < kc and x < NR, one panel of kc rows of NR floats per NR
/// columns (panel jr / NR at out + (jr / NR) kc NR); columns past nc are zeros.
/// @param B the operand. @param p0 first k. @param kc k count. @param j0 first column.
/// @param nc columns. @param NR panel width. @param out nc rounded up to NR, times kc, floats.
void pack_b(const Operand& B, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t NR, float* out);

/// op(A)[i0 + ir + r, p0 + q] for q < kc and r < MR, one tile of kc columns of MR floats per MR
/// rows (tile ir / MR at out + (ir / MR) kc MR); rows past mc are zeros.
/// @param A the operand. @param i0 first row. @param mc rows. @param p0 first k. @param kc k count.
/// @param MR tile height. @param out mc rounded up to MR, times kc, floats.
void pack_a(const Operand& A, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int64_t MR, float* out);

/// Force the element-by-element packing (true) or the SSE transposes again (false): for tests that
/// compare the paths. Not thread-safe against concurrent packing.
/// @param scalar_only the choice.
void set_pack_scalar_only(bool scalar_only);

}  // namespace zt::gemm
