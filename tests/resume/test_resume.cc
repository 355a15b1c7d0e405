// Resume and reshard through zero-train: a run of 2K steps equals a run killed (SIGKILL) after
// its checkpoint at step K and resumed for the other K — master weights, every step record and
// every held-out evaluation, bit for bit — at the same layout (stages 0-3, fp32/bf16/fp16 with a
// loss scale that has changed and keeps changing after the resume) and at other layouts (saved at
// stage 3 on 4 ranks, resumed at stage 1 on 2, stage 2 on 3, stage 0 on 1; saved at N_d 2 x N_m 2,
// resumed at N_d 1 x N_m 4). The other layouts satisfy the schedule conditions of chapter 6, so
// the uninterrupted run is also the single-rank reference's; that is what makes resharding exact.
// The data position needs no test of its own: the sampler is counter-based (seed, step), and
// every resumed step below starts mid-epoch by construction.
#include <catch2/catch.hpp>

#include <filesystem>

#include "resume/resume_fixtures.h"

using namespace zt::test;

namespace {
// 12 sequences of one each: 12 micro-batches, which 1, 2, 3 and 4 ranks all split evenly
const std::string kModel =
    "--layers 2 --heads 4 --width 32 --context 16 --global-batch 12 --micro-batch 1 --eval-every 2 "
    "--warmup-steps 2 --norm-block 32 --ranks-as threads --steps 6 ";
}  // namespace

TEST_CASE("resume after SIGKILL: stages 0-3 continue bit for bit", "[ch14]") {
  struct Row {
    const char* layout;
    const char* precision;
  };
  for (const Row& row : {Row{"--stage 0 --world-size 1", "fp32"}, Row{"--stage 0 --world-size 2", "bf16"},
                         Row{"--stage 1 --world-size 2", "fp32"}, Row{"--stage 2 --world-size 2", "bf16"},
                         Row{"--stage 3 --world-size 2", "fp32"}, Row{"--stage 3 --world-size 4", "bf16"}}) {
    DYNAMIC_SECTION(row.layout << " " << row.precision) {
      ScratchDir dir("same");
      const std::string args = kModel + row.layout + " --precision " + row.precision;
      const Recorded whole = run_recorded(dir, "whole", args);
      run_killed_after(args + " --save-dir " + dir / "ckpt" + " --save-every 3", 3);
      REQUIRE(std::filesystem::exists(dir / "ckpt/step-00000003/manifest.json"));
      REQUIRE_FALSE(std::filesystem::exists(dir / "ckpt/step-00000006"));  // killed before
      const Recorded resumed = run_recorded(dir, "resumed", args + " --resume " + dir / "ckpt");
      check_continues(whole, resumed, 3);
    }
  }
}

TEST_CASE("resume after SIGKILL: fp16 with a loss scale that changed before and changes after", "[ch14]") {
  ScratchDir dir("fp16");
  // 2^24 overflows at once: the first steps back off (skipped); growth every 2 clean steps then
  // doubles it again after the resume, which needs the saved clean-step count
  const std::string args = kModel +
                           "--stage 2 --world-size 2 --precision fp16 --loss-scale-init 16777216 "
                           "--loss-scale-growth-interval 2";
  const Recorded whole = run_recorded(dir, "whole", args);
  bool skipped_before = false, changed_after = false;
  for (std::size_t i = 0; i < whole.steps.size(); ++i) {
    const auto& s = whole.steps[i];
    if (s["step"] <= 3) skipped_before |= s["skipped"].get<bool>();
    if (i > 0 && s["step"] > 3) changed_after |= s["loss_scale"] != whole.steps[i - 1]["loss_scale"];
  }
  INFO(whole.steps.dump());
  REQUIRE(skipped_before);  // the scale at the save is not the initial one
  REQUIRE(changed_after);   // and it keeps changing after the resume
  run_killed_after(args + " --save-dir " + dir / "ckpt" + " --save-every 3", 3);
  check_continues(whole, run_recorded(dir, "resumed", args + " --resume " + dir / "ckpt"), 3);
}

TEST_CASE("reshard: saved at stage 3 on 4 ranks, resumed at stage 1 on 2, stage 2 on 3, stage 0 on 1", "[ch14]") {
  const std::string saved = kModel + "--stage 3 --world-size 4 --precision bf16";
  static const SavedRun s(
      "reshard", saved, [&](const ScratchDir& d) { return saved + " --save-dir " + d / "ckpt" + " --save-every 3"; },
      3);
  const ScratchDir& dir = s.dir;
  const Recorded& whole = s.whole;
  // each layout meets chapter 6's schedule conditions for 12 micro-batches: micro-batch sync with
  // N a power of two, or step sync with A = 12 / N a power of two
  for (const char* layout : {"--stage 1 --world-size 2 --grad-sync micro-batch",
                             "--stage 2 --world-size 3 --grad-sync step", "--stage 0 --world-size 1"}) {
    DYNAMIC_SECTION(layout) {
      const std::string args = kModel + layout + " --precision bf16 --resume " + dir / "ckpt/step-00000003";
      check_continues(whole, run_recorded(dir, "resumed", args), 3);
    }
  }
}

