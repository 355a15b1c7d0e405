// Every one of the 2^32 float bit patterns, rounded to fp16 and to bf16 by src/fp, against two
// oracles: the CPU's conversion instructions (F16C, AVX512-BF16) when present, and the double-
// based reference of reference_rounding.h. The reference is slow, so where an instruction exists
// it checks a sample (every 61st block of 8192 patterns, which visits every exponent) and,
// for bf16, all float subnormal inputs: VCVTNEPS2BF16 reads those as zero (DAZ), so it cannot be
// the oracle there. Without the instructions (non-x86 CPUs) the reference checks everything.
//
// The 2^32 range is split over two std::threads; each block is converted into arrays and the
// arrays compared in plain loops the compiler vectorises. Catch2 asserts only in the test thread.
#include <catch2/catch.hpp>

#include <cfenv>
#include <chrono>
#include <cstdio>
#include <thread>

#include "fp/bf16.h"
#include "fp/fp16.h"
#include "hw_convert.h"
#include "reference_rounding.h"

namespace {

constexpr std::size_t kBlock = 8192;
constexpr uint64_t kReferenceStride = 61;  // prime, so sampled blocks fall at varied offsets

struct Tally {
  uint64_t checked = 0, mismatches = 0;
  uint32_t first_bad = 0;  // input pattern of the first mismatch (valid when mismatches > 0)

  void add(const float* in, const uint16_t* mine, const uint16_t* oracle, std::size_t n) {
    uint64_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) bad += mine[i] != oracle[i];  // vectorised compare
    checked += n;
    if (bad == 0) return;
    for (std::size_t i = 0; i < n && mismatches == 0; ++i)
      if (mine[i] != oracle[i]) first_bad = zt::test::float_bits(in[i]);
    mismatches += bad;
  }
};

struct SweepTally {
  Tally fp16_hw, fp16_ref, bf16_hw, bf16_ref;
};

struct Oracles {
  bool f16c, avx512bf16;
};

void sweep(uint64_t lo, uint64_t hi, Oracles hw, SweepTally& t) {
  std::fesetround(FE_TONEAREST);  // per thread: the reference's nearbyint must tie to even
  alignas(64) float in[kBlock];
  alignas(64) uint16_t mine_h[kBlock], mine_b[kBlock], oracle[kBlock];
  for (uint64_t base = lo; base < hi; base += kBlock) {
    for (std::size_t i = 0; i < kBlock; ++i) in[i] = zt::bit_cast_hd<float>(uint32_t(base + i));
    for (std::size_t i = 0; i < kBlock; ++i) mine_h[i] = zt::fp16_bits_from_float(in[i]);
    for (std::size_t i = 0; i < kBlock; ++i) mine_b[i] = zt::bf16_bits_from_float(in[i]);

    const bool float_subnormal_block = (base & 0x7f800000u) == 0;  // zeros and subnormals
    const bool sampled = (base / kBlock) % kReferenceStride == 0;
    if (hw.f16c) {
      zt::test::f16c_fp16_bits(in, oracle, kBlock);
      t.fp16_hw.add(in, mine_h, oracle, kBlock);
    }
    if (!hw.f16c || sampled) {
      for (std::size_t i = 0; i < kBlock; ++i) oracle[i] = zt::test::reference_fp16_bits(in[i]);
      t.fp16_ref.add(in, mine_h, oracle, kBlock);
    }
    if (hw.avx512bf16 && !float_subnormal_block) {
      zt::test::avx512_bf16_bits(in, oracle, kBlock);
      t.bf16_hw.add(in, mine_b, oracle, kBlock);
    }
    if (!hw.avx512bf16 || sampled || float_subnormal_block) {
      for (std::size_t i = 0; i < kBlock; ++i) oracle[i] = zt::test::reference_bf16_bits(in[i]);
      t.bf16_ref.add(in, mine_b, oracle, kBlock);
    }
  }
}

void require_clean(const char* what, const Tally& t) {
  INFO(what << ": " << t.mismatches << " mismatches of " << t.checked << ", first at float bits 0x" << std::hex
            << t.first_bad);
  REQUIRE(t.mismatches == 0);
}

}  // namespace

TEST_CASE("all 2^32 floats: fp16 and bf16 rounding equal the CPU and the reference", "[ch1][fp]") {
  const Oracles hw{zt::test::cpu_has_f16c(), zt::test::cpu_has_avx512bf16()};
  const uint64_t total = 1ull << 32, half = total / 2;
  SweepTally parts[2];
  const auto start = std::chrono::steady_clock::now();
  std::thread second(sweep, half, total, hw, std::ref(parts[1]));
  sweep(0, half, hw, parts[0]);
  second.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  SweepTally sum;
  for (const SweepTally& p : parts) {
    for (auto [into, from] : {std::pair{&sum.fp16_hw, &p.fp16_hw},
                              {&sum.fp16_ref, &p.fp16_ref},
                              {&sum.bf16_hw, &p.bf16_hw},
                              {&sum.bf16_ref, &p.bf16_ref}}) {
      if (into->mismatches == 0) into->first_bad = from->first_bad;
      into->checked += from->checked;
      into->mismatches += from->mismatches;
    }
  }
  std::printf(
      "exhaustive sweep, 2 threads: %.2f s; F16C %s, AVX512-BF16 %s; checked fp16 %llu "
      "by CPU + %llu by reference, bf16 %llu by CPU + %llu by reference\n",
      seconds, hw.f16c ? "used" : "absent", hw.avx512bf16 ? "used" : "absent", (unsigned long long)sum.fp16_hw.checked,
      (unsigned long long)sum.fp16_ref.checked, (unsigned long long)sum.bf16_hw.checked,
      (unsigned long long)sum.bf16_ref.checked);

  require_clean("fp16 vs F16C", sum.fp16_hw);
  require_clean("fp16 vs reference", sum.fp16_ref);
  require_clean("bf16 vs AVX512-BF16", sum.bf16_hw);
  require_clean("bf16 vs reference", sum.bf16_ref);
  // Every pattern met at least one oracle, and the reference path itself was exercised.
  CHECK(sum.fp16_hw.checked + sum.fp16_ref.checked >= total);
  CHECK(sum.bf16_hw.checked + sum.bf16_ref.checked >= total);
  const uint64_t float_subnormals_and_zeros = 2ull << 23;
  CHECK(sum.bf16_ref.checked >= float_subnormals_and_zeros);
  CHECK(sum.fp16_ref.checked >= total / kReferenceStride);
  if (hw.f16c) CHECK(sum.fp16_hw.checked == total);
  if (hw.avx512bf16) CHECK(sum.bf16_hw.checked == total - float_subnormals_and_zeros);
}

TEST_CASE("the double reference reproduces float itself when asked for E=8, M=23", "[ch1][fp]") {
  // A check of the oracle: rounding a float to binary32 must change nothing.
  std::fesetround(FE_TONEAREST);
  uint64_t bad = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += 65521) {
    const float x = zt::bit_cast_hd<float>(uint32_t(b));
    if (x != x) continue;
    bad += zt::test::reference_round_bits(x, 8, 23) != uint32_t(b);
  }
  CHECK(bad == 0);
}
