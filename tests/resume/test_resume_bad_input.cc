// Bad checkpoints through zero-train: a truncated file, a flipped byte, another format version, a
// checkpoint of another model or precision, a step past --steps, --resume of nothing. Each is one
// line naming the file (or the setting) and what is wrong, a non-zero exit on every rank (ranks
// as processes: each one reports), and nothing overwritten: the checkpoint stays as it was and no
// output file appears.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "checkpoint/manifest.h"
#include "resume/resume_fixtures.h"

using namespace zt::test;
namespace fs = std::filesystem;

namespace {
const std::string kBadInputModel =
    "--layers 1 --heads 2 --context 16 --global-batch 4 --eval-every 0 --warmup-steps 0 "
    "--norm-block 32 --stage 1 --world-size 2 ";

/// Every file of a directory tree with its bytes (to show nothing was overwritten).
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().string()] = zt::read_file(e.path().string());
  return out;
}

/// A saved checkpoint at step 2 of kBadInputModel in dir/ckpt. @return its directory.
std::string saved(const ScratchDir& dir) {
  const auto out =
      run_program(argv_of({bin("zero-train")}, kBadInputModel + "--width 16 --steps 2 --save-dir " + dir / "ckpt"));
  INFO(out.out << out.err);
  REQUIRE(out.status == 0);
  return dir / "ckpt/step-00000002";
}

/// Resume with `extra` flags; REQUIRE a failure whose every rank's report contains `expected`,
/// with no output written and the checkpoint untouched. @return the run's output.
zt::test::ProgramOutput expect_refused(const ScratchDir& dir, const std::string& ckpt, const std::string& extra,
                                       const std::string& expected) {
  const auto before = snapshot(ckpt);
  const std::string params = dir / "out.params";
  std::string args = kBadInputModel + extra;
  for (const char* flag : {"--steps 4", "--width 16"})  // unless `extra` sets them otherwise
    if (extra.find(std::string(flag).substr(0, std::string(flag).find(' '))) == std::string::npos)
      args += std::string(" ") + flag;
  const auto out = run_program(argv_of({bin("zero-train")}, args + " --resume " + ckpt + " --dump-params " + params));
  INFO(out.out << out.err);
  CHECK(out.status != 0);
  // ranks as processes: both ranks name the problem (rank 1 as its own error or as the agreement's)
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = out.err.find(expected, at)) != std::string::npos; at += expected.size()) ++lines;
  CHECK(lines >= 1);
  CHECK(out.err.find("rank 0") != std::string::npos);
  CHECK(out.err.find("rank 1") != std::string::npos);
  CHECK_FALSE(fs::exists(params));
  CHECK(snapshot(ckpt) == before);
  return out;
}
}  // namespace

TEST_CASE("resume refuses a damaged checkpoint with one line naming the file", "[ch14]") {
  SECTION("a truncated data file") {
    ScratchDir dir("truncated");
    const std::string ckpt = saved(dir);
    fs::resize_file(ckpt + "/rank-00001.bin", fs::file_size(ckpt + "/rank-00001.bin") - 4);
    expect_refused(dir, ckpt, "", "rank-00001.bin");
  }
  SECTION("a flipped byte") {
    ScratchDir dir("flipped");
    const std::string ckpt = saved(dir);
    std::string bytes = zt::read_file(ckpt + "/rank-00000.bin");
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x10);
    zt::write_file_atomic(ckpt + "/rank-00000.bin", bytes);
    const auto out = expect_refused(dir, ckpt, "", "checksum");
    // Rank 0 found the damage; rank 1 only learnt of it and may well exit first. The launcher
    // must still name rank 0 as the cause, with its message, and exit with its status.
    INFO(out.err);
    CHECK(out.status == 2);
    const std::string cause = "zero-train: job failed: rank 0 failed (exited with code 2): ";
    const auto at = out.err.find(cause);
    REQUIRE(at != std::string::npos);
    const std::string line = out.err.substr(at, out.err.find('\n', at) - at);
    CHECK(line.find(ckpt + "/rank-00000.bin") != std::string::npos);
    CHECK(line.find("fail their checksum") != std::string::npos);
  }
  SECTION("another format version") {
    ScratchDir dir("version");
    const std::string ckpt = saved(dir);
    auto j = nlohmann::json::parse(zt::read_file(ckpt + "/manifest.json"));
    j["format_version"] = zt::checkpoint::kFormatVersion + 1;
    zt::write_file_atomic(ckpt + "/manifest.json", j.dump());
    expect_refused(dir, ckpt, "", "format version");
  }
  SECTION("a manifest that is not JSON") {
    ScratchDir dir("json");
    const std::string ckpt = saved(dir);
    zt::write_file_atomic(ckpt + "/manifest.json", std::string("{\"format_version\": 1, "));
    expect_refused(dir, ckpt, "", "manifest.json");
  }
}

TEST_CASE("resume refuses a checkpoint of another run with one line saying what differs", "[ch14]") {
  ScratchDir dir("other");
  const std::string ckpt = saved(dir);
  SECTION("another model") { expect_refused(dir, ckpt, "--width 32", "a checkpoint of another model (width 16"); }
  SECTION("another precision") { expect_refused(dir, ckpt, "--precision bf16", "saved by a fp32 run"); }
  SECTION("nothing left to train") { expect_refused(dir, ckpt, "--steps 2", "leaves nothing to train"); }
  SECTION("no checkpoint there") { expect_refused(dir, dir / "nothing", "", "no checkpoint"); }
}

TEST_CASE("checkpoint flags: bad combinations are one-line usage errors", "[ch14]") {
  const auto every = run_program("zero-train", "--save-every 2");
  CHECK(every.status != 0);
  CHECK(every.err.find("--save-every 2 needs --save-dir") != std::string::npos);
  const auto verify = run_program("zero-train", "--resume /nonexistent --verify");
  CHECK(verify.status != 0);
  CHECK(verify.err.find("--verify compares a whole run") != std::string::npos);
}
