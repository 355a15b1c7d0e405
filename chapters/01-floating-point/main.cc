// chapter-01 — precision versus range in fp32, fp16 and bf16, shown with numbers.
//
// Every number printed is computed by src/fp from the formats' bit layouts (fp/format.h,
// fp/spacing.h, fp/stochastic_round.h); nothing is typed in. It is a demonstration, not a
// benchmark, and it links only zt_fp and zt_core. Sections:
//   1. the formats' properties   2. spacing at several magnitudes   3. swamping of 1 + 1e-5
//   4. overflow and underflow     5. an update loop that stalls in 16 bits (and stochastic rounding)
// --spacing-csv FILE writes spacing against magnitude for all three formats (for the notebook).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/check.h"
#include "core/cli.h"
#include "fp/format.h"
#include "fp/random_bits.h"
#include "fp/spacing.h"
#include "fp/stochastic_round.h"

namespace {

using zt::Format;

constexpr Format kFormats[] = {Format::fp32, Format::fp16, Format::bf16};

/// A float as text with enough digits to identify it (%.9g: 9 significant digits).
std::string show(float x) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", double(x));
  return buf;
}

void print_properties() {
  std::printf("== 1. The three formats (sign | exponent | fraction) ==\n");
  std::printf("%-6s %4s %4s %4s %5s  %-16s %-16s %-18s %s\n", "format", "bits", "exp", "frac", "bias", "largest normal",
              "smallest normal", "smallest subnormal", "spacing at 1 (epsilon)");
  for (Format f : kFormats) {
    const zt::FormatLayout l = zt::layout(f);
    std::printf("%-6s %4d %4d %4d %5d  %-16s %-16s %-18s %s\n", zt::format_name(f), zt::total_bits(f), l.exponent_bits,
                l.fraction_bits, zt::exponent_bias(f), show(zt::largest_normal(f)).c_str(),
                show(zt::smallest_normal(f)).c_str(), show(zt::smallest_subnormal(f)).c_str(),
                show(zt::machine_epsilon(f)).c_str());
  }
  // The closed forms behind the row, from the bits alone: with f fraction bits and the bias, the
  // largest normal is (2 - 2^-f)·2^bias, the spacing at 1 is 2^-f and the smallest subnormal
  // 2^(1 - bias - f). Computed here with ldexp, they must equal src/fp's values above.
  for (Format f : kFormats) {
    const int frac = zt::layout(f).fraction_bits, bias = zt::exponent_bias(f);
    std::printf("%s: (2 - 2^-%d)·2^%d = %s, 2^-%d = %s, 2^(1 - %d - %d) = %s\n", zt::format_name(f), frac, bias,
                show(static_cast<float>(std::ldexp(2.0 - std::ldexp(1.0, -frac), bias))).c_str(), frac,
                show(static_cast<float>(std::ldexp(1.0, -frac))).c_str(), bias, frac,
                show(static_cast<float>(std::ldexp(1.0, 1 - bias - frac))).c_str());
  }
  std::printf(
      "Range comes from the exponent bits (bf16 = fp32's 8), precision from the fraction "
      "bits (fp16's 10 beat bf16's 7).\n\n");
}

void print_spacing_table() {
  std::printf("== 2. Spacing: the gap from x to the next value up, in each format ==\n");
  std::printf("%-15s %-16s %-16s %-16s\n", "x", "fp32", "fp16", "bf16");
  for (float x : {1e-6f, 1e-3f, 1.0f, 1000.0f, 65504.0f, 1e6f, 1e30f}) {
    std::printf("%-15s", show(x).c_str());
    for (Format f : kFormats) {
      const float s = zt::spacing(x, f);
      const bool out_of_range = s > zt::largest_normal(Format::fp32);  // spacing() gave inf
      std::printf(" %-16s", out_of_range ? "out-of-range" : show(s).c_str());
    }
    std::printf("\n");
  }
  std::printf(
      "The spacing doubles with every binade: relative precision is constant, absolute is "
      "not.\n\n");
}

void print_swamping(float w, float d) {
  std::printf("== 3. Swamping: w + d computed in each format (w = %s, d = %s) ==\n", show(w).c_str(), show(d).c_str());
  std::printf("%-6s %-16s %-16s %-16s %s\n", "format", "d stored as", "w + d", "half spacing at w", "update");
  for (Format f : kFormats) {
    std::printf("%-6s %-16s %-16s %-16s %s\n", zt::format_name(f), show(zt::round_to_format(d, f)).c_str(),
                show(zt::add_in_format(w, d, f)).c_str(), show(zt::spacing(w, f) / 2).c_str(),
                zt::swamps(w, d, f) ? "lost" : "kept");
  }
  std::printf("An update no larger than half the spacing at w rounds back to w.\n\n");
}

/// What happened to x when stored in f, in a word.
const char* fate(float x, float stored, Format f) {
  if (stored != stored) return "nan";
  if (stored - stored != 0.0f) return "overflow";
  if (stored == 0.0f && x != 0.0f) return "underflow";
  const float a = stored < 0 ? -stored : stored;
  if (a != 0.0f && a < zt::smallest_normal(f)) return "subnormal";
  return stored == x ? "exact" : "rounded";
}

