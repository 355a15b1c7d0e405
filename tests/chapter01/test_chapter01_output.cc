// The chapter-01 program's output, checked against values computed here by src/fp: the property
// table, the spacing table, swamping, overflow/underflow, the update loop's conclusions, the
// --spacing-csv file, and the one-line error with non-zero exit for bad flags.
// The program is the build's bin/chapter-01, run by support/run_program.h (absolute path).
#include <catch2/catch.hpp>

#include <algorithm>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fp/format.h"
#include "fp/random_bits.h"
#include "fp/spacing.h"
#include "fp/stochastic_round.h"

#include "support/run_program.h"

using zt::Format;

namespace {

const std::string kProgram = zt::test::bin("chapter-01");

using Run = zt::test::ProgramOutput;

std::string temp_path(const char* tag) {
  char name[] = "/tmp/zt_ch01_XXXXXX";
  const int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  close(fd);
  return std::string(name) + tag;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using zt::test::section;

Run run(const std::string& args) {
  INFO(kProgram << " not found: build it first");
  REQUIRE(access(kProgram.c_str(), X_OK) == 0);
  return zt::test::run_program(kProgram, args);
}

/// The row of a section whose first token is `key`.
std::vector<std::string> row(const std::vector<std::vector<std::string>>& rows, const std::string& key) {
  for (const auto& r : rows)
    if (!r.empty() && r[0] == key) return r;
  FAIL("no row '" << key << "'");
  return {};
}

float num(const std::string& s) { return std::strtof(s.c_str(), nullptr); }

std::string g9(float x) {
  char b[48];
  std::snprintf(b, sizeof b, "%.9g", double(x));
  return b;
}

constexpr Format kFormats[] = {Format::fp32, Format::fp16, Format::bf16};

}  // namespace

TEST_CASE("chapter-01: format properties are src/fp's, printed with 9 digits", "[ch1]") {
  const Run r = run("");
  REQUIRE(r.status == 0);
  const auto rows = section(r.out, 1);
  for (Format f : kFormats) {
    const auto t = row(rows, zt::format_name(f));
    REQUIRE(t.size() == 9);
    CHECK(std::stoi(t[1]) == zt::total_bits(f));
    CHECK(std::stoi(t[2]) == zt::layout(f).exponent_bits);
    CHECK(std::stoi(t[3]) == zt::layout(f).fraction_bits);
    CHECK(std::stoi(t[4]) == zt::exponent_bias(f));
    CHECK(t[5] == g9(zt::largest_normal(f)));
    CHECK(t[6] == g9(zt::smallest_normal(f)));
    CHECK(t[7] == g9(zt::smallest_subnormal(f)));
    CHECK(t[8] == g9(zt::machine_epsilon(f)));
  }
  // the closed forms printed under the table: largest normal, epsilon, smallest subnormal
  for (Format f : kFormats) {
    const auto t = row(rows, std::string(zt::format_name(f)) + ":");
    REQUIRE(t.size() >= 11);
    CHECK(t.back() == g9(zt::smallest_subnormal(f)));
    CHECK(std::find(t.begin(), t.end(), g9(zt::largest_normal(f)) + ",") != t.end());
    CHECK(std::find(t.begin(), t.end(), g9(zt::machine_epsilon(f)) + ",") != t.end());
  }
  CHECK(row(rows, "fp16")[5] == "65504");
  CHECK(row(rows, "fp16")[8] == "0.0009765625");
  CHECK(row(rows, "fp32")[8] == "1.1920929e-07");
}

TEST_CASE("chapter-01: spacing, swamping and overflow tables agree with src/fp", "[ch1]") {
  const Run r = run("");
  REQUIRE(r.status == 0);
  int spacing_rows = 0;
  for (const auto& t : section(r.out, 2)) {
    if (t.size() != 4 || t[0] == "x") continue;
    ++spacing_rows;
    const float x = num(t[0]);
    for (int i = 0; i < 3; ++i) {
      const float s = zt::spacing(x, kFormats[i]);
      if (std::isinf(s))
        CHECK(t[1 + i] == "out-of-range");
      else
        CHECK(num(t[1 + i]) == s);
    }
  }
  CHECK(spacing_rows >= 5);

  const auto swamp = section(r.out, 3);
  for (Format f : kFormats) {
    const auto t = row(swamp, zt::format_name(f));
    REQUIRE(t.size() == 5);
    CHECK(num(t[1]) == zt::round_to_format(1e-5f, f));
    CHECK(num(t[2]) == zt::add_in_format(1.0f, 1e-5f, f));
    CHECK(num(t[3]) == zt::spacing(1.0f, f) / 2);
    CHECK(t[4] == (zt::swamps(1.0f, 1e-5f, f) ? "lost" : "kept"));
  }
  CHECK(row(swamp, "fp16")[4] == "lost");
  CHECK(row(swamp, "bf16")[4] == "lost");
  CHECK(row(swamp, "fp32")[4] == "kept");

  int value_rows = 0;
  for (const auto& t : section(r.out, 4)) {
    if (t.size() != 7) continue;
    ++value_rows;
    for (int i = 0; i < 3; ++i) CHECK(num(t[1 + 2 * i]) == zt::round_to_format(num(t[0]), kFormats[i]));
    if (num(t[0]) == 65520.0f) CHECK(t[4] == "(overflow)");
    if (num(t[0]) == 1e-8f) CHECK(t[4] == "(underflow)");
  }
  CHECK(value_rows >= 5);
  CHECK(r.out.find("fp16 65504 + 65504 = inf") != std::string::npos);
}

TEST_CASE("chapter-01: the update loop stalls in fp16/bf16, progresses in fp32", "[ch1]") {
  const int64_t steps = 3000;
  const float start = 1.0f, update = 2e-4f;
  const uint64_t seed = 5;
  const Run r = run("--steps 3000 --update 2e-4 --start 1 --seed 5");
  REQUIRE(r.status == 0);
  const auto rows = section(r.out, 5);
  for (Format f : kFormats) {
    float w = start;
    int64_t effective = 0;
    for (int64_t i = 0; i < steps; ++i) {
      const float next = zt::add_in_format(w, update, f);
      effective += next != w;
      w = next;
    }
    const auto t = row(rows, zt::format_name(f));
    REQUIRE(t.size() == 5);
    CHECK(num(t[1]) == w);
    CHECK(std::stoll(t[2]) == effective);
    CHECK(std::stoll(t[4]) == steps);
  }
  // the conclusions: both 16-bit formats never move, fp32 moves every step
  CHECK(num(row(rows, "fp16")[1]) == start);
  CHECK(row(rows, "fp16")[2] == "0");
  CHECK(row(rows, "bf16")[2] == "0");
  CHECK(std::stoll(row(rows, "fp32")[2]) == steps);

  // stochastic rounding: the same bits as recomputed here, and progress near the exact sum.
  // Each step's error has variance <= spacing^2 / 4; with the spacing at 2 (the largest w
  // reached) the sum of 3000 steps has sd <= 2^-9 / 2 * sqrt(3000) = 0.054 (fp16), 0.43 (bf16).
  const double exact = double(start) + double(update) * steps;
  for (Format f : {Format::fp16, Format::bf16}) {
    float w = start;
    for (int64_t i = 0; i < steps; ++i) {
      const uint16_t rnd = zt::random16(seed, uint64_t(i));
      const float sum = w + update;
      w = f == Format::fp16 ? zt::float_from_fp16_bits(zt::fp16_bits_stochastic(sum, rnd))
                            : zt::float_from_bf16_bits(zt::bf16_bits_stochastic(sum, rnd));
    }
    const auto t = row(rows, std::string(zt::format_name(f)) + "-stochastic");
    REQUIRE(t.size() == 5);
    CHECK(num(t[1]) == w);
    CHECK(std::stoll(t[2]) > 0);
    const double sd = zt::spacing(2.0f, f) / 2 * std::sqrt(double(steps));
    CHECK(std::fabs(double(w) - exact) <= 5 * sd);
  }
}

TEST_CASE("chapter-01: --spacing-csv writes src/fp's spacing for every power of two", "[ch1]") {
  const std::string path = temp_path(".csv");
  const Run r = run("--spacing-csv " + path);
  REQUIRE(r.status == 0);
  std::istringstream in(slurp(path));
  std::remove(path.c_str());
  std::string line;
  REQUIRE(std::getline(in, line));
  CHECK(line == "magnitude,fp32,fp16,bf16");
  int rows = 0, fp16_cells = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> cell;
    std::stringstream s(line);
    for (std::string c; std::getline(s, c, ',');) cell.push_back(c);
    if (cell.size() == 3) cell.push_back("");  // a trailing empty cell
    REQUIRE(cell.size() == 4);
    const float x = num(cell[0]);
    CHECK(x == zt::pow2f(-149 + rows));
    for (int i = 0; i < 3; ++i) {
      const Format f = kFormats[i];
      const bool inside = x >= zt::smallest_subnormal(f) && x <= zt::largest_normal(f);
      CHECK(cell[1 + i].empty() == !inside);
      if (inside) CHECK(num(cell[1 + i]) == zt::spacing(x, f));
    }
    fp16_cells += !cell[2].empty();
    ++rows;
  }
  CHECK(rows == 277);       // 2^-149 .. 2^127
  CHECK(fp16_cells == 40);  // 2^-24 .. 2^15
}

TEST_CASE("chapter-01: bad input is one line on stderr and a non-zero exit", "[ch1]") {
  for (const char* args :
       {"--bogus", "--steps 12x", "--update abc", "--steps 0", "--steps", "--spacing-csv /nonexistent-dir/x.csv"}) {
    const Run r = run(args);
    INFO("args: " << args << "\nstderr: " << r.err);
    CHECK(r.status != 0);
    CHECK(!r.err.empty());
    CHECK(r.err.find('\n') == r.err.size() - 1);  // exactly one line
  }
}
