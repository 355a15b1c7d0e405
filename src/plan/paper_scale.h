// plan/paper_scale.h — the ZeRO paper's closed forms for a model of ψ parameters (`--params`):
// per-rank model-state bytes by state, and data-parallel traffic per rank per step.
//
// Memory is memory/model_states.h's paper_model_states (2ψ + 2ψ + Kψ with P_os, P_os+g,
// P_os+g+p over N_d); this file adds no second formula for it. Traffic counts 16-bit elements
// sent by one rank in one step:
//   exact model (default): stages 0-2 send 2ψ · (N−1)/N elements (an all-reduce, or a
//     reduce-scatter of gradients and an all-gather of parameters), stage 3 sends 3ψ · (N−1)/N
//     (two parameter all-gathers and a gradient reduce-scatter) — the paper's Sec. 7 figures
//     with the ring's (N−1)/N kept, as predict/zero_comm.h counts them for runnable shapes;
//   paper model (--traffic-model paper): the same without (N−1)/N, i.e. 2ψ and 3ψ elements
//     (4ψ and 6ψ bytes), the count a back-of-envelope breakeven uses for ZeRO-3.
// Calls per step (for the latency term): one per layer per collective — stage 0 one all-reduce,
// stages 1-2 a reduce-scatter and an all-gather, stage 3 two all-gathers and a reduce-scatter
// (3L calls, so a latency term of 3L·α). It is arithmetic on doubles; it allocates nothing.
#pragma once

#include <array>
#include <string>

#include "core/words.h"
#include "memory/model_states.h"

namespace zt::plan {

/// How traffic is counted at paper scale (zero-plan --traffic-model): with the ring's (N−1)/N
/// (exact), or without it, as the paper's figures are (paper).
enum class TrafficModel { exact, paper };
/// @return the words of --traffic-model, in the order --help lists them.
constexpr auto words(TrafficModel) {
  return std::array{Word{"exact", TrafficModel::exact}, Word{"paper", TrafficModel::paper}};
}

/// A paper-scale question: ψ, K, stage, N_d, layers (for the call count) and the traffic model.
struct PaperQuestion {
  double psi = 0;                                    ///< parameters ψ
  int k = 12;                                        ///< optimizer bytes per parameter K (12 Adam/AdamW, 8 SGD)
  int stage = 0;                                     ///< 0..3
  std::size_t dp = 1;                                ///< N_d
  long long layers = 1;                              ///< L: collectives are issued per layer
  TrafficModel traffic_model = TrafficModel::exact;  ///< exact ((N−1)/N kept) | paper (without it)
};

/// The paper-scale answers.
struct PaperAnswer {
  PaperModelStates states;     ///< bytes per rank by state (paper_model_states)
  double elements_factor = 0;  ///< 2 (stages 0-2) or 3 (stage 3): traffic is factor · ψ elements
  double ring_factor = 1;      ///< (N−1)/N in the exact model, 1 in the paper model
  double bytes_per_step = 0;   ///< 16-bit bytes sent per rank per step: 2 · factor · ψ · ring_factor
  double calls_per_step = 0;   ///< collectives per step: L × (1, 2, 2, 3 by stage)
};

/// Answer a paper-scale question. @param q the question. @return the answers.
PaperAnswer paper_answer(const PaperQuestion& q);

/// The depth of a GPT-3-shaped model of ψ parameters, for the call count when `--layers` is not
/// given at paper scale. GPT-3's family keeps its width near C = 128·L (6.7B: L = 32, C = 4096;
/// 13B: 40, 5140; 175B: 96, 12288), and a block holds about 12·C² parameters, so
/// ψ ≈ 12·128²·L³ and L = round(cbrt(ψ / 196608)): 34 for 7.5B, 40 for 13B, 96 for 175B.
/// @param psi parameters ψ. @return L, at least 1.
long long gpt3_shape_layers(double psi);

/// The tokens per sequence T of the time estimate and the breakeven when `--params` is given
/// without `--seq`: GPT-3's context (every model of the family trained on 2048-token sequences),
/// the family whose depth gpt3_shape_layers takes. A runnable shape uses its own `--context`.
inline constexpr long long kGpt3Context = 2048;

}  // namespace zt::plan