void print_overflow_underflow() {
  std::printf("== 4. Overflow and underflow: x stored in each format ==\n");
  std::printf("%-16s %-28s %-28s %-28s\n", "x", "fp32", "fp16", "bf16");
  const float big = zt::largest_normal(Format::fp16);
  const float halfway = big + zt::spacing(big, Format::fp16) / 2;  // 65520: rounds to inf
  const float xs[] = {big, halfway - 1, halfway, 1e5f, 1e-5f, 1e-7f, 1e-8f, 1e-40f};
  for (float x : xs) {
    std::printf("%-16s", show(x).c_str());
    for (Format f : kFormats) {
      const float s = zt::round_to_format(x, f);
      std::printf(" %-28s", (show(s) + " (" + fate(x, s, f) + ")").c_str());
    }
    std::printf("\n");
  }
  std::printf("fp16 %s + %s = %s\n\n", show(big).c_str(), show(big).c_str(),
              show(zt::add_in_format(big, big, Format::fp16)).c_str());
}

struct LoopResult {
  float final_w;
  int64_t effective;  // steps that changed w
};

/// w <- round_f(w + update), `steps` times, rounding to nearest.
LoopResult nearest_loop(Format f, float start, float update, int64_t steps) {
  LoopResult r{zt::round_to_format(start, f), 0};
  for (int64_t i = 0; i < steps; ++i) {
    const float next = zt::add_in_format(r.final_w, update, f);
    r.effective += next != r.final_w;
    r.final_w = next;
  }
  return r;
}

/// The same loop with the sum formed in float and stored stochastically (random16(seed, step)).
LoopResult stochastic_loop(Format f, float start, float update, int64_t steps, uint64_t seed) {
  LoopResult r{zt::round_to_format(start, f), 0};
  for (int64_t i = 0; i < steps; ++i) {
    const float sum = r.final_w + update;
    const uint16_t rnd = zt::random16(seed, uint64_t(i));
    const float next = f == Format::fp16 ? zt::float_from_fp16_bits(zt::fp16_bits_stochastic(sum, rnd))
                                         : zt::float_from_bf16_bits(zt::bf16_bits_stochastic(sum, rnd));
    r.effective += next != r.final_w;
    r.final_w = next;
  }
  return r;
}

void print_update_loop(float start, float update, int64_t steps, uint64_t seed) {
  std::printf("== 5. An update loop: w = %s, then w += %s, %lld times ==\n", show(start).c_str(), show(update).c_str(),
              (long long)steps);
  std::printf("exact result (double): %.9g\n", double(start) + double(update) * double(steps));
  std::printf("%-17s %-16s %s\n", "format", "final w", "updates that changed w");
  for (Format f : kFormats) {
    const LoopResult r = nearest_loop(f, start, update, steps);
    std::printf("%-17s %-16s %lld of %lld\n", zt::format_name(f), show(r.final_w).c_str(), (long long)r.effective,
                (long long)steps);
  }
  for (Format f : {Format::fp16, Format::bf16}) {
    const LoopResult r = stochastic_loop(f, start, update, steps, seed);
    const std::string label = std::string(zt::format_name(f)) + "-stochastic";
    std::printf("%-17s %-16s %lld of %lld\n", label.c_str(), show(r.final_w).c_str(), (long long)r.effective,
                (long long)steps);
  }
  std::printf(
      "Round-to-nearest drops every update below half the spacing at w, so the 16-bit\n"
      "loops stall; stochastic rounding keeps the sum right on average (seed %llu).\n",
      (unsigned long long)seed);
}

void write_spacing_csv(const std::string& path) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  ZT_CHECK(out != nullptr, "--spacing-csv: cannot open '", path, "' for writing");
  // one row per power of two 2^k (the spacing is constant across a binade); a format's cell is
  // empty where x lies outside its values (below its smallest subnormal or above its largest)
  std::fprintf(out, "magnitude,fp32,fp16,bf16\n");
  for (int k = -149; k <= 127; ++k) {
    const float x = zt::pow2f(k);
    std::fprintf(out, "%.9g", double(x));
    for (Format f : kFormats) {
      const bool inside = x >= zt::smallest_subnormal(f) && x <= zt::largest_normal(f);
      std::fprintf(out, ",%s", inside ? show(zt::spacing(x, f)).c_str() : "");
    }
    std::fprintf(out, "\n");
  }
  const bool ok = std::ferror(out) == 0;
  ZT_CHECK(std::fclose(out) == 0 && ok, "--spacing-csv: writing '", path, "' failed");
}

}  // namespace

int main(int argc, char** argv) {
  return zt::run_main("chapter-01", [&] {
    int64_t steps = 10000, seed = 1;
    double update = 1e-4, start = 1.0;
    std::string csv;
    zt::ArgParser args("chapter-01", "Precision versus range in fp32, fp16 and bf16.");
    args.add_int("steps", &steps, "update-loop length", 1, 100000000);
    args.add_double("update", &update, "the update added each step", -1e30, 1e30);
    args.add_double("start", &start, "the loop's starting weight", -1e30, 1e30);
    args.add_int("seed", &seed, "stream of random bits for stochastic rounding", 0);
    args.add_string("spacing-csv", &csv, "also write spacing vs magnitude for all formats to FILE");
    if (!args.parse(argc, argv)) return 0;

    std::printf("Chapter 1: precision versus range (all values computed by src/fp)\n\n");
    print_properties();
    print_spacing_table();
    print_swamping(1.0f, 1e-5f);
    print_overflow_underflow();
    print_update_loop(float(start), float(update), steps, uint64_t(seed));
    if (!csv.empty()) {
      write_spacing_csv(csv);
      std::printf("\nspacing table written to %s\n", csv.c_str());
    }
    return 0;
  });
}
