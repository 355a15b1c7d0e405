// On GPUs: the NCCL backend (collective/nccl). Ranks are threads, one GPU each, meeting in one
// in-process HashStore. What runs depends on the devices present:
//  0 devices  — nothing; exit 77 (CTest: skipped).
//  1+ devices — the deterministic-reduction kernel against the CPU's reduce_rows_canonical, bit
//               for bit (fp32/fp16/bf16, sum/max, fp32/storage accumulation, 1..8 rows, NaN and
//               inf for max); a communicator of one rank: every case of tests/collective's list,
//               a sub-group of one (ncclCommSplit), call counting; a host pointer refused with a
//               clear error; two ranks on one GPU refused on both ranks, naming the Gloo fallback.
//  2+ devices — N = 2 and N = all devices (at most 8): every case of tests/collective's list
//               (closed forms; deterministic mode bitwise against the independent reference tree,
//               which the CPU canonical reduce equals) in both modes and both accumulations; NaN
//               propagation of max in both modes; the DP x MP grid's groups (members and bitwise
//               sums over each group); byte counts of a deterministic reduce-scatter; a batch
//               of sends and receives between every pair (exact bytes, exact counts); a stalled
//               rank making its peer fail within the timeout with a message naming call and group.
// With 1 device the multi-rank part is reported as skipped, and the program exits 0 if the rest passed.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <latch>
#include <string>
#include <vector>

#include <gloo/rendezvous/hash_store.h>

#include "collective/all_cases.h"
#include "collective/grid.h"
#include "collective/local_reduce.h"
#include "collective/nccl/local_reduce_cuda.h"
#include "collective/nccl/nccl_collective.h"
#include "collective/thread_ranks.h"
#include "device_staged.h"
#include "support/order_sensitive.h"

using namespace zt;
using zt_test::DeviceStaged;

namespace {

int failures = 0, checks = 0;

void expect(bool ok, const std::string& what) {
  ++checks;
  if (!ok) {
    ++failures;
    std::printf("FAIL %s\n", what.c_str());
  }
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Options of rank r in a fresh group of n thread-ranks (one store per group, unique prefix).
struct Group {
  NcclOptions base;
  Group(int n, ReduceMode mode, Accumulation acc = Accumulation::fp32,
        std::chrono::milliseconds timeout = std::chrono::milliseconds(60000)) {
    static std::atomic<int> made{0};
    base.size = n;
    base.mode = mode;
    base.accumulation = acc;
    base.timeout = timeout;
    base.store = std::make_shared<gloo::rendezvous::HashStore>();
    base.prefix = "gpu" + std::to_string(made++);
  }
  NcclOptions rank(int r) const {
    NcclOptions o = base;
    o.rank = r;
    o.local_rank = r;
    return o;
  }
};

// ---- the kernel alone (1 device) ----

template <typename T>
void kernel_case(std::size_t nrows, ReduceOp op, Accumulation acc) {
  const std::size_t n = 1000, stride = n + 3;
  const DType dtype = dtype_of_v<T>;
  const float scale = std::is_same_v<T, float> ? 1.0f : std::ldexp(1.0f, -9);  // 16-bit sums stay finite
  std::vector<T> rows(nrows * stride, T(0.0f));
  for (std::size_t q = 0; q < nrows; ++q) {
    const auto v = zt::test::order_sensitive(n, static_cast<uint32_t>(31 + q));
    for (std::size_t i = 0; i < n; ++i) rows[q * stride + i] = T(v[i] * scale);
    if (op == ReduceOp::max) {  // NaN and inf: max_nan moves them unchanged, so their bits compare too
      rows[q * stride + (7 * q + 3) % n] = T(std::nanf(""));
      rows[q * stride + (11 * q + 5) % n] = T(q % 2 ? -INFINITY : INFINITY);
    }
  }
  auto scratch = rows;
  std::vector<void*> ptrs(nrows);
  for (std::size_t q = 0; q < nrows; ++q) ptrs[q] = scratch.data() + q * stride;
  std::vector<T> cpu(n), gpu(n);
  reduce_rows_canonical(ptrs.data(), nrows, cpu.data(), n, dtype, op, acc);
  zt_test::DeviceBytes d_rows(rows.size() * sizeof(T)), d_out(n * sizeof(T));
  zt_test::to_device(d_rows.get(), rows.data(), rows.size() * sizeof(T));
  nccl::reduce_rows_canonical_cuda(d_rows.get(), stride, nrows, d_out.get(), n, dtype, op, acc, nullptr);
  expect(cudaDeviceSynchronize() == cudaSuccess, "kernel ran");
  zt_test::to_host(gpu.data(), d_out.get(), n * sizeof(T));
  expect(std::memcmp(cpu.data(), gpu.data(), n * sizeof(T)) == 0,
         concat("kernel ", dtype_name(dtype), " ", reduce_op_name(op), acc == Accumulation::storage ? " storage" : "",
                " ", nrows, " rows: bits equal the CPU's reduce_rows_canonical"));
}

void kernel_checks() {
  cudaSetDevice(0);
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::max})
    for (Accumulation acc : {Accumulation::fp32, Accumulation::storage})
      for (std::size_t nrows = 1; nrows <= 8; ++nrows) {
        kernel_case<float>(nrows, op, acc);
        kernel_case<fp16>(nrows, op, acc);
        kernel_case<bf16>(nrows, op, acc);
      }
}

