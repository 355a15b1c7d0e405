// predict/zero_trace.cc — a ZeRO rank's arena events predicted from its plan (see zero_trace.h):
// the set-up's allocations (setup_allocations), then a walk over the step's program and the
// held-out evaluation's (zero/step_program.h), each operation's allocations and releases in order.
// Nothing here restates the engine: the program is the one list of what a step does.
#include "predict/zero_trace.h"

#include <string>

#include "predict/zero_memory.h"
#include "zero/step_program.h"

namespace zt::predict {

using namespace zt::zero;

namespace {

/// The arena's numbering: every non-empty allocation takes the next id (memory/arena.cc).
class Recorder {
 public:
  uint64_t allocate(std::size_t bytes, const std::string& category) {
    events_.push_back({true, next_, bytes, category});
    return next_++;
  }
  void release(uint64_t id, std::size_t bytes, const std::string& category) {
    events_.push_back({false, id, bytes, category});
  }
  /// Every operation's allocations, then its releases, in the program's order.
  void walk(const StepProgram& p) {
    std::vector<uint64_t> ids(p.buffers.size());
    for (const Op& op : p.ops) {
      for (uint32_t a : op.allocs) ids[a] = allocate(p.buffers[a].bytes, p.buffers[a].category);
      for (uint32_t f : op.frees) release(ids[f], p.buffers[f].bytes, p.buffers[f].category);
    }
  }
  std::vector<ArenaEvent> take() { return std::move(events_); }

 private:
  std::vector<ArenaEvent> events_;
  uint64_t next_ = 0;
};

}  // namespace

std::vector<ArenaEvent> predicted_trace(const ZeroPlan& p, bool overlap, std::size_t heldout_rounds) {
  Recorder rec;
  for (const auto& a : setup_allocations(p))  // train_zero.cc's allocate(), alive to the end of the run
    if (a.bytes) rec.allocate(a.bytes, a.category);
  rec.walk(step_program(p, overlap));
  rec.walk(eval_program(p, heldout_rounds));
  return rec.take();
}

std::vector<ArenaEvent> gradient_events(const ZeroPlan& p, bool overlap) {
  std::vector<ArenaEvent> events;
  for (auto& e : predicted_trace(p, overlap, 0))
    if (e.category == train::category::grads || e.category == train::category::accum_partials)
      events.push_back(std::move(e));
  return events;
}

std::vector<zero_r::ReplayRegion> md_regions(const ZeroPlan& p, bool overlap) {
  std::vector<zero_r::ReplayRegion> regions;
  // exactly what first-fit needs for this plan's gradient allocations
  regions.push_back({"gradients",
                     {train::category::grads, train::category::accum_partials},
                     zero_r::min_capacity(gradient_events(p, overlap))});
  std::size_t checkpoints = 0;  // allocated once, at set-up
  for (const auto& a : setup_allocations(p))
    if (a.category == train::category::activation_checkpoints) checkpoints += a.bytes;
  if (checkpoints)
    regions.push_back({"checkpoints", {train::category::activation_checkpoints}, Arena::aligned_size(checkpoints)});
  return regions;
}

}  // namespace zt::predict
