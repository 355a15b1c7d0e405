// zero/step_program.h — one ZeRO step of a rank as data: the list of operations its plan implies,
// in the order the engine performs them, each naming the buffers it allocates and frees.
//
// A step is the model's passes (forward and backward of each micro-batch) and, between the
// model's calls to its ParamProvider (model/param_provider.h: acquire, release, grad,
// param_grad_done, grad_done), what the engine does in answer: stage 3 issues a unit's all-gather
// --prefetch uses ahead (schedule/gather_window.h); stages 2-3 open a unit's reduction at its
// first finished parameter and issue its buckets as they fill (schedule/buckets.h), at most
// kBucketsInFlight at once; a finished reduction lands in the unit's canonical sum
// (reduce/canonical_tree.h: each `add` is one merge of the tree, freeing its right operand), or a
// 16-bit gradient replaces the step's 16-bit sum; with --grad-sync step the whole sum is reduced
// once, after the last micro-batch. Which of these a program contains is the stage's (S_p, S_g,
// S_o) and the schedule, decided once in make_zero_plan; a reader sees it here as operations.
//
// The memory prediction walks this list (predict/zero_trace.h: every allocation and release,
// in order, as --memory-trace records them) and zero-plan / zero-train --print-step print it. Not
// here yet: the optimizer step's collectives and the update (after the sums), the pipeline's
// sends and receives (a pipeline stage's passes follow schedule::stage_order), the traffic inside
// a pass (tensor parallelism's all-reduces, P_a's gathers) and the offload tiers' copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "zero/zero_plan.h"

namespace zt::zero {

/// What an operation does.
enum class OpKind : uint8_t {
  pass,            ///< the model runs the forward (or backward) pass of micro-batch `micro`
  acquire,         ///< the model reads unit `unit`'s parameters (stage 3: waits for its gather)
  release,         ///< ... and is done with them (stage 3: the gathered copy is freed)
  grad,            ///< the model asks for unit `unit`'s 16-bit gradient output
  param_done,      ///< parameter `param` of unit `unit` has its whole gradient (stage 2 buckets)
  grad_done,       ///< unit `unit`'s gradient output is complete
  all_gather,      ///< stage 3: unit `unit` gathered from its shards, into a buffer of its own
  open_reduction,  ///< unit `unit`'s reduction opens: the buffer its result lands in
  reduce_scatter,  ///< bucket `bucket` of unit `unit` reduce-scattered to its owners
  all_reduce,      ///< unit `unit` (or bucket `bucket`) all-reduced
  wait,            ///< reductions in flight complete; their buffers are freed
  accumulate,      ///< a micro-batch's gradient of unit `unit` becomes a leaf of its canonical sum
  add,             ///< one merge of unit `unit`'s canonical tree: the right operand is freed
  keep16,          ///< a 16-bit gradient of unit `unit` replaces the step's 16-bit sum
  step_sync,       ///< --grad-sync step: unit `unit`'s whole FP32 sum reduced once, in place
  free,            ///< buffers released (the step's sums at its end, a gradient output)
};

/// The name printed for an operation. @param k the kind. @return e.g. "reduce_scatter".
const char* op_name(OpKind k);

/// One arena block the program allocates.
struct ProgramBuffer {
  std::string category;   ///< its ledger category
  std::size_t bytes = 0;  ///< requested bytes (0: no block, as the arena allocates none)
  int unit = -1;          ///< the unit it belongs to
};

/// One operation.
struct Op {
  OpKind kind = OpKind::pass;    ///< what it does
  int unit = -1;                 ///< the unit it concerns (-1: none)
  int micro = -1;                ///< pass: the micro-batch of this rank (0 .. A-1)
  bool forward = true;           ///< pass: forward (true) or backward
  int bucket = -1;               ///< reduce_scatter / all_reduce: the bucket in issue order
  int param = -1;                ///< param_done: the parameter's manifest index
  std::size_t bytes = 0;         ///< collectives: the payload, elements × width (the unit's or bucket's)
  std::vector<uint32_t> allocs;  ///< buffers allocated as it starts, in order
  std::vector<uint32_t> frees;   ///< buffers released as it ends, in order
};

/// A rank's step (or evaluation) as operations over buffers.
struct StepProgram {
  std::vector<ProgramBuffer> buffers;  ///< indexed by Op::allocs / Op::frees
  std::vector<Op> ops;                 ///< in the engine's order
};

/// The operations of one training step of this rank.
/// @param p the rank's plan. @param overlap --overlap on (a unit's reduction completes when the
/// next unit opens; off: at once). @return the program.
StepProgram step_program(const ZeroPlan& p, bool overlap);

/// The operations of one held-out evaluation of this rank (stage 3: the forward passes' gathers;
/// empty when nothing is gathered). @param p the plan. @param rounds R, the held-out rounds.
/// @return the program.
StepProgram eval_program(const ZeroPlan& p, std::size_t rounds);

/// The program for a reader: one line per operation (its index, what, which unit, micro-batch or
/// bucket, the bytes it moves, the buffers it allocates (+) and frees (-), and the live bytes
/// after it, counting from `live_at_start`). @param p the program. @param live_at_start bytes
/// live before it (the set-up's). @return the text.
std::string print_program(const StepProgram& p, std::size_t live_at_start);

}  // namespace zt::zero
