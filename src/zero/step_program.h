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
// After the passes: the loss over ranks, each unit's step gradient (and with --grad-sync step its
// one reduction), the agreement on the skip and the norm, each unit's update and, with S_o but not
// S_p, the all-gather that shares the updated shard.
//
// The engine runs this list (zero/step_interpreter.h); the memory prediction walks it
// (predict/zero_trace.h: every allocation and release, in order, as --memory-trace records them),
// the traffic model counts its collectives (zero/dp_calls.h), and zero-plan / zero-train
// --print-step print it. On a pipeline stage the passes follow schedule::stage_order, and the
// sends and receives between them are the runner's batches (pipeline/stage_runner.h: a pass's
// sends go with the next pass's receives, then one wait). Not here: the traffic inside a pass
// (tensor parallelism's all-reduces, P_a's gathers) and the offload tiers' copies inside an update.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "zero/zero_plan.h"

namespace zt::zero {

/// No buffer (Op::src, Op::dst).
inline constexpr uint32_t kNoBuffer = ~0u;

/// What an operation does. The first group are the events: the model's calls to its ParamProvider
/// and a pipeline stage's sends and receives (pipeline/stage_runner.h posts them); the engine
/// answers each with the operations that follow it, up to the next event.
enum class OpKind : uint8_t {
  acquire,         ///< the model reads unit `unit`'s parameters: `dst` if gathered, else the stored copy
  release,         ///< ... and is done with them (stage 3: the gathered copy is freed)
  grad,            ///< the model asks for unit `unit`'s gradient output: `dst`, zeroed
  param_done,      ///< parameter `param` of unit `unit` has its whole gradient (stage 2 buckets)
  grad_done,       ///< unit `unit`'s gradient output is complete
  send,            ///< `bytes` to pipeline stage `peer`: micro-batch `micro`'s output or input gradient (unit 0: wte)
  recv,            ///< `bytes` from pipeline stage `peer`, in the same batch as the sends before it
  pass,            ///< the model runs the forward (or backward) pass of micro-batch `micro`
  pass_end,        ///< the model has returned from that pass
  all_gather,      ///< unit `unit` gathered from its shards into `dst` (none: in place, the updated shard shared)
  open_reduction,  ///< unit `unit`'s reduction opens: `dst`, the buffer its result lands in
  reduce_scatter,  ///< bucket `bucket` of `src` (a copy of it in its own buffer) reduce-scattered into `dst`
  all_reduce,      ///< `src` (the whole unit) all-reduced in `dst`
  wait,            ///< the collectives issued by operations `waits` complete
  accumulate,      ///< `count` elements of a gradient `src` become `dst`, a leaf of unit `unit`'s canonical sum
  add,             ///< one merge of unit `unit`'s canonical tree, dst += src; `src` is freed
  keep16,          ///< `count` 16-bit gradients `src` replace the step's 16-bit sum (`dst`, fresh)
  step_grad,       ///< unit `unit`'s step gradient (S_g) is `dst`
  step_sync,       ///< --grad-sync step: unit `unit`'s step gradient `dst` reduced once, in place
  loss,            ///< the step's loss: every rank's micro-batch sums gathered and added in one order
  agree,           ///< overflow and the gradient norm agreed over ranks: the step is applied or skipped
  update,          ///< unit `unit`'s owned part updated by the optimizer (an applied step only)
  free,            ///< buffers released (the step's sums at its end, a gradient output)
};

/// @param k a kind. @return whether it is one of the model's calls (an event).
constexpr bool is_event(OpKind k) { return k <= OpKind::recv; }

/// The name printed for an operation. @param k the kind. @return e.g. "reduce_scatter".
const char* op_name(OpKind k);

/// One arena block the program allocates.
struct ProgramBuffer {
  std::string category;   ///< its ledger category
  std::size_t bytes = 0;  ///< requested bytes (0: no block, as the arena allocates none)
  int unit = -1;          ///< the unit it belongs to
  bool fp32 = false;      ///< an FP32 buffer (else the compute type's, which may be FP32 too)
};

/// One operation.
struct Op {
  OpKind kind = OpKind::pass;    ///< what it does
  int unit = -1;                 ///< the unit it concerns (-1: none)
  int micro = -1;                ///< pass: the micro-batch of this rank (0 .. A-1)
  bool forward = true;           ///< pass: forward (true) or backward
  int bucket = -1;               ///< reduce_scatter / all_reduce: the bucket in issue order; all_gather:
                                 ///< the gather's index in its micro-batch
  int param = -1;                ///< param_done: the parameter's manifest index
  int peer = -1;                 ///< send / recv: the other pipeline stage
  std::size_t bytes = 0;         ///< collectives: the payload, elements × width (the unit's or bucket's)
  uint32_t src = kNoBuffer;      ///< the buffer it reads
  uint32_t dst = kNoBuffer;      ///< the buffer it writes (or returns)
  std::size_t count = 0;         ///< accumulate / add / keep16: elements
  std::vector<uint32_t> waits;   ///< wait: the operations whose collectives it completes
  std::vector<uint32_t> allocs;  ///< buffers allocated as it starts, in order
  std::vector<uint32_t> frees;   ///< buffers released as it ends, in order
};

/// A rank's step (or evaluation) as operations over buffers.
struct StepProgram {
  std::vector<ProgramBuffer> buffers;  ///< indexed by Op::allocs / Op::frees
  std::vector<Op> ops;                 ///< in the engine's order
};

/// One operation as printed (what, unit, micro-batch, bucket, parameter), e.g. "reduce_scatter u2
/// b0". @param o the operation. @return the text.
std::string op_text(const Op& o);

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
