// schedule/pipeline.cc — the pipeline's split, stage orders and timeline (see pipeline.h).
#include "schedule/pipeline.h"

#include <algorithm>
#include <sstream>

#include "core/check.h"

namespace zt::schedule {

std::vector<int> balanced_split(int blocks, int stages) {
  ZT_CHECK(stages >= 1, "--pp-size must be >= 1, got ", stages);
  ZT_CHECK(stages <= blocks, "--pp-size ", stages, " is larger than the model's ", blocks,
           " blocks (every stage needs at least one block)");
  std::vector<int> split(stages, blocks / stages);
  for (int s = 0; s < blocks % stages; ++s) ++split[s];
  return split;
}

std::vector<int> parse_pipe_split(const std::string& text, int blocks, int stages) {
  balanced_split(blocks, stages);  // the same range errors for --pp-size
  std::vector<int> split;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    ZT_CHECK(used == item.size() && !item.empty(), "--pp-split: '", item, "' in '", text, "' is not a block count");
    ZT_CHECK(v >= 1, "--pp-split: stage ", split.size(), " gets ", v, " blocks; every stage needs at least one");
    split.push_back(v);
  }
  ZT_CHECK(static_cast<int>(split.size()) == stages, "--pp-split: '", text, "' gives ", split.size(),
           " stages, --pp-size is ", stages);
  int total = 0;
  for (int v : split) total += v;
  ZT_CHECK(total == blocks, "--pp-split: '", text, "' sums to ", total, " blocks, the model has ", blocks);
  return split;
}

std::vector<int> split_offsets(const std::vector<int>& split) {
  std::vector<int> at(split.size() + 1, 0);
  for (std::size_t s = 0; s < split.size(); ++s) at[s + 1] = at[s] + split[s];
  return at;
}

void check_micro_batches(int micro_batches, int stages) {
  ZT_CHECK(micro_batches >= stages, "--pp-size ", stages, " needs at least ", stages,
           " micro-batches per step, the step has ", micro_batches,
           " (global batch / (data-parallel ranks x micro batch)): raise --global-batch or lower --micro-batch");
}

std::vector<PipeOp> stage_order(PipeSchedule schedule, int stages, int stage, int micro_batches) {
  ZT_CHECK(stages >= 1 && stage >= 0 && stage < stages && micro_batches >= 1, "stage_order: stage ", stage, " of ",
           stages, " with ", micro_batches, " micro-batches");
  using K = PipeOp::Kind;
  std::vector<PipeOp> order;
  order.reserve(2 * static_cast<std::size_t>(micro_batches));
  const int m = micro_batches;
  // GPipe is 1F1B with every forward in the warm-up.
  const int warm = schedule == PipeSchedule::gpipe ? m : std::min(stages - 1 - stage, m);
  for (int i = 0; i < warm; ++i) order.push_back({K::forward, i});
  for (int i = 0; i + warm < m; ++i) {
    order.push_back({K::forward, warm + i});
    order.push_back({K::backward, i});
  }
  for (int i = m - warm; i < m; ++i) order.push_back({K::backward, i});
  return order;
}

int peak_in_flight(const std::vector<PipeOp>& order) {
  int now = 0, peak = 0;
  for (const PipeOp& op : order) {
    now += op.kind == PipeOp::Kind::forward ? 1 : -1;
    peak = std::max(peak, now);
  }
  return peak;
}

PipeTimeline simulate(PipeSchedule schedule, int stages, int micro_batches, double t_forward, double t_backward) {
  const int p = stages, m = micro_batches;
  using K = PipeOp::Kind;
  std::vector<std::vector<PipeOp>> orders(p);
  for (int s = 0; s < p; ++s) orders[s] = stage_order(schedule, p, s, m);
  // end time of F(s, i) and B(s, i); < 0 while not yet placed
  std::vector<std::vector<double>> f_end(p, std::vector<double>(m, -1.0)), b_end = f_end;
  std::vector<std::size_t> next(p, 0);
  std::vector<double> free_at(p, 0.0);
  PipeTimeline t;
  t.stages.resize(p);
  // Place, round after round, every stage's next pass whose input is ready; a round that places
  // nothing while passes remain is a deadlock (a stage waits for a pass ordered after its own).
  for (std::size_t placed = 0, total = 2 * static_cast<std::size_t>(p) * m; placed < total;) {
    bool progress = false;
    for (int s = 0; s < p; ++s) {
      if (next[s] == orders[s].size()) continue;
      const PipeOp op = orders[s][next[s]];
      double ready = 0.0;
      if (op.kind == K::forward)
        ready = s == 0 ? 0.0 : f_end[s - 1][op.micro];
      else
        ready = s == p - 1 ? f_end[s][op.micro] : b_end[s + 1][op.micro];
      if (ready < 0.0) continue;
      const double start = std::max(ready, free_at[s]);
      const double end = start + (op.kind == K::forward ? t_forward : t_backward);
      (op.kind == K::forward ? f_end : b_end)[s][op.micro] = end;
      free_at[s] = end;
      t.stages[s].push_back({op, start, end});
      ++next[s];
      ++placed;
      progress = true;
    }
    ZT_CHECK(progress, "pipeline schedule ", word_of(schedule), " deadlocks at P = ", p, ", M = ", m);
  }
  for (int s = 0; s < p; ++s) t.makespan = std::max(t.makespan, free_at[s]);
  const double busy = static_cast<double>(p) * m * (t_forward + t_backward);
  t.bubble_fraction = 1.0 - busy / (static_cast<double>(p) * t.makespan);
  return t;
}

uint64_t pipeline_p2p_bytes(int stages, int micro_batches, uint64_t boundary_bytes) {
  return 2ull * static_cast<uint64_t>(stages - 1) * static_cast<uint64_t>(micro_batches) * boundary_bytes;
}

}  // namespace zt::schedule