// ---- the case lists of tests/collective on N thread-ranks ----

std::vector<std::string> run_case_list(int n, ReduceMode mode, Accumulation acc, bool check_stats) {
  const auto cases = zt_test::all_cases(n, mode, acc);
  const Group group(n, mode, acc);
  auto out = run_thread_ranks(n, [&](int r) {
    DeviceStaged coll(std::make_unique<NcclCollective>(group.rank(r)));
    auto results = zt_test::run_cases(coll, r, cases);
    coll.barrier();
    return std::make_pair(results, coll.stats());
  });
  std::vector<std::string> problems;
  std::size_t all_reduces = 0;
  for (const auto& c : cases) all_reduces += c.name.rfind("all_reduce", 0) == 0;
  for (int r = 0; r < n; ++r) {
    const std::string who = concat("N=", n, " ", reduce_mode_name(mode), " rank ", r);
    if (!out[r].ok()) {
      problems.push_back(who + " threw: " + out[r].error);
      continue;
    }
    zt_test::find_mismatches(cases, r, out[r].value->first, who, problems);
    if (check_stats && out[r].value->second[CollKind::all_reduce].calls != all_reduces)
      problems.push_back(concat(who, ": stats count ", out[r].value->second[CollKind::all_reduce].calls,
                                " all_reduce calls, ", all_reduces, " were made"));
  }
  return problems;
}

void case_list_checks(int n) {
  const struct {
    ReduceMode mode;
    Accumulation acc;
  } configs[] = {{ReduceMode::deterministic, Accumulation::fp32},
                 {ReduceMode::deterministic, Accumulation::storage},
                 {ReduceMode::fast, Accumulation::fp32}};
  for (const auto& c : configs) {
    const auto problems = run_case_list(n, c.mode, c.acc, true);
    for (std::size_t i = 0; i < problems.size() && i < 10; ++i) std::printf("  %s\n", problems[i].c_str());
    expect(problems.empty(), concat("N=", n, " ", reduce_mode_name(c.mode),
                                    c.acc == Accumulation::storage ? " (storage accumulation)" : "",
                                    ": every collective gives the closed form / reference tree"));
  }
}

// ---- single rank (1 device) ----

void single_rank_checks() {
  case_list_checks(1);
  auto out = run_thread_ranks(1, [&](int) {
    NcclCollective world(Group(1, ReduceMode::deterministic).rank(0));
    auto solo = world.subgroup({0}, "solo");  // ncclCommSplit of a one-rank communicator
    zt_test::DeviceBytes d(4 * sizeof(float));
    const float x[4] = {1, 2, 3, 4};
    zt_test::to_device(d.get(), x, sizeof x);
    solo->all_reduce_async(d.get(), 4, DType::fp32).wait();
    float y[4];
    zt_test::to_host(y, d.get(), sizeof y);
    std::string host_error;
    std::vector<float> host(4);
    try {
      world.all_reduce(std::span<float>(host));
    } catch (const std::exception& e) {
      host_error = e.what();
    }
    return std::make_pair(std::memcmp(x, y, sizeof x) == 0 && solo->stats()[CollKind::all_reduce].calls == 1,
                          host_error);
  });
  expect(out[0].ok() && out[0].value->first,
         "N=1: a sub-group of one (ncclCommSplit) runs and counts its call " + out[0].error);
  expect(out[0].ok() && contains(out[0].value->second, "is not CUDA device memory"),
         "a host pointer is refused with a clear error: " + (out[0].ok() ? out[0].value->second : out[0].error));
}

