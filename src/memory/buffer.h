// memory/buffer.h — a typed array living in an Arena, released when the buffer dies.
//
// This is how modules hold state in a rank's memory: `TypedBuffer<float> m = make_buffer<float>(
// arena, n, "adam_m")`. It is a view plus ownership, nothing more: no resizing, no copying (a copy
// would be a second allocation the ledger must see, so it is spelled out by the caller).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "memory/arena.h"

namespace zt {

/// `count` elements of a trivially copyable T in an arena block. Move-only (the block's moves: a
/// moved-from buffer is empty, an assigned one releases its block first); contents uninitialised.
template <typename T>
class TypedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "arena buffers hold plain values");

 public:
  TypedBuffer() = default;
  /// Wrap an allocation of count * sizeof(T) bytes (its size is the count).
  /// @param block the allocation.
  explicit TypedBuffer(ArenaAllocation block) : block_(std::move(block)) {}

  /// First element (nullptr when empty). @return the pointer.
  T* data() { return reinterpret_cast<T*>(block_.data()); }
  /// First element (nullptr when empty). @return the pointer.
  const T* data() const { return reinterpret_cast<const T*>(block_.data()); }
  /// Number of elements. @return the count.
  std::size_t size() const { return block_.bytes() / sizeof(T); }
  /// Element i (unchecked). @param i index. @return a reference.
  T& operator[](std::size_t i) { return data()[i]; }
  /// Element i (unchecked). @param i index. @return a reference.
  const T& operator[](std::size_t i) const { return data()[i]; }
  /// The elements as a span. @return the span.
  std::span<T> span() { return {data(), size()}; }
  /// The elements as a span. @return the span.
  std::span<const T> span() const { return {data(), size()}; }
  /// Release the storage now; the buffer becomes empty.
  void reset() { block_.reset(); }

 private:
  ArenaAllocation block_;  // count * sizeof(T) bytes: the count is not stored twice
};

/// Allocate `count` elements of T in `arena` under `category` (zt::Error when it does not fit).
/// @param arena the rank's arena. @param count number of elements. @param category ledger name.
/// @return the buffer (uninitialised contents).
template <typename T>
TypedBuffer<T> make_buffer(Arena& arena, std::size_t count, std::string_view category) {
  return TypedBuffer<T>(arena.allocate(count * sizeof(T), category));
}

}  // namespace zt
