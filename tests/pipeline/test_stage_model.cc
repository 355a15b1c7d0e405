// A GPT cut into pipeline stages (model/pipe_stage.h), run stage after stage in one thread with
// the boundary tensors copied by hand, against the whole model on one device: the same loss sums
// and, per stage, the same gradient of every unit it holds, bit for bit; no stage writes a
// gradient it does not hold; each stage makes exactly the provider calls provider_calls() lists
// for it; its workspace stays inside the sizes the layouts give, and those sizes add up to the
// whole model's plus one input buffer (and, with checkpointing, one recomputation slot) per
// extra stage.
#include <catch2/catch.hpp>

#include "schedule/pipeline.h"
#include "stage_fixture.h"

using namespace zt;
using namespace zt::model;
using namespace zt_pipe_test;

namespace {

constexpr int64_t kStageB = 2;
const GptConfig kFiveBlocks{.vocab = 29, .context = 8, .layers = 5, .heads = 2, .width = 16};

std::vector<PipeStage> stages_of(const GptConfig& cfg, int P) {
  const auto off = schedule::split_offsets(schedule::balanced_split(static_cast<int>(cfg.layers), P));
  std::vector<PipeStage> s;
  for (int i = 0; i < P; ++i) s.push_back({off[static_cast<std::size_t>(i)], off[static_cast<std::size_t>(i) + 1]});
  return s;
}

ModelOptions options_of(const PipeStage& s, bool checkpointing) {
  ModelOptions o;
  o.checkpoint_activations = checkpointing;
  o.stage = s;
  return o;
}

template <typename T>
void check_sequential_pipeline(int P, bool checkpointing) {
  const int M = 3;
  const float grad_scale = 1.0f / 64.0f;
  const StepSums ref = one_device<T>(kFiveBlocks, kStageB, M, checkpointing, grad_scale);
  const auto stages = stages_of(kFiveBlocks, P);
  std::vector<std::unique_ptr<zt_test::Harness<T>>> h;
  std::vector<TreeSum> sums;
  for (const PipeStage& s : stages) {
    h.push_back(std::make_unique<zt_test::Harness<T>>(kFiveBlocks, kStageB, zt_test::gpt_init(kFiveBlocks, 7), 0,
                                                      options_of(s, checkpointing)));
    sums.emplace_back(h.back()->grads.size());
  }
  const auto n_x = static_cast<std::size_t>(kStageB * kFiveBlocks.context * kFiveBlocks.width) * sizeof(T);
  const auto n_wte = static_cast<std::size_t>(kFiveBlocks.vocab * kFiveBlocks.width) * sizeof(T);
  std::vector<float> losses;
  for (int m = 0; m < M; ++m) {
    const auto batch = tokens_of(kFiveBlocks, kStageB, m);
    float loss = 0.0f;
    for (int s = 0; s < P; ++s) {
      auto& here = *h[static_cast<std::size_t>(s)];
      if (s > 0) {
        auto& prev = *h[static_cast<std::size_t>(s - 1)];
        std::memcpy(here.model.stage_input(here.ws), prev.model.stage_output(prev.ws), n_x);
      }
      const float l = here.forward(batch);
      if (s < P - 1)
        CHECK(l == 0.0f);  // no loss before the last stage
      else
        loss = l;
    }
    losses.push_back(loss);
    for (int s = P - 1; s >= 0; --s) {
      auto& here = *h[static_cast<std::size_t>(s)];
      if (s < P - 1) {
        auto& next = *h[static_cast<std::size_t>(s + 1)];
        std::memcpy(here.model.stage_output_grad(here.ws), next.model.stage_input_grad(next.ws), n_x);
      }
      if (s == 0 && P > 1) {
        auto& last = *h.back();
        std::memcpy(here.model.tied_head_grad(here.ws), last.model.tied_head_grad(last.ws), n_wte);
      }
      here.backward(batch, grad_scale);
      sums[static_cast<std::size_t>(s)].push(here.grads);
    }
  }
  CHECK(same_bits(losses.data(), ref.losses.data(), losses.size()));
  const Manifest& mf = h[0]->model.manifest();
  for (int s = 0; s < P; ++s) {
    INFO("stage " << s << " of " << P);
    auto& here = *h[static_cast<std::size_t>(s)];
    const std::vector<float> got = sums[static_cast<std::size_t>(s)].acc.finish();
    std::vector<bool> held(mf.units.size(), false);
    for (int u : stage_units(mf, stages[static_cast<std::size_t>(s)])) held[static_cast<std::size_t>(u)] = true;
    for (std::size_t u = 0; u < mf.units.size(); ++u) {
      const auto& info = mf.units[u];
      INFO("unit " << info.name);
      const auto at = static_cast<std::size_t>(info.offset), n = static_cast<std::size_t>(info.numel);
      if (held[u]) {
        CHECK(same_bits(got.data() + at, ref.grad.data() + at, n));
      } else {  // never written: still the zero bytes the harness filled in
        bool untouched = true;
        for (std::size_t k = 0; k < n; ++k) untouched &= kernels::to_f(here.grads[at + k]) == 0.0f;
        CHECK(untouched);
      }
    }
    CHECK(here.guards_intact());
  }
}

}  // namespace

