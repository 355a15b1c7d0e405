// fp/hd.h — one macro that lets a scalar function compile for both the host and a CUDA device.
//
// Element-wise bodies (conversions, Adam's update, casts) are written once and shared by the CPU
// and GPU paths, so that both round identically. This header is that switch and nothing more.
#pragma once

#if defined(__CUDACC__)
#define ZT_HD __host__ __device__ __forceinline__
#else
#define ZT_HD inline
#endif

namespace zt {
/// Reinterpret the bits of one trivially copyable type as another of the same size. Unlike
/// std::bit_cast it is usable in CUDA device code without relaxed-constexpr flags.
/// @tparam To the target type. @param from the value whose bits are reused.
/// @return the same bits viewed as To.
template <typename To, typename From>
ZT_HD To bit_cast_hd(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast_hd: sizes differ");
  return __builtin_bit_cast(To, from);
}
}  // namespace zt