TEST_CASE("reshard with model parallelism: saved at N_d 2 x N_m 2, resumed at N_d 1 x N_m 4", "[ch14]") {
  const std::string model = kModel + "--mp-blocks 4 --precision bf16 ";
  const std::string saved = model + "--stage 1 --world-size 4 --mp-size 2";
  static const SavedRun s(
      "mp", saved, [&](const ScratchDir& d) { return saved + " --save-dir " + d / "ckpt" + " --save-every 3"; }, 3);
  const ScratchDir& dir = s.dir;
  const Recorded& whole = s.whole;
  for (const char* layout :
       {"--stage 1 --world-size 4 --mp-size 4", "--stage 3 --world-size 4 --mp-size 4", "--stage 0 --world-size 1"}) {
    DYNAMIC_SECTION(layout) {
      check_continues(whole, run_recorded(dir, "resumed", model + layout + " --resume " + dir / "ckpt"), 3);
    }
  }
}

TEST_CASE("a writer killed inside the save protocol never leaves a checkpoint that loads wrongly", "[ch14]") {
  // every point of checkpoint/writer.h's protocol, in the second of two saves (steps 2 and 4 of 6)
  const std::string args = kModel + "--stage 2 --world-size 2 --precision bf16";
  static const ScratchDir ref("crash_ref");  // once: Catch2 re-runs the body for each section
  static const Recorded whole = run_recorded(ref, "whole", args);
  for (const char* point : {"data-half", "data-written", "fragment-written", "manifest-written", "renamed"}) {
    DYNAMIC_SECTION(point) {
      ScratchDir dir(std::string("crash_") + point);
      RunOptions opt;
      opt.env = {{"ZT_CHECKPOINT_CRASH_AT", std::string(point) + ":4"}};  // in the save of step 4
      const auto out =
          run_program(argv_of({bin("zero-train")}, args + " --save-dir " + dir / "ckpt" + " --save-every 2"), opt);
      INFO(out.out << out.err);
      REQUIRE(out.term_signal == SIGKILL);
      // the step-2 checkpoint is intact; step 4 exists only if the crash came after its rename
      const bool new_visible = std::string(point) == "renamed";
      CHECK(std::filesystem::exists(dir / "ckpt/step-00000002/manifest.json"));
      CHECK(std::filesystem::exists(dir / "ckpt/step-00000004") == new_visible);
      const Recorded resumed = run_recorded(dir, "resumed", args + " --resume " + dir / "ckpt");
      check_continues(whole, resumed, new_visible ? 4 : 2);
    }
  }
}

TEST_CASE("checkpoints with ZeRO-Offload: saved from the file tier, resumed into the host tier and into none",
          "[ch14]") {
  const std::string args = kModel + "--stage 2 --world-size 2 --precision bf16";
  static const SavedRun s(
      "offload", args,
      [&](const ScratchDir& d) {
        std::filesystem::create_directories(d / "tier");
        return args + " --offload-optimizer file:" + d / "tier" + " --save-dir " + d / "ckpt" + " --save-every 3";
      },
      3);
  const ScratchDir& dir = s.dir;
  const Recorded& whole = s.whole;
  for (const std::string& offload : std::vector<std::string>{"host", "file:" + dir / "tier", "none"}) {
    DYNAMIC_SECTION(offload) {
      check_continues(
          whole, run_recorded(dir, "resumed", args + " --offload-optimizer " + offload + " --resume " + dir / "ckpt"),
          3);
    }
  }
}

TEST_CASE("checkpoints with --offload-params: saved from the parameter file, resumed without it and back into it",
          "[ch14]") {
  ScratchDir dir("oparams");
  std::filesystem::create_directories(dir / "tier");
  for (const char* precision : {"fp32", "bf16"}) DYNAMIC_SECTION(precision) {
      const std::string args = kModel + "--stage 3 --world-size 2 --prefetch 1 --precision " + precision;
      const std::string params_file = " --offload-params file:" + dir / "tier";
      const Recorded whole = run_recorded(dir, "whole", args);
      const std::string from_file = dir / (std::string("from-file-") + precision),
                        to_file = dir / (std::string("to-file-") + precision);
      // saved with the shards in the file, resumed with them in memory; and the other way round
      run_killed_after(args + params_file + " --save-dir " + from_file + " --save-every 3", 3);
      check_continues(whole, run_recorded(dir, "resumed", args + " --resume " + from_file), 3);
      run_killed_after(args + " --save-dir " + to_file + " --save-every 3", 3);
      check_continues(whole, run_recorded(dir, "resumed", args + params_file + " --resume " + to_file), 3);
      CHECK(std::filesystem::is_empty(dir / "tier"));
    }
}
