// chapter-04 — the collectives on N thread-ranks of one process: what each rank holds before and
// after all-reduce, reduce-scatter, all-gather and broadcast; the bytes each rank sent and
// received (the Collective's own counters next to the closed forms); all-reduce shown to be
// reduce-scatter followed by all-gather, bit for bit; and why the order of a sum matters
// (rank order, the canonical tree, Gloo's ring). It is a demonstration, not a benchmark
// (zero-collbench measures bandwidth with ranks as processes). What every rank holds alike, after
// comparing it, is printed once; --all-ranks prints it rank by rank.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "collective/thread_ranks.h"
#include "core/check.h"
#include "core/cli.h"
#include "reduce/canonical_tree.h"

namespace {

using zt::CollKind;
using zt::CommStats;

// The order-sensitive pattern: 1e8 is far beyond fp32's 24-bit integer range (its spacing there
// is 8), so 1e8 + 1 rounds back to 1e8 and the result depends on which operands meet first.
constexpr float kPattern[4] = {1e8f, 1.0f, -1e8f, 1.0f};

float readable_input(int rank, std::size_t i) { return 100.0f * (rank + 1) + static_cast<float>(i); }
float order_input(int rank, std::size_t i) { return kPattern[(rank + i) % 4]; }
// Leaf j of element i in the composition demo (section 7): period 3, so that blocks of 3 leaves
// (not a power of two) visibly break the composition while blocks of 2 keep it.
constexpr float kLeafPattern[3] = {1e8f, 1.0f, -1e8f};
float leaf_value(std::size_t j, std::size_t i) { return kLeafPattern[(j + i) % 3]; }

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Everything one rank saw; filled on its thread, printed by the main thread.
struct RankView {
  std::vector<float> input, all_reduced, shard, gathered, broadcast;
  std::vector<float> order_det, order_fast, composed;
  CommStats det_stats, fast_stats;
};

// A deliberately failing rank (--fail-rank): "quit" leaves before its first collective (its
// connections close, peers notice within milliseconds); "stall" stays alive but says nothing for longer
// than the timeout (peers give up after the timeout and name it).
struct Failure {
  int rank = -1;
  std::string how = "quit";
  std::chrono::milliseconds timeout{0};
};

RankView run_rank(const zt::ThreadGroup& det_group, const zt::ThreadGroup& fast_group, int r, std::size_t count,
                  int root, const Failure& failure) {
  zt::GlooCollective det(det_group.for_rank(r));
  zt::GlooCollective fast(fast_group.for_rank(r));
  // The failure is meant to happen at the first collective, not during the connections: a rank
  // that quit while a peer was still connecting would be reported as a failed rendezvous. So each
  // rank says it is connected, and the failing rank waits until every rank has said so.
  const auto& store = det_group.base.store;
  const std::string connected = det_group.base.prefix + "/connected/";
  store->set(connected + std::to_string(r), {'1'});
  if (r == failure.rank) {
    std::vector<std::string> all;
    for (int q = 0; q < det.size(); ++q) all.push_back(connected + std::to_string(q));
    store->wait(all, failure.timeout + std::chrono::seconds(30));
    if (failure.how == "stall") std::this_thread::sleep_for(failure.timeout + std::chrono::milliseconds(500));
    ZT_FAIL("rank ", r, " was told to ", failure.how, " before its first collective (--fail-rank)");
  }
  const int n = det.size();
  const auto counts = zt::balanced_counts(count, n);
  RankView v;
  for (std::size_t i = 0; i < count; ++i) v.input.push_back(readable_input(r, i));

  v.all_reduced = v.input;
  det.all_reduce(std::span<float>(v.all_reduced));
  v.shard.resize(counts[r]);
  det.reduce_scatter_v(std::span<const float>(v.input), std::span<float>(v.shard), counts);
  v.gathered.resize(count);
  det.all_gather_v(std::span<const float>(v.shard), std::span<float>(v.gathered), counts);
  v.broadcast = v.input;
  det.broadcast(std::span<float>(v.broadcast), root);

  std::vector<float> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = order_input(r, i);
  v.order_det = v.order_fast = order;
  det.all_reduce(std::span<float>(v.order_det));
  fast.all_reduce(std::span<float>(v.order_fast));

  // Rank r owns the aligned block of leaves {2r, 2r+1}: it sums them itself (the perfect tree
  // over 2 leaves), then the ranks reduce their block sums along the tree over N.
  v.composed.resize(count);
  for (std::size_t i = 0; i < count; ++i)
    v.composed[i] = zt::canonical_sum(std::vector<float>{leaf_value(2 * r, i), leaf_value(2 * r + 1, i)});
  det.all_reduce(std::span<float>(v.composed));

  v.det_stats = det.stats();
  v.fast_stats = fast.stats();
  return v;
}

void print_row(const char* label, int rank, const std::vector<float>& values) {
  std::printf("%s %d:", label, rank);
  for (float x : values) std::printf(" %.9g", double(x));
  std::printf("\n");
}

// One buffer of every rank (sections 2, 4, 5). Bits that every rank holds alike are printed once,
// as "every rank (bitwise equal):", after comparing them; otherwise, or with --all-ranks, one row
// per rank.
void print_rows(const std::vector<RankView>& views, std::vector<float> RankView::*buffer, bool all_ranks) {
  const std::vector<float>& first = views[0].*buffer;
  bool equal = true;
  for (const RankView& v : views)
    for (std::size_t i = 0; i < first.size(); ++i) equal = equal && same_bits((v.*buffer)[i], first[i]);
  if (equal && !all_ranks) {
    std::printf("every rank (bitwise equal):");
    for (float x : first) std::printf(" %.9g", double(x));
    std::printf("\n");
    return;
  }
  for (std::size_t r = 0; r < views.size(); ++r) print_row("rank", static_cast<int>(r), views[r].*buffer);
}

// Closed forms of the bytes one rank sends/receives (S_q = bytes of rank q's range, S their sum),
// written from the algorithms' definitions (see the chapter README, "Accounting").
struct Bytes {
  uint64_t sent = 0, received = 0;
};
Bytes alltoall_reduce_scatter_bytes(const std::vector<uint64_t>& sq, int r) {
  uint64_t s = 0;
  for (uint64_t b : sq) s += b;
  return {s - sq[r], (sq.size() - 1) * sq[r]};  // every range but mine out; mine from N-1 peers in
}
Bytes ring_all_gather_bytes(const std::vector<uint64_t>& sq, int r) {
  uint64_t s = 0;
  for (uint64_t b : sq) s += b;
  const int n = static_cast<int>(sq.size());
  return {s - sq[(r + 1) % n], s - sq[r]};  // the ring never forwards the next rank's own range
}
Bytes binomial_broadcast_bytes(uint64_t s, int n, int r, int root) {
  const int v = (r - root + n) % n;
  uint64_t children = 0;
  for (int step = 1; step < n; step *= 2) children += (v < step && v + step < n);
  return {children * s, v == 0 ? 0 : s};
}

// One row of section 8: a counter of one rank and the closed form it should equal.
struct ByteRow {
  CollKind kind;
  const char* mode;
  zt::CollCounters counter;
  Bytes formula;
  bool operator==(const ByteRow& o) const {
    return counter.calls == o.counter.calls && counter.bytes_sent == o.counter.bytes_sent &&
           counter.bytes_received == o.counter.bytes_received && formula.sent == o.formula.sent &&
           formula.received == o.formula.received;
  }
};

std::vector<ByteRow> byte_rows(const RankView& view, const std::vector<uint64_t>& sq, int r, int root) {
  const int n = static_cast<int>(sq.size());
  uint64_t s = 0;
  for (uint64_t b : sq) s += b;
  const Bytes rs = alltoall_reduce_scatter_bytes(sq, r), ag = ring_all_gather_bytes(sq, r);
  const Bytes bc = binomial_broadcast_bytes(s, n, r, root);
  // The deterministic all-reduce ran three times on the same S (sections 2, 6, 7).
  const Bytes ar{3 * (rs.sent + ag.sent), 3 * (rs.received + ag.received)};
  const uint64_t ring = 2 * (s - s / n);  // two passes of N-1 chunks of S/N
  const uint64_t header = 48 * static_cast<uint64_t>(n - 1);
  const CommStats& d = view.det_stats;
  const CommStats& f = view.fast_stats;
  return {
      {CollKind::all_reduce, "deterministic", d[CollKind::all_reduce], ar},
      {CollKind::reduce_scatter, "deterministic", d[CollKind::reduce_scatter], rs},
      {CollKind::all_gather, "deterministic", d[CollKind::all_gather], ag},
      {CollKind::broadcast, "deterministic", d[CollKind::broadcast], bc},
      {CollKind::call_check, "deterministic", d[CollKind::call_check], {6 * header, 6 * header}},
      {CollKind::all_reduce, "fast", f[CollKind::all_reduce], {ring, ring}},
  };
}

void print_byte_row(const ByteRow& row, const std::string& rank) {
  std::printf("%-15s %-14s %4s %5llu %8llu %8llu %13llu %13llu\n", zt::coll_kind_name(row.kind), row.mode, rank.c_str(),
              static_cast<unsigned long long>(row.counter.calls),
              static_cast<unsigned long long>(row.counter.bytes_sent),
              static_cast<unsigned long long>(row.counter.bytes_received),
              static_cast<unsigned long long>(row.formula.sent), static_cast<unsigned long long>(row.formula.received));
}

// Each rank's counters next to the closed forms. A row that is the same on every rank (counters
// and formulas compared) is printed once, as rank "all"; the others, or all of them with
// --all-ranks (then rank by rank), one row per rank.
void print_bytes(const std::vector<RankView>& views, std::size_t count, int root, bool all_ranks) {
  const int n = static_cast<int>(views.size());
  const auto counts = zt::balanced_counts(count, n);
  std::vector<uint64_t> sq;
  for (std::size_t c : counts) sq.push_back(c * sizeof(float));
  const uint64_t s = count * sizeof(float);
  std::printf("S = %llu bytes; ranges S_q:", static_cast<unsigned long long>(s));
  for (uint64_t b : sq) std::printf(" %llu", static_cast<unsigned long long>(b));
  std::printf("\n%-15s %-14s %4s %5s %8s %8s %13s %13s\n", "kind", "mode", "rank", "calls", "sent", "received",
              "formula_sent", "formula_recv");
  std::vector<std::vector<ByteRow>> rows;
  for (int r = 0; r < n; ++r) rows.push_back(byte_rows(views[r], sq, r, root));
  if (all_ranks) {
    for (int r = 0; r < n; ++r)
      for (const ByteRow& row : rows[r]) print_byte_row(row, std::to_string(r));
  } else {
    for (std::size_t k = 0; k < rows[0].size(); ++k) {
      bool same = true;
      for (int r = 1; r < n; ++r) same = same && rows[r][k] == rows[0][k];
      if (same) print_byte_row(rows[0][k], "all");
      for (int r = 0; r < n && !same; ++r) print_byte_row(rows[r][k], std::to_string(r));
    }
  }
  std::printf(
      "(even split: reduce-scatter and all-gather each (N-1)/N S = %.6g bytes, all-reduce "
      "2(N-1)/N S = %.6g per call)\n",
      double(n - 1) / n * double(s), 2.0 * (n - 1) / n * double(s));
}

void print_order(const std::vector<RankView>& views, std::size_t count) {
  const int n = static_cast<int>(views.size());
  std::printf("%3s %-*s %8s %12s %12s %14s %12s\n", "i", 13 * n, " inputs (rank 0..N-1)", "exact", "rank_order",
              "canonical", "deterministic", "fast");
  std::vector<std::size_t> differ;
  bool det_is_tree = true, fast_agrees = true;
  for (std::size_t i = 0; i < count; ++i) {
    std::vector<float> leaves;
    double exact = 0;
    for (int q = 0; q < n; ++q) {
      leaves.push_back(order_input(q, i));
      exact += order_input(q, i);  // exact: integers well inside double's 53 bits
    }
    float running = leaves[0];
    for (int q = 1; q < n; ++q) running += leaves[q];  // ((x0+x1)+x2)+...
    const float tree = zt::canonical_sum(leaves);
    std::printf("%3zu ", i);
    for (float x : leaves) std::printf("%13.9g", double(x));
    std::printf(" %8.9g %12.9g %12.9g %14.9g %12.9g%s\n", exact, double(running), double(tree),
                double(views[0].order_det[i]), double(views[0].order_fast[i]),
                same_bits(views[0].order_det[i], views[0].order_fast[i]) ? "" : "  <- differs");
    for (const RankView& v : views) {
      det_is_tree = det_is_tree && same_bits(v.order_det[i], tree);
      fast_agrees = fast_agrees && same_bits(v.order_fast[i], views[0].order_fast[i]);
    }
    if (!same_bits(views[0].order_det[i], views[0].order_fast[i])) differ.push_back(i);
  }
  std::printf("deterministic == canonical tree on every rank, bitwise: %s\n", det_is_tree ? "yes" : "no");
  std::printf("fast result identical on every rank: %s\n", fast_agrees ? "yes" : "no");
  std::printf("positions where deterministic and fast differ (%zu of %zu):", differ.size(), count);
  for (std::size_t i : differ) std::printf(" %zu", i);
  std::printf("\n");
  if (n < 3) std::printf("(with N < 3 there is only one way to add: x0, or x0 + x1)\n");
}

void print_composition(const std::vector<RankView>& views, std::size_t count) {
  const std::size_t n = views.size();
  std::printf("%3s %14s %14s %6s %14s %14s %6s\n", "i", "one_rank_2N", "ranks_x2_AR", "equal", "one_rank_3N",
              "blocks_of_3", "equal");
  std::size_t equal2 = 0, equal3 = 0;
  for (std::size_t i = 0; i < count; ++i) {
    std::vector<float> all2, all3, blocks3;
    for (std::size_t j = 0; j < 2 * n; ++j) all2.push_back(leaf_value(j, i));
    for (std::size_t j = 0; j < 3 * n; ++j) all3.push_back(leaf_value(j, i));
    for (std::size_t q = 0; q < n; ++q)
      blocks3.push_back(zt::canonical_sum(std::vector<float>(all3.begin() + 3 * q, all3.begin() + 3 * q + 3)));
    const float one2 = zt::canonical_sum(all2), one3 = zt::canonical_sum(all3);
    const float split3 = zt::canonical_sum(blocks3);
    bool ok2 = true;
    for (const RankView& v : views) ok2 = ok2 && same_bits(v.composed[i], one2);
    equal2 += ok2;
    equal3 += same_bits(one3, split3);
    std::printf("%3zu %14.9g %14.9g %6s %14.9g %14.9g %6s\n", i, double(one2), double(views[0].composed[i]),
                ok2 ? "yes" : "no", double(one3), double(split3), same_bits(one3, split3) ? "yes" : "no");
  }
  std::printf("aligned blocks of 2: %zu of %zu positions equal; unaligned blocks of 3: %zu of %zu\n", equal2, count,
              equal3, count);
}

// Each rank's fate after a deliberate failure; always ends in a zt::Error (non-zero exit).
template <typename Outcomes>
void report_failure(const Outcomes& outcomes, const Failure& failure, double seconds) {
  const int n = static_cast<int>(outcomes.size());
  std::printf("== Failure demo: rank %d told to %s; timeout %lld ms; every rank returned after %.2f s\n", failure.rank,
              failure.how.c_str(), static_cast<long long>(failure.timeout.count()), seconds);
  int failed = 0;
  for (int r = 0; r < n; ++r) {
    failed += !outcomes[r].ok();
    std::printf("rank %d: %s\n", r, outcomes[r].ok() ? "finished normally" : outcomes[r].error.c_str());
  }
  std::fflush(stdout);
  ZT_FAIL(failed, " of ", n, " ranks stopped with an error after rank ", failure.rank, " was told to ", failure.how,
          " (--fail-rank)");
}

}  // namespace

