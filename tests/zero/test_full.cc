// The full product of the equivalence axes (label `full`, not part of `make test`): stages 0-3 x
// N = 1..5, 7 x fp32/fp16/bf16 x Adam/SGD x overlap on/off x prefetch 0/2 x two bucket sizes,
// one micro-batch per rank, with clipping; each run bitwise equal to the single-rank reference.
#include <catch2/catch.hpp>

#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

TEST_CASE("full product: every stage, N, precision, optimizer, overlap, prefetch, bucket", "[ch7]") {
  for (int stage : {0, 1, 2, 3})
    for (int world : {1, 2, 3, 4, 5, 7})
      for (const char* precision : {"fp32", "fp16", "bf16"})
        for (const char* optimizer : {"adamw", "sgd"})
          for (bool overlap : {true, false})
            for (int prefetch : {0, 2})
              for (double bucket : {0.0005, 1.0}) {
                if (stage != 3 && prefetch != 0) continue;  // prefetch is a stage-3 setting
                if (stage != 2 && bucket != 1.0) continue;  // buckets cut reductions in stage 2
                auto c = zero_config(stage, world, 1, precision);
                c.optimizer = optimizer;
                c.overlap = overlap;
                c.prefetch = prefetch;
                c.bucket_mb = bucket;
                c.clip_grad_norm = 0.5;
                train::RunArtifacts ref_art;
                const train::RunResult ref = run(reference_of(c), &ref_art);
                const ZeroRun z = run_zero(c);
                INFO("stage " << stage << " N=" << world << " " << precision << " " << optimizer
                              << " overlap " << overlap << " prefetch " << prefetch << " bucket " << bucket);
                REQUIRE(z.errors == "");
                for (const auto& r : z.ranks) CHECK(compare_steps(r.value->run.steps, ref.steps) == "");
                CHECK(compare_params(z.artifacts.final_params, ref_art.final_params) == "");
              }
}
