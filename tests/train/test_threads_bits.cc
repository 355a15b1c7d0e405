// zero-train at --threads 1, 2, 3 and 4 trains the same bits: one rank and ZeRO stages 1 and 3
// at N = 2 (ranks as threads, each with a pool of its own), in fp32, bf16 and fp16, and a
// model-parallel pair (MP 2, one and two blocks per rank). The runs set
// ZT_CPU_POOL_SPLIT=every_loop so that the small test model splits every loop a rank's pool
// reaches (the engine's grain would leave most of its loops whole), and each run's final weights
// are compared byte for byte with the 1-thread run's.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "support/run_program.h"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The model: 2 blocks of width 64 over 2-digit addition, 8 sequences, 3 steps with clipping (the
// block norms and the clip are on the path), a micro-batch of 2 at N = 2 (accumulation too).
const char* const kModel =
    "--layers 2 --heads 4 --width 64 --global-batch 8 --steps 3 --warmup-steps 1 --eval-every 0 "
    "--clip-grad-norm 0.5";

// Run one configuration at 1..4 threads; every dump must equal the 1-thread run's.
void same_bits_at_every_thread_count(const std::string& flags, const std::string& dir) {
  std::string first;
  for (const int threads : {1, 2, 3, 4}) {
    const std::string dump = dir + "/params_" + std::to_string(threads) + ".bin";
    zt::test::RunOptions opt;
    opt.env.emplace_back("ZT_CPU_POOL_SPLIT", "every_loop");
    const auto r = zt::test::run_program(
        "zero-train",
        std::string(kModel) + " " + flags + " --threads " + std::to_string(threads) + " --dump-params " + dump, opt);
    INFO(flags << " --threads " << threads << "\n" << r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find(std::to_string(threads) + (threads == 1 ? " thread per rank" : " threads per rank")) !=
          std::string::npos);
    const std::string bytes = slurp(dump);
    REQUIRE(!bytes.empty());
    if (threads == 1)
      first = bytes;
    else
      CHECK(bytes == first);
  }
}

struct ScratchDir {
  std::string path = "/tmp/zt_threads_" + std::to_string(::getpid());
  ScratchDir() { std::filesystem::create_directories(path); }
  ~ScratchDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("zero-train --threads 1-4: one rank trains the same bits in fp32, bf16 and fp16", "[ch2]") {
  ScratchDir d;
  for (const char* precision : {"fp32", "bf16", "fp16"})
    same_bits_at_every_thread_count(std::string("--precision ") + precision, d.path);
}

TEST_CASE("zero-train --threads 1-4: ZeRO stages 1 and 3 at N = 2 train the same bits in fp32, bf16 and fp16",
          "[ch2]") {
  ScratchDir d;
  for (const char* stage : {"1", "3"})
    for (const char* precision : {"fp32", "bf16", "fp16"})
      same_bits_at_every_thread_count(std::string("--world-size 2 --ranks-as threads --micro-batch 2 --stage ") +
                                          stage + " --precision " + precision,
                                      d.path);
}

TEST_CASE("zero-train --threads 1-4: a model-parallel pair (MP 2) trains the same bits", "[ch2]") {
  ScratchDir d;
  for (const char* precision : {"fp32", "bf16"})
    same_bits_at_every_thread_count(
        std::string("--world-size 2 --ranks-as threads --mp-size 2 --stage 1 --precision ") + precision, d.path);
  // two blocks per rank: the split Linears' strided copies and their sum over blocks
  same_bits_at_every_thread_count(
      "--world-size 2 --ranks-as threads --mp-size 2 --mp-blocks 4 --stage 1 --precision fp16", d.path);
}

TEST_CASE("zero-train --threads: the default is printed, a bad count is one line and exit 2", "[ch2]") {
  const auto r = zt::test::run_program("zero-train", "--steps 1 --eval-every 0");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("per rank (the default: its CPUs / its ranks on this machine; see --threads)") != std::string::npos);
  for (const char* bad : {"0", "-1", "two"}) {
    const auto b = zt::test::run_program("zero-train", std::string("--steps 1 --threads ") + bad);
    INFO(bad << ": " << b.err);
    CHECK(b.status == 2);
    CHECK(zt::test::line_count(b.err) == 1);
    CHECK(b.err.find("--threads") != std::string::npos);
  }
  zt::test::RunOptions opt;
  opt.env.emplace_back("ZT_CPU_POOL_SPLIT", "sometimes");
  const auto e = zt::test::run_program("zero-train", "--steps 1 --threads 2", opt);
  CHECK(e.status != 0);
  CHECK(e.err.find("ZT_CPU_POOL_SPLIT=sometimes is not every_loop") != std::string::npos);
}