int main(int argc, char** argv) {
  return zt::run_main("chapter-04", [&] {
    int64_t ranks = 4, count = 8, timeout_s = 30, fail_rank = -1;
    std::string fail_how = "quit";
    bool all_ranks = false;
    zt::ArgParser args("chapter-04", "The collectives on N thread-ranks: results, bytes, and why order matters.");
    args.add_int("ranks", &ranks, "number of thread-ranks N", 1, 16);
    args.add_int("count", &count, "fp32 elements per buffer, all printed", 1, 64);
    args.add_int("timeout", &timeout_s, "collective timeout in seconds", 1, 600);
    args.add_int("fail-rank", &fail_rank, "make this rank fail, to see what the others report (-1: none)", -1, 15);
    args.add_choice("fail-how", &fail_how, {"quit", "stall"},
                    "quit: leave before the first collective; stall: stay silent past the timeout");
    args.add_flag("all-ranks", &all_ranks,
                  "print every rank's rows, also where all ranks hold the same bits (sections 2, 4, 5, 8)");
    if (!args.parse(argc, argv)) return 0;
    ZT_CHECK(fail_rank < ranks, "--fail-rank ", fail_rank, " is not a rank of ", ranks);
    const int n = static_cast<int>(ranks);
    const std::size_t len = static_cast<std::size_t>(count);
    const int root = n - 1;
    const auto timeout = std::chrono::seconds(timeout_s);
    const auto det_group = zt::thread_group(n, zt::ReduceMode::deterministic, timeout);
    const auto fast_group = zt::thread_group(n, zt::ReduceMode::fast, timeout);
    const Failure failure{static_cast<int>(fail_rank), fail_how, timeout};
    const auto t0 = std::chrono::steady_clock::now();
    auto outcomes =
        zt::run_thread_ranks(n, [&](int r) { return run_rank(det_group, fast_group, r, len, root, failure); });
    if (failure.rank >= 0)
      report_failure(outcomes, failure, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::vector<RankView> views;
    for (int r = 0; r < n; ++r) {
      ZT_CHECK(outcomes[r].ok(), "rank ", r, ": ", outcomes[r].error);
      views.push_back(std::move(*outcomes[r].value));
    }
    const auto counts = zt::balanced_counts(len, n);
    const auto offsets = zt::offsets_of(counts);

    // Blank lines part the three lessons: the calls (1-5), the order of a sum (6-7), the bytes (8).
    std::printf(
        "chapter-04: %d thread-ranks (Gloo TCP over loopback, one in-memory store), %zu fp32 "
        "elements per buffer\n",
        n, len);
    std::printf("== 1. Inputs: rank r holds x_r[i] = 100(r+1) + i\n");
    for (int r = 0; r < n; ++r) print_row("rank", r, views[r].input);
    std::printf("== 2. all_reduce (sum, deterministic): every rank gets sum_r x_r[i] = 50N(N+1) + N i\n");
    print_rows(views, &RankView::all_reduced, all_ranks);
    std::printf("== 3. reduce_scatter: rank r keeps the sum of its range only\n");
    std::printf("counts:");
    for (std::size_t c : counts) std::printf(" %zu", c);
    std::printf("   (balanced_counts: the first %zu %% %d ranks take one more; no padding)\n", len, n);
    for (int r = 0; r < n; ++r) {
      std::printf("rank %d: range [%zu,%zu)", r, offsets[r], offsets[r] + counts[r]);
      for (float x : views[r].shard) std::printf(" %.9g", double(x));
      std::printf("\n");
    }
    std::printf("== 4. all_gather of those ranges: every rank gets all of them\n");
    print_rows(views, &RankView::gathered, all_ranks);
    bool rs_ag = true;
    for (int r = 0; r < n; ++r)
      for (std::size_t i = 0; i < len; ++i) rs_ag = rs_ag && same_bits(views[r].gathered[i], views[r].all_reduced[i]);
    std::printf("all_reduce == reduce_scatter then all_gather, bitwise on every rank: %s\n", rs_ag ? "yes" : "no");
    std::printf("== 5. broadcast from root %d: every rank gets the root's input\n", root);
    print_rows(views, &RankView::broadcast, all_ranks);
    std::printf("\n== 6. Order matters: rank q, element i holds (1e8, 1, -1e8, 1)[(q + i) mod 4]\n");
    print_order(views, len);
    std::printf("== 7. Composition: leaf j of element i is (1e8, 1, -1e8)[(j + i) mod 3]\n");
    print_composition(views, len);
    std::printf("\n== 8. Bytes per rank: the Collective's counters next to the closed forms\n");
    print_bytes(views, len, root, all_ranks);
    return 0;
  });
}
