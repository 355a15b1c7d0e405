// pipeline/stage_runner.h over real send/recv between thread ranks, one rank per stage: GPipe and
// 1F1B, P = 2, 3, 4, M = P and 5, with and without activation checkpointing, in FP32 and BF16.
// Every stage's canonical-tree gradient sum over the step's micro-batches and the last stage's
// loss sums equal one device's bit for bit; the last stage computes its head from the wte values
// the first stage sends (its own copy is NaN, so a stale read would show); every stage sends
// exactly the bytes of the closed forms (the activations' 2 (P-1) M b s h t over the pipeline,
// and the tied embedding's (M + 1) V C t), and holds as many workspaces as micro-batches in
// flight (GPipe M, 1F1B min(P - s, M)).
#include <catch2/catch.hpp>

#include <limits>

#include "collective/gloo_collective.h"
#include "collective/thread_ranks.h"
#include "pipeline/stage_runner.h"
#include "schedule/pipeline.h"
#include "stage_fixture.h"

using namespace zt;
using namespace zt::model;
using namespace zt::pipeline;
using namespace zt::schedule;
using namespace zt_pipe_test;

namespace {

constexpr int64_t kB = 2;
const GptConfig kCfg{.vocab = 29, .context = 8, .layers = 4, .heads = 2, .width = 16};
constexpr float kGradScale = 1.0f / 64.0f;

// The dense provider, except that a last stage without the embedding reads wte where it arrives.
template <typename T>
struct StageProvider final : ParamProvider<T> {
  DenseParamProvider<T> dense;
  const T* tied_wte;  // null: unit 0 is the stage's own
  StageProvider(const Manifest& m, const T* p, T* g, const T* wte) : dense(m, p, g), tied_wte(wte) {}
  const T* acquire(int u) override { return u == 0 && tied_wte ? tied_wte : dense.acquire(u); }
  void release(int u) override { dense.release(u); }
  T* grad(int u) override { return dense.grad(u); }
  void grad_done(int u) override { dense.grad_done(u); }
};

struct StageOutcome {
  std::vector<float> grad, losses;
  uint64_t sent = 0;
  int slots = 0;
  bool guards = true;
};

template <typename T>
StageOutcome run_stage(Collective& pp, PipeSchedule sched, int M, bool checkpointing) {
  const int s = pp.rank(), P = pp.size();
  const auto off = split_offsets(balanced_split(static_cast<int>(kCfg.layers), P));
  ModelOptions o;
  o.checkpoint_activations = checkpointing;
  o.stage = {off[static_cast<std::size_t>(s)], off[static_cast<std::size_t>(s) + 1]};
  Gpt<T> model(kCfg, kB, o);
  std::vector<T> params = stored_params<T>(model.manifest(), kCfg), grads(params.size());
  const bool tied_here = s == P - 1 && s > 0;
  if (tied_here)  // the last stage must use the wte values it receives, never a copy of its own
    for (std::size_t k = 0; k < static_cast<std::size_t>(kCfg.vocab * kCfg.width); ++k)
      params[k] = kernels::from_f<T>(std::numeric_limits<float>::quiet_NaN());
  const Precision p = precision_of<T>();
  const int K = StageRunner<T>::slots_needed(sched, P, s, M);
  std::vector<zt_test::GuardedBuffer> acts, ckpts;
  std::vector<std::vector<int32_t>> toks(static_cast<std::size_t>(K),
                                         std::vector<int32_t>(static_cast<std::size_t>(kB * (kCfg.context + 1))));
  zt_test::GuardedBuffer scratch(scratch_bytes(kCfg, kB, p, o), 0x5A);
  std::vector<T> grad_send(static_cast<std::size_t>(kB * kCfg.context * kCfg.width));
  std::vector<T> tied_wte(static_cast<std::size_t>(kCfg.vocab * kCfg.width));
  StageBuffers<T> buf;
  for (int k = 0; k < K; ++k) {
    acts.emplace_back(activation_bytes(kCfg, kB, p, o), 0x5A);
    ckpts.emplace_back(checkpoint_bytes(kCfg, kB, p, o), 0x5A);
  }
  for (int k = 0; k < K; ++k)
    buf.slots.push_back({acts[static_cast<std::size_t>(k)].data.get(), ckpts[static_cast<std::size_t>(k)].data.get(),
                         toks[static_cast<std::size_t>(k)].data()});
  buf.scratch = scratch.data.get();
  buf.grad_send = grad_send.data();
  buf.tied_wte = tied_wte.data();
  StageRunner<T> runner(model, pp, sched, M, buf);
  StageProvider<T> provider(model.manifest(), params.data(), grads.data(), tied_here ? tied_wte.data() : nullptr);
  TreeSum sum(grads.size());
  StageHooks<T> hooks;
  hooks.fill_tokens = [&](int m, int32_t* dst) {
    const auto t = tokens_of(kCfg, kB, m);
    std::copy(t.begin(), t.end(), dst);
  };
  hooks.after_backward = [&](int) { sum.push(grads); };
  StageOutcome out;
  const CommStats before = pp.stats();
  out.losses = runner.run_step(provider, kGradScale, hooks);
  out.sent = (pp.stats() - before)[CollKind::point_to_point].bytes_sent;
  out.grad = sum.acc.finish();
  out.slots = K;
  for (const auto& a : acts) out.guards &= a.guard_intact(0x5A);
  for (const auto& c : ckpts) out.guards &= c.guard_intact(0x5A);
  out.guards &= scratch.guard_intact(0x5A);
  return out;
}

template <typename T>
void check_pipeline(PipeSchedule sched, int P, int M, bool checkpointing) {
  const StepSums ref = one_device<T>(kCfg, kB, M, checkpointing, kGradScale);
  auto group = thread_group(P);
  auto out = run_thread_ranks(P, [&](int r) {
    GlooCollective pp(group.for_rank(r));
    return run_stage<T>(pp, sched, M, checkpointing);
  });
  const Manifest mf = make_storage_manifest(kCfg, {});
  const auto off = split_offsets(balanced_split(static_cast<int>(kCfg.layers), P));
  const uint64_t x_bytes = static_cast<uint64_t>(kB * kCfg.context * kCfg.width) * sizeof(T);
  const uint64_t wte_bytes = static_cast<uint64_t>(kCfg.vocab * kCfg.width) * sizeof(T);
  uint64_t total = 0;
  for (int s = 0; s < P; ++s) {
    INFO("stage " << s << ": " << out[static_cast<std::size_t>(s)].error);
    REQUIRE(out[static_cast<std::size_t>(s)].ok());
    const StageOutcome& o = *out[static_cast<std::size_t>(s)].value;
    for (int u : stage_units(mf, {off[static_cast<std::size_t>(s)], off[static_cast<std::size_t>(s) + 1]})) {
      const auto& info = mf.units[static_cast<std::size_t>(u)];
      INFO("unit " << info.name);
      CHECK(
          same_bits(o.grad.data() + info.offset, ref.grad.data() + info.offset, static_cast<std::size_t>(info.numel)));
    }
    // what this stage sends: its output forward, its input gradient backward, and the tied wte
    const uint64_t expect = static_cast<uint64_t>(M) * x_bytes * ((s < P - 1 ? 1 : 0) + (s > 0 ? 1 : 0)) +
                            (s == 0 ? wte_bytes : 0) + (s == P - 1 ? static_cast<uint64_t>(M) * wte_bytes : 0);
    CHECK(o.sent == expect);
    total += o.sent;
    CHECK(o.slots == (sched == PipeSchedule::gpipe ? M : std::min(P - s, M)));
    CHECK(o.guards);
  }
  CHECK(total == pipeline_p2p_bytes(P, M, x_bytes) + tied_embedding_p2p_bytes(P, M, wte_bytes));
  const StageOutcome& last = *out[static_cast<std::size_t>(P - 1)].value;
  REQUIRE(last.losses.size() == ref.losses.size());
  CHECK(same_bits(last.losses.data(), ref.losses.data(), ref.losses.size()));
}

}  // namespace

