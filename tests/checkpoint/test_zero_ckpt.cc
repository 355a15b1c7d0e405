// zero-ckpt as a user meets it, on a synthetic checkpoint of a small GPT written by two ranks:
// inspect (text, --verify, --json), consolidate (equal to Reader::read_dense), export (read back by
// an independent Python reader, tests/checkpoint/check_safetensors.py), and bad input (one line,
// exit 2 for the command line, 1 for the data, nothing left behind).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "checkpoint/fixtures.h"
#include "core/atomic_file.h"
#include "model/manifest.h"
#include "support/run_program.h"

using namespace zt;
using namespace zt::checkpoint;
using namespace zt::test;
using namespace zt::test::ckpt;

namespace {

const model::GptConfig kGpt = {/*vocab*/ 11, /*context*/ 8, /*layers*/ 2,
                               /*heads*/ 2,  /*width*/ 8,   /*mp_blocks*/ 1};

// A checkpoint of kGpt at step 7 under save_dir (master, adam.m, adam.v; two ranks).
std::string gpt_checkpoint(const std::string& save_dir, Values* values) {
  Manifest h;
  h.model = {{"family", "gpt"},     {"vocab", kGpt.vocab}, {"context", kGpt.context}, {"layers", kGpt.layers},
             {"heads", kGpt.heads}, {"width", kGpt.width}, {"mp_blocks", 1}};
  h.sharding = {{"stage", 2}, {"dp_size", 2}, {"mp_size", 1}};
  h.run = {{"step", 7}, {"optimizer", "adam"}};
  h.states = {"master", "adam.m", "adam.v"};
  for (const auto& p : model::make_manifest(kGpt).params) h.params.push_back({p.name, p.shape, p.numel});
  *values = make_values(h, 2024);
  return save(save_dir, 7, h, *values, deal(h, 2, 2025));
}

ProgramOutput zero_ckpt(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {bin("zero-ckpt")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv);
}

bool one_error_line(const ProgramOutput& out) {
  return out.err.rfind("zero-ckpt: error: ", 0) == 0 && line_count(out.err) == 1 && out.err.back() == '\n';
}

}  // namespace

TEST_CASE("zero-ckpt inspect: text, --verify and --json", "[ch14]") {
  TempDir dir("inspect");
  Values v;
  const std::string ckpt = gpt_checkpoint(dir / "save", &v);
  const auto text = zero_ckpt({"inspect", dir / "save", "--verify"});
  INFO(text.out << text.err);
  REQUIRE(text.status == 0);
  CHECK_THAT(text.out, Catch::Contains("checkpoint: " + ckpt + "\n"));
  CHECK_THAT(text.out, Catch::Contains("format version: 1\nstep: 7\n"));
  CHECK_THAT(text.out, Catch::Contains("states: master, adam.m, adam.v\n"));
  CHECK_THAT(text.out, Catch::Contains("rank-00001.bin"));
  CHECK_THAT(text.out, Catch::EndsWith("all 2 files verify\n"));

  const auto js = zero_ckpt({"inspect", ckpt, "--json"});
  REQUIRE(js.status == 0);
  const auto j = nlohmann::json::parse(js.out);
  Reader r(ckpt);
  uint64_t total = 0;
  for (const auto& f : r.manifest().files) total += f.bytes;
  CHECK(j["checkpoint"] == ckpt);
  CHECK(j["step"] == 7);
  CHECK(j["model"]["width"] == kGpt.width);
  CHECK(j["files"].size() == 2);
  CHECK(j["total_bytes"] == total);
  CHECK(total == 3 * 4 * static_cast<uint64_t>(model::param_count(kGpt)));
  CHECK(j["intervals"] == r.manifest().intervals.size());
  CHECK(j["verified"] == false);
}

TEST_CASE("zero-ckpt consolidate writes read_dense's values, as --dump-params does", "[ch14]") {
  TempDir dir("consolidate");
  Values v;
  const std::string ckpt = gpt_checkpoint(dir.path(), &v);
  Reader r(ckpt);
  for (const std::string state : {"master", "adam.v"}) {
    const std::string out = dir / (state + ".bin");
    const auto run = zero_ckpt({"consolidate", dir.path(), out, "--state", state});
    INFO(run.out << run.err);
    REQUIRE(run.status == 0);
    const std::string bytes = read_file(out);
    const auto dense = r.read_dense(state);
    REQUIRE(bytes.size() == dense.size() * sizeof(float));
    CHECK(std::memcmp(bytes.data(), dense.data(), bytes.size()) == 0);
    const std::size_t s = state == "master" ? 0 : 2;
    CHECK(std::memcmp(bytes.data(), v.dense[s].data(), bytes.size()) == 0);
  }
  // an existing OUT is left alone
  const auto again = zero_ckpt({"consolidate", dir.path(), dir / "master.bin"});
  CHECK(again.status == 1);
  CHECK(one_error_line(again));
  CHECK_THAT(again.err, Catch::Contains(dir / "master.bin" + " already exists"));
  const auto unknown = zero_ckpt({"consolidate", dir.path(), dir / "x.bin", "--state", "sgd.momentum"});
  CHECK(unknown.status == 1);
  CHECK_THAT(unknown.err, Catch::Contains("no state \"sgd.momentum\""));
  CHECK_FALSE(fs::exists(dir / "x.bin"));
}

