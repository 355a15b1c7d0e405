// schedule/pipeline.h — pipeline parallelism as data: how L blocks are cut into P contiguous
// stages, in which order each stage runs the forward and backward passes of a step's M
// micro-batches (GPipe and 1F1B), and what that order costs — the idle time ("bubble"), the
// activations a stage holds at once, the bytes that cross stage boundaries.
//
// The rules, written once:
//   split        stage s holds a contiguous run of blocks; the embedding goes with stage 0, the
//                final LayerNorm, head and loss with stage P-1. Balanced (the default): every
//                stage floor(L/P) blocks, the first L mod P stages one more. --pp-split gives the
//                counts (each >= 1, summing to L).
//   GPipe        (Huang et al. 2019) every stage runs F_0 .. F_{M-1}, then B_0 .. B_{M-1}: all M
//                micro-batches' activations are held at once, at every stage.
//   1F1B         (PipeDream-Flush, Narayanan et al. 2021; Megatron's default) stage s runs
//                w = min(P-1-s, M) warm-up forwards, then alternates one forward and one backward
//                (F_{w+i}, B_i), then the w remaining backwards: at most P - s micro-batches in
//                flight at stage s, the same bubble as GPipe.
//   order        both schedules run the backwards of every stage in micro-batch order 0, 1, ...,
//                M-1: the order a single device runs them in, so a stage's gradient sum over
//                micro-batches follows the same canonical tree as one device's (chapter 6).
//   bubble       with a forward taking t_f and a backward t_b on every stage, a step takes
//                (M + P - 1)(t_f + t_b) and each stage is busy M (t_f + t_b): the idle fraction is
//                (P - 1) / (M + P - 1) for both schedules (simulate() derives it from the orders).
//   traffic      each micro-batch's activation crosses P - 1 boundaries forward and its gradient
//                P - 1 backward: 2 (P - 1) M b s h t bytes per step (b micro-batch rows, s tokens,
//                h hidden width, t bytes per element).
// Nothing here runs a model, allocates, or communicates; the orders are what a pipeline engine
// issues, and the closed forms are what its measurements are compared with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/words.h"

namespace zt::schedule {

/// A pipeline schedule.
enum class PipeSchedule : uint8_t {
  gpipe = 0,        ///< all forwards, then all backwards
  one_f_one_b = 1,  ///< warm-up forwards, then one forward / one backward, then the rest
};

/// The words of --pp-schedule (core/words.h), in the order --help lists them.
/// @return the table.
constexpr auto words(PipeSchedule) {
  return std::array{Word{"gpipe", PipeSchedule::gpipe}, Word{"1f1b", PipeSchedule::one_f_one_b}};
}

/// One pass of one micro-batch on one stage.
struct PipeOp {
  /// Forward or backward.
  enum class Kind : uint8_t { forward = 0, backward = 1 };
  Kind kind = Kind::forward;  ///< which pass
  int micro = 0;              ///< micro-batch index, 0..M-1
  /// Equality. @param o the other op. @return same kind and micro-batch.
  bool operator==(const PipeOp& o) const { return kind == o.kind && micro == o.micro; }
};

/// The balanced split. @param blocks L >= 1. @param stages P, 1 <= P <= L.
/// @return blocks per stage: floor(L/P), the first L mod P stages one more; zt::Error naming
/// --pp-size when P is out of range.
std::vector<int> balanced_split(int blocks, int stages);

/// Parse --pp-split ("3,2,2"). @param text comma-separated counts. @param blocks L.
/// @param stages P. @return the counts; zt::Error naming --pp-split when there are not P of them,
/// one is < 1, or they do not sum to L.
std::vector<int> parse_pipe_split(const std::string& text, int blocks, int stages);

/// The first block of each stage. @param split blocks per stage. @return P + 1 offsets (the last = L).
std::vector<int> split_offsets(const std::vector<int>& split);

/// Check that a step's micro-batches fill the pipeline. @param micro_batches M.
/// @param stages P. zt::Error naming --pp-size when M < P (a stage would never be busy
/// alongside the others; the error says how to get more micro-batches).
void check_micro_batches(int micro_batches, int stages);

/// The order one stage runs its passes in. @param schedule GPipe or 1F1B. @param stages P.
/// @param stage s, 0..P-1. @param micro_batches M >= 1. @return 2M ops.
std::vector<PipeOp> stage_order(PipeSchedule schedule, int stages, int stage, int micro_batches);

/// Most micro-batches whose forward has run and whose backward has not, at once, in an order.
/// @param order one stage's ops. @return the peak (GPipe: M; 1F1B at stage s: min(P - s, M)).
int peak_in_flight(const std::vector<PipeOp>& order);

/// One pass placed on the timeline.
struct PipeSpan {
  PipeOp op;           ///< the pass
  double start = 0.0;  ///< when it starts
  double end = 0.0;    ///< when it ends
};

/// A step's timeline: every stage's passes as they would run with fixed pass times and free
/// transfers (each pass starts when its stage is free and its input has arrived: F(s, m) after
/// F(s-1, m); B(s, m) after B(s+1, m), or after F(P-1, m) on the last stage).
struct PipeTimeline {
  std::vector<std::vector<PipeSpan>> stages;  ///< per stage, in its order
  double makespan = 0.0;                      ///< the step's end
  double bubble_fraction = 0.0;               ///< 1 - busy time / (P × makespan)
};

/// Run the orders on the timeline. @param schedule the schedule. @param stages P.
/// @param micro_batches M. @param t_forward a forward pass's time. @param t_backward a backward's.
/// @return the timeline; zt::Error if the orders could deadlock (they cannot: tested).
PipeTimeline simulate(PipeSchedule schedule, int stages, int micro_batches, double t_forward, double t_backward);

/// Bytes that cross stage boundaries per step, both directions, over the whole pipeline.
/// @param stages P. @param micro_batches M. @param boundary_bytes one micro-batch's activation
/// at a boundary (b × s × h × t). @return 2 (P - 1) M × boundary_bytes.
uint64_t pipeline_p2p_bytes(int stages, int micro_batches, uint64_t boundary_bytes);

}  // namespace zt::schedule