TEST_CASE("GPipe and 1F1B stages of a GPT over send/recv give one device's gradients and losses",
          "[ch15][pipeline][p2p]") {
  for (PipeSchedule sched : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b})
    for (int P : {2, 3, 4})
      for (int M : {P, 5})
        for (bool checkpointing : {false, true}) {
          INFO(word_of(sched) << ", P = " << P << ", M = " << M << (checkpointing ? ", checkpointing" : ""));
          check_pipeline<float>(sched, P, M, checkpointing);
          check_pipeline<bf16>(sched, P, M, checkpointing);
        }
}

TEST_CASE("a stage runner refuses a pipeline it cannot run", "[ch15][pipeline]") {
  auto group = thread_group(1);
  GlooCollective pp(group.for_rank(0));
  ModelOptions o;
  o.stage = {0, 2};  // not the whole model, on a pipeline of one
  Gpt<float> model(kCfg, kB, o);
  CHECK_THROWS_WITH(StageRunner<float>(model, pp, PipeSchedule::gpipe, 1, {}),
                    Catch::Contains("which is not a stage of that place"));
  Gpt<float> whole(kCfg, kB);
  CHECK_THROWS_WITH(StageRunner<float>(whole, pp, PipeSchedule::gpipe, 1, {}),
                    Catch::Contains("needs as many workspaces, got 0"));
}