void same_device_checks() {
  const Group group(2, ReduceMode::deterministic, Accumulation::fp32, std::chrono::milliseconds(20000));
  auto out = run_thread_ranks(2, [&](int r) {
    NcclOptions o = group.rank(r);
    o.local_rank = 0;  // both ranks on GPU 0
    NcclCollective coll(o);
  });
  for (int r = 0; r < 2; ++r)
    expect(!out[r].ok() && contains(out[r].error, "same GPU") &&
               contains(out[r].error, "use the Gloo backend with host staging for ranks sharing a GPU"),
           concat("two ranks on one GPU: rank ", r, " fails clearly: ", out[r].error));
}

// ---- several ranks (2+ devices) ----

void nan_max_checks(int n) {
  for (ReduceMode mode : {ReduceMode::deterministic, ReduceMode::fast}) {
    const Group group(n, mode);
    auto out = run_thread_ranks(n, [&](int r) {
      DeviceStaged coll(std::make_unique<NcclCollective>(group.rank(r)));
      std::vector<float> x(64);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(r * 100 + int(i));
      if (r == n - 1) x[3] = std::nanf("");  // an overflow flag on the last rank only
      if (r == 0) x[5] = INFINITY;
      coll.all_reduce(std::span<float>(x), ReduceOp::max);
      std::vector<float> in(n * 8, float(r)), shard(8);
      if (r == 1) in[0] = std::nanf("");  // lands in rank 0's shard
      coll.reduce_scatter(std::span<const float>(in), std::span<float>(shard), ReduceOp::max);
      return std::make_pair(x, shard);
    });
    for (int r = 0; r < n; ++r) {
      const std::string who = concat(reduce_mode_name(mode), " max, N=", n, " rank ", r);
      if (!out[r].ok()) {
        expect(false, who + " threw: " + out[r].error);
        continue;
      }
      const auto& [x, shard] = *out[r].value;
      bool values = true;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (i != 3 && i != 5) values = values && x[i] == float((n - 1) * 100 + int(i));
      expect(std::isnan(x[3]) && x[5] == INFINITY && values, who + ": all_reduce keeps the NaN and the max");
      expect(r == 0 ? std::isnan(shard[0]) : shard[0] == float(n - 1), who + ": reduce_scatter keeps the NaN");
    }
  }
}

void grid_checks(int n) {
  std::vector<int> mp_sizes;
  for (int nm : {1, 2, n})
    if (n % nm == 0 && std::find(mp_sizes.begin(), mp_sizes.end(), nm) == mp_sizes.end()) mp_sizes.push_back(nm);
  for (int nm : mp_sizes) {
    const Group group(n, ReduceMode::deterministic);
    const std::size_t count = 1001;
    auto out = run_thread_ranks(n, [&](int w) {
      DeviceStaged world(std::make_unique<NcclCollective>(group.rank(w)));
      Grid grid = make_grid(world, GridDims{nm});
      std::vector<std::vector<float>> sums;
      for (Collective* g : {grid.mp.get(), grid.dp.get()}) {
        auto x = zt_test::order_sensitive_inputs(w, count);
        g->all_reduce(std::span<float>(x));
        sums.push_back(x);
      }
      return sums;
    });
    for (int w = 0; w < n; ++w) {
      const std::string who = concat("grid ", n / nm, "x", nm, " world rank ", w);
      if (!out[w].ok()) {
        expect(false, who + " threw: " + out[w].error);
        continue;
      }
      const auto mp = grid_members(GridAxis::mp, n, GridDims{nm}, w);
      const auto dp = grid_members(GridAxis::dp, n, GridDims{nm}, w);
      expect(zt_test::bitwise_mismatches((*out[w].value)[0], zt_test::reference_sums(mp, count)) == 0,
             who + ": MP group sum is the canonical tree over its members, bitwise");
      expect(zt_test::bitwise_mismatches((*out[w].value)[1], zt_test::reference_sums(dp, count)) == 0,
             who + ": DP group sum is the canonical tree over its members, bitwise");
    }
  }
}

void byte_count_checks(int n) {
  const Group group(n, ReduceMode::deterministic);
  const std::size_t shard = 1000;
  auto out = run_thread_ranks(n, [&](int r) {
    DeviceStaged coll(std::make_unique<NcclCollective>(group.rank(r)));
    std::vector<float> in(n * shard, 1.0f), o(shard);
    coll.reduce_scatter(std::span<const float>(in), std::span<float>(o));
    return coll.stats()[CollKind::reduce_scatter];
  });
  const uint64_t want = uint64_t(n - 1) * shard * 4;
  for (int r = 0; r < n; ++r)
    expect(out[r].ok() && out[r].value->calls == 1 && out[r].value->bytes_sent == want &&
               out[r].value->bytes_received == want,
           concat("N=", n, " rank ", r, ": deterministic reduce_scatter counts (N-1)/N S each way ", out[r].error));
}