TEST_CASE("zero-ckpt export: a Hugging Face GPT-2 directory an independent reader accepts", "[ch14]") {
  TempDir dir("export");
  Values v;
  gpt_checkpoint(dir / "save", &v);
  REQUIRE(zero_ckpt({"consolidate", dir / "save", dir / "master.bin"}).status == 0);
  const auto run = zero_ckpt({"export", dir / "save", dir / "hf", "--format", "safetensors"});
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  CHECK(std::distance(fs::directory_iterator(dir / "hf"), fs::directory_iterator{}) == 2);
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}) == 3);  // save, master.bin, hf
  const auto check =
      run_program({"/usr/bin/python3", std::string(ZT_SOURCE_DIR) + "/tests/checkpoint/check_safetensors.py",
                   dir / "hf", dir / "master.bin", std::to_string(kGpt.vocab), std::to_string(kGpt.context),
                   std::to_string(kGpt.layers), std::to_string(kGpt.heads), std::to_string(kGpt.width)});
  INFO(check.out << check.err);
  CHECK(check.status == 0);
  CHECK_THAT(check.out, Catch::StartsWith("ok: 28 tensors"));
  const auto config = nlohmann::json::parse(read_file(dir / "hf/config.json"));
  CHECK(config["bos_token_id"].is_null());

  // again into the same OUT: refused, nothing changed, no temporary left
  const std::string before = read_file(dir / "hf/model.safetensors");
  const auto twice = zero_ckpt({"export", dir / "save", dir / "hf"});
  CHECK(twice.status == 1);
  CHECK(one_error_line(twice));
  CHECK(read_file(dir / "hf/model.safetensors") == before);
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}) == 3);
}

TEST_CASE("zero-ckpt: bad input is one line, exit 2 for the command line and 1 for the data", "[ch14]") {
  TempDir dir("badcli");
  Values v;
  const std::string ckpt = gpt_checkpoint(dir / "save", &v);
  struct Case {
    std::vector<std::string> args;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{}, 2, "give a subcommand"},
      {{"unpack", ckpt}, 2, "unknown subcommand 'unpack'"},
      {{"inspect"}, 2, "takes DIR"},
      {{"inspect", ckpt, "--verbose"}, 2, "unknown flag --verbose"},
      {{"consolidate", ckpt}, 2, "takes DIR OUT"},
      {{"export", ckpt, dir / "o", "--format", "onnx"}, 2, "--format: 'onnx' is not one of safetensors"},
      {{"inspect", dir / "missing"}, 1, "no checkpoint in " + dir / "missing" + ": it does not exist"},
      {{"inspect", dir.path()}, 1, "no checkpoint in " + dir.path()},
      {{"export", ckpt, dir / "save"}, 1, dir / "save" + " already exists"},
  };
  for (const auto& c : cases) {
    const auto out = zero_ckpt(c.args);
    INFO(out.err);
    CHECK(out.status == c.status);
    CHECK(one_error_line(out));
    CHECK_THAT(out.err, Catch::Contains(c.says));
  }
  // a corrupted byte of the master weights: opening succeeds (sizes are right), --verify names
  // the file, and export refuses the interval
  const std::string file = ckpt + "/rank-00000.bin";
  uint64_t at = UINT64_MAX;
  // a named Reader: a range-for keeps alive only what its range expression returns (here a
  // reference into the Reader), not a temporary Reader it was taken from
  const Reader reader(ckpt);
  for (const auto& iv : reader.manifest().intervals)
    if (iv.state == "master" && iv.file == 0) at = std::min(at, iv.byte_offset + 2);
  std::string bytes = read_file(file);
  REQUIRE(at < bytes.size());
  bytes[at] ^= 1;
  write_file_atomic(file, bytes);
  CHECK(zero_ckpt({"inspect", ckpt}).status == 0);
  const auto verify = zero_ckpt({"inspect", ckpt, "--verify"});
  CHECK(verify.status == 1);
  CHECK(one_error_line(verify));
  CHECK_THAT(verify.err, Catch::Contains(file + ": the whole file fails its checksum"));
  const auto exported = zero_ckpt({"export", ckpt, dir / "hf"});
  CHECK(exported.status == 1);
  CHECK_THAT(exported.err, Catch::Contains("fail their checksum"));
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}) == 1);  // only save/
}
