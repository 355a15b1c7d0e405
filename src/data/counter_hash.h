// data/counter_hash.h — a counter-based generator: random bits as a pure function of a key.
//
// Data must be reproducible from (seed, step, sample index) alone, so that any rank can make
// exactly its slice of a batch without replaying anyone's random stream. A hash of the key words
// does that; the mixer is SplitMix64's finaliser (Steele, Lea & Flood 2014), applied after each
// word. Good enough to pick problems and offsets; not a cryptographic or a statistical-grade RNG.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "fp/hd.h"

namespace zt {

/// SplitMix64's finaliser: a bijection of 64-bit words with good avalanche.
/// @param x the word. @return the mixed word.
ZT_HD uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Hash of a sequence of key words (order matters). @param words the key.
/// @return 64 random-looking bits.
inline uint64_t hash_key(std::initializer_list<uint64_t> words) {
  uint64_t h = 0x6a09e667f3bcc909ull;  // any fixed start; √2's fraction bits
  for (uint64_t w : words) h = mix64(h ^ w);
  return h;
}

}  // namespace zt