// Point to point: every rank sends a distinct buffer to every other one and receives from each,
// all in one batch (one NCCL group); the bytes arrive exact and are counted exactly.
void p2p_checks(int n) {
  const Group group(n, ReduceMode::deterministic);
  const auto count_of = [](int from, int to) { return std::size_t(97 + 13 * from + 5 * to); };
  const auto value_of = [](int from, int to, std::size_t i) {
    return float(from * 1000 + to * 100) + 0.25f * float(i);
  };
  auto out = run_thread_ranks(n, [&](int r) {
    DeviceStaged coll(std::make_unique<NcclCollective>(group.rank(r)));
    std::vector<std::vector<float>> mine(n), got(n);
    std::vector<P2pOp> ops;
    for (int q = 0; q < n; ++q) {
      if (q == r) continue;
      mine[q].resize(count_of(r, q));
      for (std::size_t i = 0; i < mine[q].size(); ++i) mine[q][i] = value_of(r, q, i);
      got[q].assign(count_of(q, r), -1.0f);
      ops.push_back(P2pOp::send(mine[q].data(), mine[q].size(), DType::fp32, q));
      ops.push_back(P2pOp::recv(got[q].data(), got[q].size(), DType::fp32, q));
    }
    coll.p2p_async(ops).wait();
    return std::make_pair(got, coll.stats()[CollKind::point_to_point]);
  });
  for (int r = 0; r < n; ++r) {
    const std::string who = concat("p2p N=", n, " rank ", r);
    if (!out[r].ok()) {
      expect(false, who + " threw: " + out[r].error);
      continue;
    }
    bool exact = true;
    uint64_t sent = 0, received = 0;
    for (int q = 0; q < n; ++q) {
      if (q == r) continue;
      const auto& g = out[r].value->first[q];
      for (std::size_t i = 0; i < g.size(); ++i) exact = exact && g[i] == value_of(q, r, i);
      exact = exact && g.size() == count_of(q, r);
      sent += count_of(r, q) * 4;
      received += count_of(q, r) * 4;
    }
    const CollCounters& c = out[r].value->second;
    expect(exact, who + ": every message arrives exact");
    expect(c.calls == 1 && c.bytes_sent == sent && c.bytes_received == received, who + ": bytes counted exactly");
  }
}

void stalled_rank_checks() {
  const auto timeout = std::chrono::milliseconds(3000);
  const Group group(2, ReduceMode::deterministic, Accumulation::fp32, timeout);
  std::latch rank0_done(1);
  const auto t0 = std::chrono::steady_clock::now();
  auto out = run_thread_ranks(2, [&](int r) {
    NcclCollective coll(group.rank(r));
    auto world = coll.subgroup({0, 1}, "pair");  // so the message names a group
    if (r == 1) {                                // stalls: never joins the all-reduce, waits until rank 0 has given up
      rank0_done.wait();
      return std::string();
    }
    zt_test::DeviceBytes d(1024 * sizeof(float));
    std::string error;
    try {
      world->all_reduce_async(d.get(), 1024, DType::fp32).wait();
    } catch (const std::exception& e) {
      error = e.what();
    }
    rank0_done.count_down();
    return error;
  });
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string e = out[0].ok() ? *out[0].value : out[0].error;
  expect(contains(e, "all_reduce #0 on rank 0 of 2 in group pair[0,1]") && contains(e, "3000 ms") &&
             contains(e, "timeout") && contains(e, "aborted"),
         "a stalled peer makes the all-reduce fail with call, group and timeout named: " + e);
  expect(took < 60.0, concat("and nothing hangs (", took, " s)"));
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  std::printf("NCCL backend on %d device(s)\n", devices);
  kernel_checks();
  single_rank_checks();
  same_device_checks();
  if (devices >= 2) {
    std::vector<int> sizes = {2};
    if (devices > 2) sizes.push_back(std::min(devices, 8));
    for (int n : sizes) {
      case_list_checks(n);
      nan_max_checks(n);
      grid_checks(n);
      byte_count_checks(n);
      p2p_checks(n);
    }
    stalled_rank_checks();
  } else {
    std::puts(
        "multi-rank checks need 2+ GPUs: SKIPPED here (1 device); ran the kernel, the 1-rank and the "
        "same-GPU checks");
  }
  std::printf("NCCL backend: %d of %d checks passed\n", checks - failures, checks);
  return failures == 0 ? 0 : 1;
}
