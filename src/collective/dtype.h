// collective/dtype.h — the element types a collective moves: fp32, fp16, bf16.
//
// Collectives are written once over (pointer, count, dtype) and exposed to callers through typed
// spans; this enum is the bridge. It is not a tensor dtype system (no shapes, no strides).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "fp/bf16.h"
#include "fp/fp16.h"

namespace zt {

/// Element type of a collective buffer.
enum class DType : uint8_t {
  fp32 = 0,  ///< IEEE binary32 (float)
  fp16 = 1,  ///< IEEE binary16 (zt::fp16)
  bf16 = 2,  ///< bfloat16 (zt::bf16)
};

/// Bytes per element. @param d the dtype. @return 4 for fp32, 2 for fp16 and bf16.
constexpr std::size_t dtype_size(DType d) { return d == DType::fp32 ? 4 : 2; }

/// Lower-case name used in messages. @param d the dtype. @return "fp32", "fp16" or "bf16".
constexpr const char* dtype_name(DType d) { return d == DType::fp32 ? "fp32" : (d == DType::fp16 ? "fp16" : "bf16"); }

/// The DType of a C++ element type; only float, zt::fp16 and zt::bf16 are collective types.
template <typename T>
struct dtype_of;
/// float is fp32.
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::fp32;  ///< the dtype
};
/// zt::fp16 is fp16.
template <>
struct dtype_of<fp16> {
  static constexpr DType value = DType::fp16;  ///< the dtype
};
/// zt::bf16 is bf16.
template <>
struct dtype_of<bf16> {
  static constexpr DType value = DType::bf16;  ///< the dtype
};

/// DType of T (const-stripped). Compile error for any other element type.
template <typename T>
inline constexpr DType dtype_of_v = dtype_of<std::remove_const_t<T>>::value;

static_assert(sizeof(fp16) == 2 && sizeof(bf16) == 2, "16-bit storage types must be 2 bytes");

}  // namespace zt
