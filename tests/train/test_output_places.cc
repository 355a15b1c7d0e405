// Every flag that names a place a program writes behaves alike: a missing directory is created
// (parents included) before any work, and a place that cannot be made (a file in the way) is one
// line naming the flag, status 2, with nothing written. The walk starts from zero-train's --help:
// every flag whose help says it writes something must have a recipe here, and every recipe's flag
// must be in TrainConfig::output_places(), the one list zero-train prepares — so a new output flag
// that is left out of that list fails this test.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "core/output_place.h"
#include "support/run_program.h"
#include "train/train_config.h"

namespace fs = std::filesystem;
using zt::test::bin;
using zt::test::run_program;

namespace {

const std::string kTinyOneStep =
    "--layers 1 --heads 2 --width 16 --context 16 --digits 1 --steps 1 --global-batch 4 --eval-every 0 "
    "--warmup-steps 0 --norm-block 32";

// What each output flag needs besides itself to run; PATH is replaced by the place's path.
const std::map<std::string, std::string> kRecipes = {
    {"summary-json", "--summary-json PATH"},
    {"dump-manifest", "--dump-manifest PATH"},
    {"dump-params", "--dump-params PATH"},
    {"dump-grads", "--dump-grads PATH"},
    {"dump-batch", "--dump-batch PATH"},
    {"memory-trace", "--stage 1 --world-size 2 --ranks-as threads --memory-trace PATH"},
    {"trace", "--stage 1 --world-size 2 --ranks-as threads --trace PATH"},
    {"step-trace", "--stage 1 --world-size 2 --ranks-as threads --step-trace PATH"},
    {"save-dir", "--save-dir PATH"},
    {"offload-optimizer", "--stage 1 --offload-optimizer file:PATH"},
    {"offload-params", "--stage 3 --offload-params file:PATH"},
};

// The flags of zero-train --help whose help text says the program writes there.
std::vector<std::string> writing_flags() {
  const auto help = run_program("zero-train", "--help");
  std::vector<std::string> out;
  std::istringstream lines(help.out);
  std::string line;
  const std::regex flag(R"(^\s+--([a-z0-9-]+))");
  std::smatch m;
  for (std::string current; std::getline(lines, line);) {
    if (std::regex_search(line, m, flag)) current = m[1];
    const bool writes = std::regex_search(line, std::regex(R"(\bwrites?\b|\bDIR\b)")) &&
                        !std::regex_search(line, std::regex(R"(\breads?\b|\bresume\b|continue from)"));
    if (writes && !current.empty() && (out.empty() || out.back() != current)) out.push_back(current);
  }
  return out;
}

std::string with_path(std::string recipe, const std::string& path) {
  return recipe.replace(recipe.find("PATH"), 4, path);
}

struct Scratch {
  fs::path root = fs::temp_directory_path() / ("zt_places_" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~Scratch() { fs::remove_all(root); }
};

}  // namespace

TEST_CASE("every flag that writes a place is prepared alike: created with its parents, or refused in one line",
          "[ch2]") {
  const auto flags = writing_flags();
  REQUIRE(flags.size() >= 8);  // the walk found --help's output flags at all
  for (const auto& f : flags) {
    INFO("--" << f << " writes, by its --help line: it needs a recipe in this test and an entry in output_places()");
    CHECK(kRecipes.count(f) == 1);
  }
  Scratch scratch;
  for (const auto& [flag, recipe] : kRecipes) {
    INFO("--" << flag);
    // the recipe's flag is one of the places zero-train prepares
    zt::train::TrainConfig parsed;
    std::vector<std::string> words{"zero-train"};
    std::istringstream in(kTinyOneStep + " " + with_path(recipe, "/some/where"));
    for (std::string w; in >> w;) words.push_back(w);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    REQUIRE(zt::train::parse_train_config(static_cast<int>(argv.size()), argv.data(), parsed));
    bool listed = false;
    for (const auto& place : parsed.output_places()) listed = listed || place.flag.rfind("--" + flag, 0) == 0;
    CHECK(listed);

    // a place two missing directories deep: created, and the run writes there
    const fs::path place = scratch.root / flag / "a" / "b";
    const auto ok = run_program("zero-train", kTinyOneStep + " " + with_path(recipe, place.string()));
    INFO(ok.err);
    CHECK(ok.status == 0);
    CHECK(fs::exists(place));

    // a file in the way of the directory: one line naming the flag and the file, nothing written
    const fs::path blocker = scratch.root / (flag + "-blocker");
    std::ofstream(blocker) << "x";
    const fs::path blocked = blocker / "sub" / "out";
    const auto bad = run_program("zero-train", kTinyOneStep + " " + with_path(recipe, blocked.string()));
    INFO(bad.err);
    CHECK(bad.status == 2);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
    CHECK(bad.err.find("--" + flag) != std::string::npos);
    CHECK(bad.err.find(blocker.string() + " is a file, in the way") != std::string::npos);
    CHECK(fs::is_regular_file(blocker));
  }
}

TEST_CASE("the other programs' output places: created with their parents, or refused in one line", "[ch2]") {
  Scratch scratch;
  const std::string dump = (scratch.root / "params.bin").string();
  REQUIRE(run_program("zero-train", kTinyOneStep + " --save-dir " + (scratch.root / "save").string()).status == 0);
  struct Case {
    std::string program, args, place;
  };
  const fs::path deep = scratch.root / "x" / "y";
  const std::vector<Case> cases = {
      {"zero-plan", kTinyOneStep + " --json " + (deep / "plan.json").string(), (deep / "plan.json").string()},
      {"zero-plan", kTinyOneStep + " --stage 1 --memory-trace " + (deep / "trace.json").string(),
       (deep / "trace.json").string()},
      {"zero-ckpt", "consolidate " + (scratch.root / "save").string() + " " + (deep / "master.bin").string(),
       (deep / "master.bin").string()},
      {"zero-ckpt", "export " + (scratch.root / "save").string() + " " + (deep / "hf").string(),
       (deep / "hf").string()},
  };
  for (const auto& c : cases) {
    INFO(c.program << " " << c.args);
    const auto out = run_program(c.program, c.args);
    INFO(out.err);
    CHECK(out.status == 0);
    CHECK(fs::exists(c.place));
  }
  // a file in the way
  const fs::path blocker = scratch.root / "blocker";
  std::ofstream(blocker) << "x";
  const auto bad = run_program("zero-plan", kTinyOneStep + " --json " + (blocker / "plan.json").string());
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--json") != std::string::npos);
  CHECK(bad.err.find(blocker.string() + " is a file, in the way") != std::string::npos);
}
