// The chapter-04 program's output, checked against values computed here: closed forms for the
// collectives' results and byte counts, and the canonical tree written independently
// (tests/collective/reference.h, not reduce/canonical_tree.h) for the order and composition demos.
// Each output is read twice: as printed by default (a buffer or a byte row that every rank holds
// alike printed once, as "every rank (bitwise equal):" or rank "all") and with --all-ranks (one row
// per rank), and every rank's values are checked in both.
// Also: a bad flag is one stderr line and a non-zero exit.
// The program is the build's bin/chapter-04, run by support/run_program.h (absolute path). No
// wall-time upper bound speaks about speed: a quitting rank is told from a stalled one by what
// its peers report (a closed connection, not a timeout), and a stall is seen no earlier than the
// timeout.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "collective/reference.h"

#include "support/run_program.h"

namespace {

const std::string kProgram = zt::test::bin("chapter-04");

using Run = zt::test::ProgramOutput;
using zt::test::section;
using zt::test::tokens;

Run run(const std::string& args) {
  INFO(kProgram << " not found: build it first");
  REQUIRE(access(kProgram.c_str(), X_OK) == 0);
  return zt::test::run_program(kProgram, args);
}

using Tokens = std::vector<std::string>;

/// Rows "rank R: v0 v1 ..." of a section, values only, in rank order.
std::vector<Tokens> rank_values(const std::vector<Tokens>& rows, std::size_t skip_after_colon = 0) {
  std::vector<Tokens> out;
  for (const Tokens& t : rows) {
    if (t.size() < 2 || t[0] != "rank") continue;
    REQUIRE(t[1] == std::to_string(out.size()) + ":");
    out.emplace_back(t.begin() + 2 + skip_after_colon, t.end());
  }
  return out;
}

/// A buffer every rank holds (sections 2, 4, 5). By default the program compares the ranks' bits and
/// prints one row "every rank (bitwise equal): v0 v1 ..." (these closed forms are the same on every
/// rank, so that row is required); with --all-ranks, one row "rank R: ..." per rank (required).
/// @return the values, one row per rank.
std::vector<Tokens> every_rank_values(const std::vector<Tokens>& rows, int world, bool all_ranks) {
  if (all_ranks) return rank_values(rows);
  REQUIRE(rank_values(rows).empty());
  std::vector<Tokens> out;
  for (const Tokens& t : rows) {
    if (t.size() < 4 || t[0] != "every") continue;
    REQUIRE(out.empty());  // printed once
    REQUIRE((t[1] == "rank" && t[2] == "(bitwise" && t[3] == "equal):"));
    out.assign(world, Tokens(t.begin() + 4, t.end()));
  }
  return out;
}

std::string g9(double x) {
  char b[48];
  std::snprintf(b, sizeof b, "%.9g", x);
  return b;
}

bool starts_with_digit(const Tokens& t) { return !t.empty() && t[0][0] >= '0' && t[0][0] <= '9'; }

const float kPattern[4] = {1e8f, 1.0f, -1e8f, 1.0f};
const float kLeaves[3] = {1e8f, 1.0f, -1e8f};

float add(float a, float b) { return a + b; }

// Per-rank counts written from the definition: n / N each, the first n % N ranks one more.
std::vector<std::size_t> split(std::size_t n, int world) {
  std::vector<std::size_t> c;
  for (int r = 0; r < world; ++r) c.push_back(n / world + (static_cast<std::size_t>(r) < n % world ? 1 : 0));
  return c;
}

// chapter-04's command line for N ranks of `count` elements; --all-ranks prints every rank's rows
std::string args_of(int n, std::size_t count, bool all_ranks) {
  return "--ranks " + std::to_string(n) + " --count " + std::to_string(count) + (all_ranks ? " --all-ranks" : "");
}

}  // namespace

