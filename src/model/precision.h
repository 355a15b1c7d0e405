// model/precision.h — the three compute types a model can run in, as a run-time value.
//
// The model is written once as a template on its compute type T (float, zt::fp16, zt::bf16);
// this enum names T where a run-time choice is needed (command lines, memory predictions).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>

#include "core/check.h"
#include "core/words.h"
#include "fp/bf16.h"
#include "fp/fp16.h"

namespace zt::model {

/// A compute type: all-FP32, or 16-bit compute copies with FP32 accumulation.
enum class Precision { fp32, fp16, bf16 };

/// @return the words of --precision, in the order --help lists them.
constexpr auto words(Precision) {
  return std::array{Word{"fp32", Precision::fp32}, Word{"fp16", Precision::fp16}, Word{"bf16", Precision::bf16}};
}

/// Bytes per element of a compute type. @param p the precision. @return 4 or 2.
inline std::size_t bytes_of(Precision p) { return p == Precision::fp32 ? 4 : 2; }

/// The Precision value of a compute type. @return fp32, fp16 or bf16.
template <typename T>
constexpr Precision precision_of() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, fp16> || std::is_same_v<T, bf16>,
                "compute type must be float, zt::fp16 or zt::bf16");
  if constexpr (std::is_same_v<T, float>) {
    return Precision::fp32;
  } else if constexpr (std::is_same_v<T, fp16>) {
    return Precision::fp16;
  } else {
    return Precision::bf16;
  }
}

}  // namespace zt::model
