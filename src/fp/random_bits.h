// fp/random_bits.h — a counter-based source of random bits for stochastic rounding.
//
// random16(seed, counter) is a pure function: element i of step s can draw its bits from
// (seed, s * n + i) on any device, in any order, and get the same bits, so a run that rounds
// stochastically is still reproducible bit for bit. The mixer is the SplitMix64 output function
// (Steele, Lea and Flood, 2014). It is not a cryptographic generator and not a std:: engine.
#pragma once

#include <cstdint>

#include "fp/hd.h"

namespace zt {

/// SplitMix64's finaliser: a bijection of 64-bit words that mixes every input bit into every
/// output bit. @param z the word to mix. @return the mixed word.
ZT_HD uint64_t splitmix64_mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;  // the golden-ratio increment of SplitMix64
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// 16 random bits for draw number `counter` of stream `seed`.
/// @param seed selects the stream. @param counter the draw's index within the stream.
/// @return the top 16 bits of the mixed word.
ZT_HD uint16_t random16(uint64_t seed, uint64_t counter) {
  return static_cast<uint16_t>(splitmix64_mix(seed ^ splitmix64_mix(counter)) >> 48);
}

}  // namespace zt
