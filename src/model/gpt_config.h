// model/gpt_config.h — the shape of a GPT-2-style decoder: V, T, L, H, C, and its validation.
//
// Shape letters, used the same way in every model and kernel file: B micro-batch sequences,
// T context (positions per sequence), C width (channels), H heads, D = C/H head width,
// L layers, V vocabulary, N = B*T positions, Q tensor-parallel blocks (mp_blocks).
#pragma once

#include <cstdint>

namespace zt::model {

/// The sizes that define a GPT (the defaults are the ~10.8M-parameter benchmark model).
struct GptConfig {
  int64_t vocab = 256;    ///< V, vocabulary size (the head's output width)
  int64_t context = 256;  ///< T, positions per sequence (rows of wpe)
  int64_t layers = 6;     ///< L, transformer blocks
  int64_t heads = 6;      ///< H, attention heads per block
  int64_t width = 384;    ///< C, residual stream width (a multiple of H)
  /// Q, the tensor-parallel blocks every split Linear is computed in (model/tensor_parallel.h): a
  /// power of two dividing H; 1 = no split. It is part of the model's numerics: the same Q gives
  /// the same bits on any number of model-parallel ranks, different Q's differ in rounding.
  int64_t mp_blocks = 1;
  /// @param other another configuration. @return whether every size is equal.
  bool operator==(const GptConfig& other) const = default;
};

/// Throw zt::Error (one line naming the field and value) unless every size is positive, C is a
/// multiple of H, Q a power of two dividing H, and the largest tensor fits the 32-bit indices
/// BLAS takes.
/// @param cfg the configuration to check.
void validate(const GptConfig& cfg);

}  // namespace zt::model