TEST_CASE("chapter-04: collective results are the closed forms on every rank", "[ch4]") {
  for (auto [n, count] : {std::pair{4, 8}, {3, 5}, {1, 3}, {5, 7}}) {
    for (const bool all_ranks : {false, true}) {
      const std::string args = args_of(n, count, all_ranks);
      INFO(args);
      const Run r = run(args);
      REQUIRE(r.status == 0);
      REQUIRE(r.err.empty());
      const auto input = rank_values(section(r.out, 1));
      const auto reduced = every_rank_values(section(r.out, 2), n, all_ranks);
      const auto gathered = every_rank_values(section(r.out, 4), n, all_ranks);
      const auto broadcast = every_rank_values(section(r.out, 5), n, all_ranks);
      REQUIRE(input.size() == std::size_t(n));
      REQUIRE(reduced.size() == std::size_t(n));
      REQUIRE(gathered.size() == std::size_t(n));
      REQUIRE(broadcast.size() == std::size_t(n));
      for (int q = 0; q < n; ++q) {
        REQUIRE(input[q].size() == std::size_t(count));
        REQUIRE(reduced[q].size() == std::size_t(count));
        REQUIRE(gathered[q].size() == std::size_t(count));
        REQUIRE(broadcast[q].size() == std::size_t(count));
        for (int i = 0; i < count; ++i) {
          CHECK(input[q][i] == g9(100.0 * (q + 1) + i));
          const double sum = 50.0 * n * (n + 1) + double(n) * i;  // sum over q of 100(q+1) + i
          CHECK(reduced[q][i] == g9(sum));
          CHECK(gathered[q][i] == g9(sum));
          CHECK(broadcast[q][i] == g9(100.0 * n + i));  // root is N-1: x_{N-1}[i]
        }
      }
      // reduce-scatter: "counts: c0 c1 ..." then "rank r: range [a,b) values", in both modes.
      const auto rs = section(r.out, 3);
      const auto counts = split(count, n);
      REQUIRE(rs[0][0] == "counts:");
      for (int q = 0; q < n; ++q) CHECK(rs[0][1 + q] == std::to_string(counts[q]));
      const auto shards = rank_values(rs, 2);
      REQUIRE(shards.size() == std::size_t(n));
      std::size_t offset = 0;
      for (int q = 0; q < n; ++q) {
        REQUIRE(shards[q].size() == counts[q]);
        for (std::size_t k = 0; k < counts[q]; ++k)
          CHECK(shards[q][k] == g9(50.0 * n * (n + 1) + double(n) * double(offset + k)));
        offset += counts[q];
      }
      CHECK(r.out.find("all_reduce == reduce_scatter then all_gather, bitwise on every rank: yes") !=
            std::string::npos);
    }
  }
}

TEST_CASE("chapter-04: order demo follows the canonical tree; Gloo's ring differs at N >= 3", "[ch4]") {
  for (int n : {2, 3, 4, 5, 8}) {
    INFO("--ranks " << n);
    const std::size_t count = 8;
    const Run r = run("--ranks " + std::to_string(n) + " --count 8");
    REQUIRE(r.status == 0);
    std::set<std::size_t> fast_differs;
    std::size_t rows = 0;
    for (const Tokens& t : section(r.out, 6)) {
      if (t[0] == "positions") {
        // "positions where deterministic and fast differ (K of 8): i j ..."
        REQUIRE(t.size() >= 9);
        CHECK(t[6] == "(" + std::to_string(fast_differs.size()));
        CHECK(t[8] == std::to_string(count) + "):");
        std::set<std::size_t> listed;
        for (std::size_t k = 9; k < t.size(); ++k) listed.insert(std::stoul(t[k]));
        CHECK(listed == fast_differs);
        continue;
      }
      if (!starts_with_digit(t)) continue;
      const std::size_t i = std::stoul(t[0]);
      REQUIRE(i == rows++);
      REQUIRE(t.size() >= std::size_t(1 + n + 5));
      std::vector<float> leaves;
      double exact = 0;
      for (int q = 0; q < n; ++q) {
        leaves.push_back(kPattern[(q + i) % 4]);
        exact += leaves.back();
        CHECK(t[1 + q] == g9(leaves.back()));
      }
      float running = leaves[0];
      for (int q = 1; q < n; ++q) running = running + leaves[q];
      const float tree = zt_test::reference_tree(leaves, add);
      CHECK(t[1 + n] == g9(exact));
      CHECK(t[2 + n] == g9(running));
      CHECK(t[3 + n] == g9(tree));
      CHECK(t[4 + n] == g9(tree));  // the deterministic all-reduce, rank 0
      const bool marked = t.size() > std::size_t(6 + n);
      CHECK(marked == (t[5 + n] != t[4 + n]));
      if (t[5 + n] != t[4 + n]) fast_differs.insert(i);
    }
    CHECK(rows == count);
    CHECK(r.out.find("deterministic == canonical tree on every rank, bitwise: yes") != std::string::npos);
    CHECK(r.out.find("fast result identical on every rank: yes") != std::string::npos);
    // Two ranks: x0 + x1 == x1 + x0 (IEEE addition commutes), so no order can differ.
    if (n == 2)
      CHECK(fast_differs.empty());
    else
      CHECK(!fast_differs.empty());
  }
}

