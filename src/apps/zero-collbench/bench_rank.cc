// zero-collbench/bench_rank.cc — the measuring loop of one rank (see bench_rank.h).
#include "bench_rank.h"

#include <chrono>
#include <fstream>
#include <functional>

#include <gloo/allreduce.h>

#include "collective/gloo_collective.h"
#include "collective/local_reduce.h"
#include "collective/store.h"

namespace zt::collbench {
namespace {

double time_calls(Collective& sync, int iters, const std::function<void()>& call) {
  call();  // warm-up: first-touch of buffers, Gloo's lazy connections
  sync.barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) call();
  float mine = static_cast<float>(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters);
  sync.all_reduce(std::span<float>(&mine, 1), ReduceOp::max);  // slowest rank
  return mine;
}

}  // namespace

void run_bench_rank(const RankPlan& plan, int rank) {
  GlooOptions base;
  base.rank = rank;
  base.size = plan.world;
  base.store = make_store("file:" + plan.store_dir);
  base.timeout = std::chrono::milliseconds(plan.timeout_ms);
  GlooOptions det_opts = base, fast_opts = base;
  det_opts.prefix = "det";
  fast_opts.prefix = "fast";
  fast_opts.mode = ReduceMode::fast;
  GlooCollective det(det_opts);
  GlooCollective fast(fast_opts);
  std::ofstream out;
  if (rank == 0) out.open(plan.results_file, std::ios::app);
  const int n = plan.world;

  for (std::size_t size : plan.sizes) {
    // Whole shards of fp32: the buffer is trimmed to a multiple of N elements (reported as run).
    const std::size_t shard = size / sizeof(float) / n;
    const std::size_t count = shard * n;
    const std::size_t bytes = count * sizeof(float);
    if (shard == 0) continue;
    std::vector<float> full(count, 1.0f), part(shard, 1.0f);
    auto record = [&](const char* op, const char* mode, double s) {
      if (rank == 0) out << op << ' ' << mode << ' ' << n << ' ' << bytes << ' ' << s << '\n' << std::flush;
    };
    for (GlooCollective* c : {&det, &fast}) {
      const char* mode = reduce_mode_name(c->mode());
      record("all_reduce", mode, time_calls(det, plan.iters, [&] { c->all_reduce(std::span<float>(full)); }));
      record("reduce_scatter", mode, time_calls(det, plan.iters, [&] {
               c->reduce_scatter(std::span<const float>(full), std::span<float>(part));
             }));
    }
    // The same ring all-reduce called on Gloo directly: the wrapper's overhead is the difference.
    auto ctx = fast.gloo_context();
    record("all_reduce", "gloo-direct", time_calls(det, plan.iters, [&] {
             gloo::AllreduceOptions o(ctx);
             o.setOutput<float>(full.data(), count);
             o.setReduceFunction(elementwise_fn(DType::fp32, ReduceOp::sum));
             o.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
             o.setTimeout(base.timeout);
             gloo::allreduce(o);
           }));
    // Movement only: the same code in both modes.
    record("all_gather", "any",
           time_calls(det, plan.iters, [&] { det.all_gather(std::span<const float>(part), std::span<float>(full)); }));
    record("broadcast", "any", time_calls(det, plan.iters, [&] { det.broadcast(std::span<float>(full), 0); }));
  }
  det.barrier();
  fast.barrier();
}

std::vector<Row> read_rows(const std::string& path) {
  std::vector<Row> rows;
  std::ifstream in(path);
  Row r;
  while (in >> r.op >> r.mode >> r.world >> r.bytes >> r.seconds) rows.push_back(r);
  return rows;
}

}  // namespace zt::collbench
