// zero-train --gemm canonical gives the same bits whatever OpenBLAS kernel the CPU would get
// (OPENBLAS_CORETYPE) and whichever path of the canonical GEMM runs (ZT_GEMM_ISA), and keeps the
// ZeRO engine's promise (--verify: N ranks equal one device). --gemm blas, for contrast, is allowed
// to differ between OpenBLAS kernels, and on this project's machines does.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <string>

#include "core/atomic_file.h"
#include "gemm/canonical_gemm.h"
#include "support/run_program.h"

using namespace zt;
using namespace zt::test;

namespace {
const std::string kRun =
    "--layers 2 --heads 4 --width 64 --context 32 --global-batch 8 --steps 3 --eval-every 0 --warmup-steps 0 ";

std::string params_of(const std::string& args, std::vector<std::pair<std::string, std::string>> env) {
  const std::string path = "/tmp/zt_gemm_bits_" + std::to_string(::getpid()) + ".params";
  RunOptions opt;
  opt.env = std::move(env);
  const auto out = run_program("zero-train", args + " --dump-params " + path, opt);
  INFO(out.err);
  REQUIRE(out.status == 0);
  std::string bytes = read_file(path);
  std::remove(path.c_str());
  return bytes;
}
}  // namespace

TEST_CASE("zero-train --gemm canonical: the same bits under every OpenBLAS core type and every canonical path",
          "[ch13]") {
  const std::string reference = params_of(kRun + "--gemm canonical", {});
  REQUIRE(reference.size() > 0);
  for (const char* core : {"Haswell", "SkylakeX", "Zen", "Prescott", "Sandybridge"}) {
    INFO("OPENBLAS_CORETYPE=" << core);
    CHECK(params_of(kRun + "--gemm canonical", {{"OPENBLAS_CORETYPE", core}}) == reference);
  }
  for (gemm::Isa isa : {gemm::Isa::scalar, gemm::Isa::avx2, gemm::Isa::avx512}) {
    if (!gemm::isa_supported(isa)) continue;
    INFO("ZT_GEMM_ISA=" << gemm::isa_name(isa));
    CHECK(params_of(kRun + "--gemm canonical", {{"ZT_GEMM_ISA", gemm::isa_name(isa)}}) == reference);
  }
  // bf16 and a tensor-parallel split: the same statement
  const std::string bf16 = params_of(kRun + "--gemm canonical --precision bf16 --mp-blocks 2", {});
  CHECK(params_of(kRun + "--gemm canonical --precision bf16 --mp-blocks 2",
                  {{"OPENBLAS_CORETYPE", "Prescott"}, {"ZT_GEMM_ISA", "scalar"}}) == bf16);
}

TEST_CASE("zero-train --gemm canonical keeps the ZeRO promise: N ranks bitwise equal to one device", "[ch13]") {
  for (const char* grid :
       {"--world-size 2 --stage 3", "--world-size 4 --mp-size 2 --stage 2 --checkpoint-activations"}) {
    INFO(grid);
    const auto out = run_program("zero-train", kRun + "--gemm canonical --ranks-as threads --verify " + grid);
    INFO(out.err);
    CHECK(out.status == 0);
    CHECK(out.out.find("bitwise equal to the single-rank reference") != std::string::npos);
  }
}

TEST_CASE("zero-train --gemm: a bad value or ZT_GEMM_ISA is one line and exit 2", "[ch13]") {
  const auto bad = run_program("zero-train", kRun + "--gemm cublas");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--gemm") != std::string::npos);
  RunOptions opt;
  opt.env = {{"ZT_GEMM_ISA", "neon"}};
  const auto isa = run_program("zero-train", kRun + "--gemm canonical", opt);
  CHECK(isa.status == 2);
  CHECK(isa.err.find("ZT_GEMM_ISA=neon is not one of scalar, avx2, avx512") != std::string::npos);
}