TEST_CASE("a GPT cut into pipeline stages computes one device's losses and gradients", "[ch15][pipeline]") {
  for (int P : {1, 2, 3, 4, 5})
    for (bool checkpointing : {false, true}) {
      INFO("P = " << P << (checkpointing ? ", checkpointing" : ""));
      check_sequential_pipeline<float>(P, checkpointing);
      check_sequential_pipeline<bf16>(P, checkpointing);
      check_sequential_pipeline<fp16>(P, checkpointing);
    }
}

TEST_CASE("a pipeline stage's workspace holds its own blocks: the sizes add up to one device's", "[ch15][pipeline]") {
  for (Precision p : {Precision::fp32, Precision::bf16})
    for (bool checkpointing : {false, true})
      for (int P : {2, 3, 5}) {
        INFO("P = " << P << (checkpointing ? ", checkpointing" : ""));
        const ModelOptions whole = options_of({}, checkpointing);
        std::size_t acts = 0, ckpts = 0;
        for (const PipeStage& s : stages_of(kFiveBlocks, P)) {
          acts += activation_bytes(kFiveBlocks, kStageB, p, options_of(s, checkpointing));
          ckpts += checkpoint_bytes(kFiveBlocks, kStageB, p, options_of(s, checkpointing));
        }
        // every extra stage holds its own input x0 (the stream buffer with checkpointing) and,
        // with checkpointing, its own block slot for the recomputation
        const auto align = [](std::size_t b) { return (b + 63) / 64 * 64; };
        const std::size_t x =
            align(static_cast<std::size_t>(kStageB * kFiveBlocks.context * kFiveBlocks.width) * bytes_of(p));
        const ActivationLayout l = activation_layout(kFiveBlocks, kStageB, p, whole);
        const std::size_t slot = checkpointing ? l.lnf - l.layers[0].ln1 : 0;  // one block's regions
        CHECK(acts == activation_bytes(kFiveBlocks, kStageB, p, whole) + static_cast<std::size_t>(P - 1) * (x + slot));
        CHECK(ckpts == checkpoint_bytes(kFiveBlocks, kStageB, p, whole));
        // the head's tensors only on the last stage; the first stage has no logits gradient
        const auto stages = stages_of(kFiveBlocks, P);
        CHECK(!activation_layout(kFiveBlocks, kStageB, p, options_of(stages[0], checkpointing)).head);
        CHECK(activation_layout(kFiveBlocks, kStageB, p, options_of(stages.back(), checkpointing)).head);
      }
}

TEST_CASE("each pipeline stage makes exactly the provider calls provider_calls() lists for it", "[ch15][pipeline]") {
  GptConfig cfg = kFiveBlocks;
  for (int64_t blocks : {1, 2}) {
    cfg.mp_blocks = blocks;
    for (int P : {1, 2, 3})
      for (bool checkpointing : {false, true})
        for (const PipeStage& s : stages_of(cfg, P)) {
          INFO("B " << blocks << ", P " << P << ", stage [" << s.begin << ", " << s.end << ")");
          zt_test::Harness<float> h(cfg, kStageB, zt_test::gpt_init(cfg, 1), 0, options_of(s, checkpointing));
          zt_test::RecordingProvider<float> rec(h.model.manifest(), h.params.data(), h.grads.data());
          const auto batch = tokens_of(cfg, kStageB, 0);
          const auto in = batch_inputs(batch.data(), kStageB, cfg.context);
          const auto tg = batch_targets(batch.data(), kStageB, cfg.context);
          h.model.forward(rec, in, tg, h.ws);
          h.model.backward(rec, in, tg, 1.0f, h.ws);
          const auto expected = provider_calls(h.model.manifest(), s);
          REQUIRE(rec.calls.size() == expected.size());
          CHECK(zt_test::same_calls(rec.calls, expected));
        }
  }
}

TEST_CASE("a pipeline stage that is not a run of the model's blocks is refused", "[ch15][pipeline]") {
  for (const PipeStage& s : {PipeStage{-1, 2}, PipeStage{2, 2}, PipeStage{3, 6}, PipeStage{5, -1}})
    CHECK_THROWS_WITH(activation_bytes(kFiveBlocks, kStageB, Precision::fp32, options_of(s, false)),
                      Catch::Contains("is not a non-empty run of the model's 5 blocks"));
  zt_test::Harness<float> whole(kFiveBlocks, kStageB, zt_test::gpt_init(kFiveBlocks, 1));
  CHECK_THROWS_WITH(whole.model.tied_head_grad(whole.ws), Catch::Contains("different stages"));
}
