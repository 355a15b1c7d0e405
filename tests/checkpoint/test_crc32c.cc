// CRC-32C: the published check values, the slicing-by-8 tables and the SSE4.2 instruction against
// a bit-at-a-time reference written here from the definition, and combining two CRCs.
#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "checkpoint/crc32c.h"
#include "checkpoint/manifest.h"

using namespace zt::checkpoint;

namespace {

// The definition, one bit at a time: reflected polynomial 0x82F63B78, all-ones in and out.
uint32_t crc32c_bitwise(const unsigned char* p, std::size_t n) {
  uint32_t r = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    r ^= p[i];
    for (int b = 0; b < 8; ++b) r = (r & 1) ? (r >> 1) ^ 0x82F63B78u : r >> 1;
  }
  return ~r;
}

std::vector<unsigned char> random_bytes(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

}  // namespace

TEST_CASE("crc32c: the published check values", "[ch14]") {
  const std::string check = "123456789";
  CHECK(crc32c_portable(check.data(), check.size()) == 0xE3069283u);
  CHECK(crc32c(check.data(), check.size()) == 0xE3069283u);
  CHECK(crc32c_bitwise(reinterpret_cast<const unsigned char*>(check.data()), check.size()) == 0xE3069283u);
  CHECK(crc32c_portable(nullptr, 0) == 0u);
  // RFC 3720 (iSCSI) B.4: 32 bytes of zeros, of ones, ascending 0..31, descending 31..0
  std::vector<unsigned char> zeros(32, 0), ones(32, 0xFF), up(32), down(32);
  std::iota(up.begin(), up.end(), 0);
  for (int i = 0; i < 32; ++i) down[static_cast<std::size_t>(i)] = static_cast<unsigned char>(31 - i);
  CHECK(crc32c_portable(zeros.data(), 32) == 0x8A9136AAu);
  CHECK(crc32c_portable(ones.data(), 32) == 0x62A8AB43u);
  CHECK(crc32c_portable(up.data(), 32) == 0x46DD794Eu);
  CHECK(crc32c_portable(down.data(), 32) == 0x113FDB5Cu);
  if (crc32c_hardware_available()) {
    CHECK(crc32c_hardware(check.data(), check.size()) == 0xE3069283u);
    CHECK(crc32c_hardware(zeros.data(), 32) == 0x8A9136AAu);
    CHECK(crc32c_hardware(down.data(), 32) == 0x113FDB5Cu);
  } else {
    WARN("no SSE4.2 on this CPU: the hardware path is not checked");
  }
}

TEST_CASE("crc32c: tables, instruction and the definition agree on random buffers", "[ch14]") {
  // sizes around the 8-byte words and the 3 x 8192-byte interleaved blocks, at every alignment
  const auto data = random_bytes(4 * 3 * 8192 + 64, 7);
  std::mt19937_64 rng(11);
  std::vector<std::size_t> sizes = {0, 1, 7, 8, 9, 63, 64, 65, 3 * 8192 - 1, 3 * 8192, 3 * 8192 + 1, 6 * 8192 + 13};
  for (int k = 0; k < 40; ++k) sizes.push_back(rng() % (4 * 3 * 8192));
  for (std::size_t size : sizes)
    for (std::size_t align = 0; align < 8; ++align) {
      INFO("size " << size << ", alignment " << align);
      const unsigned char* p = data.data() + align;
      const uint32_t expected = crc32c_bitwise(p, size);
      CHECK(crc32c_portable(p, size) == expected);
      if (crc32c_hardware_available()) CHECK(crc32c_hardware(p, size) == expected);
      CHECK(crc32c(p, size) == expected);
    }
}

TEST_CASE("crc32c: continuing and combining give the CRC of the concatenation", "[ch14]") {
  const auto data = random_bytes(100000, 3);
  std::mt19937_64 rng(5);
  const uint32_t whole = crc32c_bitwise(data.data(), data.size());
  for (int k = 0; k < 50; ++k) {
    const std::size_t cut = k == 0 ? 0 : (k == 1 ? data.size() : rng() % data.size());
    const std::size_t rest = data.size() - cut;
    const uint32_t a = crc32c_portable(data.data(), cut);
    CHECK(crc32c_portable(data.data() + cut, rest, a) == whole);
    if (crc32c_hardware_available()) CHECK(crc32c_hardware(data.data() + cut, rest, a) == whole);
    CHECK(crc32c_combine(a, crc32c(data.data() + cut, rest), rest) == whole);
  }
  // a shift by n zero bytes is the register after running n zero bytes
  const std::vector<unsigned char> zeros(1000, 0);
  for (uint32_t reg : {0x1u, 0xDEADBEEFu, 0x80000000u})
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{8}, std::size_t{999}}) {
      // crc32c with crc = ~reg starts from register reg; the result is ~(final register)
      CHECK(~crc32c_portable(zeros.data(), n, ~reg) == crc32c_shift(reg, n));
    }
}