TEST_CASE("chapter-04: aligned blocks compose with the tree over ranks, blocks of 3 do not", "[ch4]") {
  for (int n : {2, 3, 4, 5}) {
    INFO("--ranks " << n);
    const std::size_t count = 8;
    const Run r = run("--ranks " + std::to_string(n));
    REQUIRE(r.status == 0);
    std::size_t rows = 0, equal3 = 0;
    for (const Tokens& t : section(r.out, 7)) {
      if (!starts_with_digit(t)) continue;
      const std::size_t i = std::stoul(t[0]);
      REQUIRE(i == rows++);
      REQUIRE(t.size() == 7);
      std::vector<float> all2, all3, blocks3;
      for (std::size_t j = 0; j < 2 * std::size_t(n); ++j) all2.push_back(kLeaves[(j + i) % 3]);
      for (std::size_t j = 0; j < 3 * std::size_t(n); ++j) all3.push_back(kLeaves[(j + i) % 3]);
      for (int q = 0; q < n; ++q)
        blocks3.push_back(zt_test::reference_tree({all3[3 * q], all3[3 * q + 1], all3[3 * q + 2]}, add));
      const float one2 = zt_test::reference_tree(all2, add);
      const float one3 = zt_test::reference_tree(all3, add), split3 = zt_test::reference_tree(blocks3, add);
      CHECK(t[1] == g9(one2));
      CHECK(t[2] == g9(one2));  // N ranks x 2 leaves, then the deterministic all-reduce
      CHECK(t[3] == "yes");
      CHECK(t[4] == g9(one3));
      CHECK(t[5] == g9(split3));
      CHECK(t[6] == (zt_test::same_bits(one3, split3) ? "yes" : "no"));
      equal3 += zt_test::same_bits(one3, split3);
    }
    CHECK(rows == count);
    CHECK(equal3 < count);  // the inputs were chosen so that unaligned blocks break the tree
    CHECK(r.out.find("aligned blocks of 2: 8 of 8 positions equal; unaligned blocks of 3: " + std::to_string(equal3) +
                     " of 8") != std::string::npos);
  }
}

TEST_CASE("chapter-04: byte counters equal the closed forms of each algorithm", "[ch4]") {
  // The six rows of one rank, in the order the program prints them.
  const std::pair<std::string, std::string> kinds[] = {
      {"all_reduce", "deterministic"}, {"reduce_scatter", "deterministic"}, {"all_gather", "deterministic"},
      {"broadcast", "deterministic"},  {"call_check", "deterministic"},     {"all_reduce", "fast"}};
  for (auto [n, count] : {std::pair{4, 8}, {3, 5}, {5, 7}, {8, 8}, {1, 3}, {3, 8}}) {
    const auto counts = split(count, n);
    std::vector<uint64_t> sq;
    uint64_t s = 0;
    for (std::size_t c : counts) s += sq.emplace_back(4 * c);
    // Closed forms, S_q = bytes of rank q's range, S = sum: {calls, sent, received} of row k on rank q.
    //  all-to-all reduce-scatter: sends S - S_q, receives its range from N-1 peers;
    //  ring all-gather: sends all but rank q+1's range, receives all but its own;
    //  binomial broadcast from N-1: virtual rank v = q+1 mod N sends S to v+2^k for 2^k > v;
    //  ring all-reduce: 2 (S - floor(S/N)); call check: a 48-byte header to each peer per call.
    auto expected = [&](int k, int q) -> std::array<uint64_t, 3> {
      const uint64_t rs_sent = s - sq[q], rs_recv = (n - 1) * sq[q];
      const uint64_t ag_sent = s - sq[(q + 1) % n], ag_recv = s - sq[q];
      const int v = (q + 1) % n;
      uint64_t children = 0;
      for (int step = 1; step < n; step *= 2) children += (v < step && v + step < n) ? 1 : 0;
      const uint64_t check = 6 * 48 * uint64_t(n - 1), ring = 2 * (s - s / n);
      const std::array<std::array<uint64_t, 3>, 6> rows = {{{3, 3 * (rs_sent + ag_sent), 3 * (rs_recv + ag_recv)},
                                                            {1, rs_sent, rs_recv},
                                                            {1, ag_sent, ag_recv},
                                                            {1, children * s, v == 0 ? 0 : s},
                                                            {0, check, check},  // counted as bytes, not calls
                                                            {1, ring, ring}}};
      return rows[k];
    };
    for (const bool all_ranks : {false, true}) {
      const std::string args = args_of(n, count, all_ranks);
      INFO(args);
      const Run r = run(args);
      REQUIRE(r.status == 0);
      // printed[k][q]: how many rows stood for row k of rank q (a rank "all" row stands for every q).
      std::vector<std::vector<int>> printed(6, std::vector<int>(n, 0));
      std::vector<std::pair<int, int>> order;  // (k, first rank) of each row, as printed
      for (const Tokens& t : section(r.out, 8)) {
        if (t.size() != 8 || t[0] == "kind") continue;
        int k = 0;
        while (k < 6 && !(kinds[k].first == t[0] && kinds[k].second == t[1])) ++k;
        REQUIRE(k < 6);
        const bool every = t[2] == "all";
        REQUIRE(!(every && all_ranks));  // --all-ranks prints each rank's row
        const int q0 = every ? 0 : std::stoi(t[2]);
        REQUIRE((q0 >= 0 && q0 < n));
        order.emplace_back(k, q0);
        for (int q = q0; q < (every ? n : q0 + 1); ++q) {
          const auto e = expected(k, q);
          INFO("row " << t[0] << " " << t[1] << " for rank " << q);
          CHECK(t[3] == std::to_string(e[0]));
          CHECK(t[4] == std::to_string(e[1]));
          CHECK(t[5] == std::to_string(e[2]));
          CHECK(t[6] == std::to_string(e[1]));
          CHECK(t[7] == std::to_string(e[2]));
          ++printed[k][q];
        }
        // One "all" row exactly when the closed forms agree on every rank; else one row per rank.
        bool same = true;
        for (int q = 1; q < n; ++q) same = same && expected(k, q) == expected(k, 0);
        if (!all_ranks) CHECK(every == same);
      }
      for (int k = 0; k < 6; ++k)
        for (int q = 0; q < n; ++q) CHECK(printed[k][q] == 1);  // every rank's every row, once
      // --all-ranks: rank by rank, six rows each; by default: row by row, ranks in order.
      for (std::size_t j = 0; j < order.size(); ++j) {
        if (all_ranks) {
          CHECK(order[j] == std::pair{int(j % 6), int(j / 6)});
        } else if (j > 0) {
          const auto [k0, q0] = order[j - 1];
          const auto [k1, q1] = order[j];
          CHECK((k1 > k0 || (k1 == k0 && q1 == q0 + 1)));
        }
      }
    }
  }
}

