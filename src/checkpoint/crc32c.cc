// checkpoint/crc32c.cc — CRC-32C by tables and by SSE4.2's crc32 instruction (see crc32c.h).
//
// Representation: a 32-bit register holds a polynomial over GF(2) of degree < 32, reflected — bit
// 31 is the coefficient of x^0, bit 0 that of x^31 — so "multiply by x" is a right shift, XORed
// with the reflected polynomial kPoly when a term falls off the end. Feeding one byte b into the
// register r is r' = (r >> 8) ^ T0[(r ^ b) & 0xFF], T0 being the effect of one byte on an empty
// register. Every table and constant below is computed at compile time from kPoly.
#include "checkpoint/crc32c.h"

#include <array>
#include <bit>
#include <cstring>

#include "checkpoint/manifest.h"
#include "core/check.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace zt::checkpoint {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // Castagnoli's 0x1EDC6F41, bit-reversed

// a · b mod P, both reflected: walk a's terms from x^0 up, adding b · x^i for each one present.
constexpr uint32_t mul_mod_p(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t term = 1u << 31; term != 0; term >>= 1) {
    if (a & term) product ^= b;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;  // b *= x
  }
  return product;
}

// kX2k[k] = x^(2^k) mod P: k = 0..67 covers shifts by up to 2^64 bytes (2^67 bits).
constexpr std::array<uint32_t, 68> make_powers() {
  std::array<uint32_t, 68> p{};
  p[0] = 1u << 30;  // x^1
  for (std::size_t k = 1; k < p.size(); ++k) p[k] = mul_mod_p(p[k - 1], p[k - 1]);
  return p;
}
constexpr auto kX2k = make_powers();

// reg · x^(8 bytes) mod P: x^(8 n) is the product of x^(2^k) over the set bits of n, starting at
// k = 3 (8 = 2^3). Constant at compile time for the fixed shifts of the SSE4.2 path.
constexpr uint32_t shift_bytes(uint32_t reg, uint64_t bytes) {
  for (std::size_t k = 3; bytes != 0; bytes >>= 1, ++k)
    if (bytes & 1) reg = mul_mod_p(kX2k[k], reg);
  return reg;
}

// kSlice[k][b]: the register after byte b and then k zero bytes, starting from 0.
using Tables = std::array<std::array<uint32_t, 256>, 8>;
constexpr Tables make_slices() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t r = b;
    for (int bit = 0; bit < 8; ++bit) r = (r & 1) ? (r >> 1) ^ kPoly : r >> 1;
    t[0][b] = r;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  return t;
}
constexpr Tables kSlice = make_slices();

uint64_t load_le64(const unsigned char* p) {
  static_assert(std::endian::native == std::endian::little, "CRC words are read little-endian");
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

}  // namespace

uint32_t crc32c_portable(const void* data, std::size_t size, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t r = ~crc;
  for (; size > 0 && reinterpret_cast<uintptr_t>(p) % 8 != 0; --size) r = (r >> 8) ^ kSlice[0][(r ^ *p++) & 0xFF];
  for (; size >= 8; size -= 8, p += 8) {
    // the eight bytes as one word: the first byte still has 7 bytes to travel, the last none
    const uint64_t w = load_le64(p) ^ r;
    r = kSlice[7][w & 0xFF] ^ kSlice[6][(w >> 8) & 0xFF] ^ kSlice[5][(w >> 16) & 0xFF] ^ kSlice[4][(w >> 24) & 0xFF] ^
        kSlice[3][(w >> 32) & 0xFF] ^ kSlice[2][(w >> 40) & 0xFF] ^ kSlice[1][(w >> 48) & 0xFF] ^ kSlice[0][w >> 56];
  }
  for (; size > 0; --size) r = (r >> 8) ^ kSlice[0][(r ^ *p++) & 0xFF];
  return ~r;
}

uint32_t crc32c_shift(uint32_t reg, uint64_t bytes) { return shift_bytes(reg, bytes); }

uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t size_b) {
  // The register is linear: running B from state s gives shift(s, |B|) ^ run(B from 0). The
  // all-ones conditioning of crc_a and crc_b cancels in that difference.
  return crc32c_shift(crc_a, size_b) ^ crc_b;
}

#if defined(__x86_64__)

namespace {

// Three streams A, B, C of kStream bytes each run interleaved (the instruction's latency is 3
// cycles, its throughput 1 per cycle); A continues the running register, B and C start from 0.
// Joined: reg(A B C) = shift(reg_A, 2 kStream) ^ shift(reg_B, kStream) ^ reg_C, where each shift
// by a fixed length is a multiplication by a constant, done with table lookups.
constexpr std::size_t kStream = 8192;

// Multiplying by a fixed polynomial K is linear in the register, so it is the XOR of the four
// bytes' contributions: four lookups instead of a 32-step loop.
struct ConstMul {
  std::array<std::array<uint32_t, 256>, 4> t{};
  constexpr explicit ConstMul(uint32_t k) {
    for (std::size_t byte = 0; byte < 4; ++byte)
      for (uint32_t b = 0; b < 256; ++b) t[byte][b] = mul_mod_p(k, b << (8 * byte));
  }
  constexpr uint32_t operator()(uint32_t r) const {
    return t[0][r & 0xFF] ^ t[1][(r >> 8) & 0xFF] ^ t[2][(r >> 16) & 0xFF] ^ t[3][r >> 24];
  }
};

constexpr ConstMul kShift1(shift_bytes(1u << 31, kStream));  // 1u << 31: x^0
constexpr ConstMul kShift2(shift_bytes(1u << 31, 2 * kStream));

__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(const unsigned char* p, std::size_t size, uint32_t crc) {
  uint64_t r = ~crc;
  for (; size > 0 && reinterpret_cast<uintptr_t>(p) % 8 != 0; --size) r = _mm_crc32_u8(static_cast<uint32_t>(r), *p++);
  for (; size >= 3 * kStream; size -= 3 * kStream, p += 3 * kStream) {
    uint64_t r1 = 0, r2 = 0;
    for (std::size_t i = 0; i < kStream; i += 8) {
      r = _mm_crc32_u64(r, load_le64(p + i));
      r1 = _mm_crc32_u64(r1, load_le64(p + kStream + i));
      r2 = _mm_crc32_u64(r2, load_le64(p + 2 * kStream + i));
    }
    r = kShift2(static_cast<uint32_t>(r)) ^ kShift1(static_cast<uint32_t>(r1)) ^ static_cast<uint32_t>(r2);
  }
  for (; size >= 8; size -= 8, p += 8) r = _mm_crc32_u64(r, load_le64(p));
  for (; size > 0; --size) r = _mm_crc32_u8(static_cast<uint32_t>(r), *p++);
  return ~static_cast<uint32_t>(r);
}

}  // namespace

bool crc32c_hardware_available() {
  static const bool available = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") != 0;
  }();
  return available;
}

uint32_t crc32c_hardware(const void* data, std::size_t size, uint32_t crc) {
  ZT_CHECK(crc32c_hardware_available(), "crc32c_hardware: this CPU has no SSE4.2 crc32 instruction");
  return crc32c_sse42(static_cast<const unsigned char*>(data), size, crc);
}

#else

bool crc32c_hardware_available() { return false; }

uint32_t crc32c_hardware(const void*, std::size_t, uint32_t) {
  ZT_FAIL("crc32c_hardware: only x86-64 has the SSE4.2 crc32 instruction");
}

#endif

uint32_t crc32c(const void* data, std::size_t size, uint32_t crc) {
  static const bool hardware = crc32c_hardware_available();
  return hardware ? crc32c_hardware(data, size, crc) : crc32c_portable(data, size, crc);
}

}  // namespace zt::checkpoint
