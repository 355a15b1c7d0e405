// data/counter_hash.h — a counter-based generator: random bits as a pure function of a key.
//
// Data must be reproducible from (seed, step, sample index) alone, so that any rank can make
// exactly its slice of a batch without replaying anyone's random stream. A hash of the key words
// does that; the mixer is SplitMix64's finaliser (Steele, Lea & Flood 2014; fp/random_bits.h's
// splitmix64_mix), applied after each word. Good enough to pick problems and offsets; not a
// cryptographic or a statistical-grade RNG.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "fp/random_bits.h"

namespace zt {

/// Hash of a sequence of key words (order matters). @param words the key.
/// @return 64 random-looking bits.
inline uint64_t hash_key(std::initializer_list<uint64_t> words) {
  uint64_t h = 0x6a09e667f3bcc909ull;  // any fixed start; √2's fraction bits
  for (uint64_t w : words) h = splitmix64_mix(h ^ w);
  return h;
}

}  // namespace zt