TEST_CASE("chapter-04: bad flags are one stderr line and a non-zero exit", "[ch4]") {
  for (const char* args : {"--ranks 0", "--ranks 17", "--count 0", "--count 65", "--count abc", "--ranks", "--bogus 1",
                           "--ranks 4 extra", "--fail-rank 4", "--fail-how crash"}) {
    INFO("args: " << args);
    const Run r = run(args);
    CHECK(r.status != 0);
    CHECK(r.out.empty());
    REQUIRE(!r.err.empty());
    CHECK(r.err.find('\n') == r.err.size() - 1);
    CHECK(r.err.rfind("chapter-04", 0) == 0);
  }
  const Run help = run("--help");
  CHECK(help.status == 0);
  CHECK(help.out.find("--ranks") != std::string::npos);
}

TEST_CASE("chapter-04: a rank that quits or stalls makes every other rank fail, naming it", "[ch5]") {
  for (const char* how : {"quit", "stall"}) {
    INFO("--fail-how " << how);
    const Run r = run(std::string("--ranks 3 --fail-rank 1 --timeout 1 --fail-how ") + how);
    CHECK(r.status != 0);
    REQUIRE(!r.err.empty());
    CHECK(r.err.find('\n') == r.err.size() - 1);  // one error line
    CHECK(r.err.find("3 of 3 ranks stopped with an error") != std::string::npos);
    std::istringstream in(r.out);
    std::string line;
    REQUIRE(std::getline(in, line));
    const Tokens head = tokens(line);
    REQUIRE(head.size() >= 2);
    const double seconds = std::stod(head[head.size() - 2]);  // "... returned after T s"
    // quit: the peers see closed connections at once; stall: they wait the 1 s timeout.
    const bool quit = std::string(how) == "quit";
    if (!quit) CHECK(seconds >= 1.0);  // a stall is detected no earlier than the timeout
    CHECK(seconds < 60.0);             // only guards against a hang
    for (int q : {0, 2}) {
      REQUIRE(std::getline(in, line));
      if (q == 2) REQUIRE(std::getline(in, line));  // skip rank 1's own line
      INFO(line);
      CHECK(line.rfind("rank " + std::to_string(q) + ": all_reduce #0", 0) == 0);
      CHECK(line.find("peer rank(s) 1 did not reach this call (timeout 1000 ms") != std::string::npos);
      // quit: found out from the closed connection, before (not by) the timeout
      if (quit) CHECK((line.find("losed") != std::string::npos || line.find("reset") != std::string::npos));
      if (quit) CHECK(line.find("imed out") == std::string::npos);
    }
  }
}
