// gemm/half_gemm.h — a GEMM whose operands stay 16-bit (fp16 or bf16) and whose result is FP32:
// what `--gemm blas` hands a GPU, where cuBLAS multiplies the 16-bit values on the tensor cores
// with FP32 accumulation (gemm/cuda/blas_gemm_cuda.h), instead of FP32 widenings on the CUDA cores.
//
// The products are the same numbers either way: a bf16 or fp16 value widens to FP32 exactly, and
// the product of two such values is exact in FP32 (8 + 8 or 11 + 11 significant bits). What the
// tensor cores change is the order and grouping of the FP32 sums, which is cuBLAS's own. So the
// host's and the emulated device's form of this GEMM is the host's: widen both operands, then the
// CPU's `--gemm blas` call on the widenings (kernels/blas.h), the host's bits; a GPU's bits are its
// own, the same run after run on one GPU model and toolkit. Not here: the canonical GEMM, which
// keeps FP32 operands so that every product and sum is the CPU's.
#pragma once

#include <cstdint>

namespace zt::gemm {

/// Which 16-bit format both operands hold.
enum class HalfType { fp16, bf16 };

/// One 16-bit operand, row-major: op(X) = X or X^T, row stride ld (in elements).
struct HalfOperand {
  const void* data = nullptr;  ///< fp16 or bf16 values (HalfGemmArgs::type)
  int64_t ld = 0;              ///< row stride of the stored matrix
  bool trans = false;          ///< op(X) = X^T
};

/// C[m,n] = op(A) op(B) in FP32, A and B 16-bit.
struct HalfGemmArgs {
  HalfOperand a;                   ///< op(A), [m,k]
  HalfOperand b;                   ///< op(B), [k,n]
  int64_t m = 0;                   ///< rows of C
  int64_t n = 0;                   ///< columns of C
  int64_t k = 0;                   ///< the summed dimension
  float* c = nullptr;              ///< the result, FP32
  int64_t ldc = 0;                 ///< its row stride
  HalfType type = HalfType::bf16;  ///< both operands' format
};

}  // namespace zt::gemm
