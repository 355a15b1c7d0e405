// model/init.h — GPT-2 initialisation from a counter-based generator, so that any rank can
// materialise exactly its own slice of any parameter without building the rest.
//
// Rule (GPT-2 / nanoGPT): Linear weights and both embeddings ~ N(0, 0.02^2); the two residual
// projections (attn.c_proj.weight, mlp.c_proj.weight) ~ N(0, (0.02/sqrt(2L))^2), so the variance
// the 2L residual additions contribute does not grow with depth (Radford et al. 2019, sec. 2.3);
// biases 0; LayerNorm weights 1.
//
// Generator: element e of parameter p under seed s is a pure function of (s, p, e): two 64-bit
// words from the SplitMix64 finaliser (Steele, Lea & Flood 2014) applied to a key mixed from
// (s, p) and the counters 2e and 2e+1, turned into uniforms with 53 random bits, then one normal
// by Box-Muller, z = sqrt(-2 ln u1) cos(2 pi u2), computed in double with kernels/math.h's log and
// cos (no libm), scaled by the standard deviation and rounded once to float. Same bits for any
// slice, on any rank, with any C library.
#pragma once

#include <cstdint>

#include "model/gpt_config.h"
#include "model/manifest.h"

namespace zt::model {

/// How a parameter is initialised.
enum class InitKind { normal, zeros, ones };

/// The rule for one parameter.
struct InitRule {
  InitKind kind = InitKind::zeros;  ///< distribution
  double std = 0.0;                 ///< standard deviation when kind is normal
};

/// The GPT-2 rule for a parameter of the manifest.
/// @param cfg the configuration (for L). @param info the parameter. @return its rule.
InitRule init_rule(const GptConfig& cfg, const ParamInfo& info);

/// The standard-normal draw for (seed, parameter index, element index), in double.
/// @param seed run seed. @param param_index index in the manifest. @param element element index.
/// @return z ~ N(0, 1).
double init_standard_normal(uint64_t seed, int64_t param_index, int64_t element);

/// Initial FP32 values of elements [first, first + count) of one parameter.
/// @param cfg the configuration. @param seed run seed. @param param_index index in the manifest.
/// @param first first element. @param count number of elements (first + count <= numel).
/// @param out count floats (written).
void init_param_slice(const GptConfig& cfg, uint64_t seed, int64_t param_index, int64_t first, int64_t count,
                      float* out);

/// Initial FP32 values of the whole model in the dense canonical layout.
/// @param cfg the configuration. @param seed run seed. @param out param_count(cfg) floats (written).
void init_params(const GptConfig& cfg, uint64_t seed, float* out);

}  // namespace zt::model
