// model/manifest.h — every parameter of the GPT by name, shape and place, in canonical order,
// and the units (groups of consecutive parameters) that forward and backward acquire one at a time.
//
// Canonical order (GPT-2 / nanoGPT names, PyTorch nn.Linear shapes [out, in]):
//   wte [V,C], wpe [T,C],
//   per layer l: h.l.ln_1.weight [C], h.l.ln_1.bias [C], h.l.attn.c_attn.weight [3C,C],
//     h.l.attn.c_attn.bias [3C], h.l.attn.c_proj.weight [C,C], h.l.attn.c_proj.bias [C],
//     h.l.ln_2.weight [C], h.l.ln_2.bias [C], h.l.mlp.c_fc.weight [4C,C], h.l.mlp.c_fc.bias [4C],
//     h.l.mlp.c_proj.weight [C,4C], h.l.mlp.c_proj.bias [C],
//   ln_f.weight [C], ln_f.bias [C].
// Offsets are dense (no padding) in that order. Units: 0 = embeddings (wte, wpe), 1..L = the
// blocks, L+1 = ln_f; each is a contiguous range of the dense layout, and a parameter's
// offset_in_unit locates it inside its unit, so a unit can live in a buffer of its own (padded at
// its end, as the ZeRO stages do). The tied head owns no storage: it reads wte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/gpt_config.h"

namespace zt::model {

/// One parameter tensor.
struct ParamInfo {
  std::string name;            ///< canonical name, e.g. "h.0.attn.c_attn.weight"
  std::vector<int64_t> shape;  ///< row-major shape
  int64_t offset = 0;          ///< first element in the dense canonical layout
  int64_t numel = 0;           ///< number of elements
  int unit = 0;                ///< the unit holding it
  int64_t offset_in_unit = 0;  ///< first element relative to the unit's first element
};

/// One unit: a contiguous run of parameters acquired and released as a whole.
struct UnitInfo {
  std::string name;     ///< "embeddings", "h.<l>" or "ln_f"
  int64_t offset = 0;   ///< first element in the dense canonical layout
  int64_t numel = 0;    ///< number of elements
  int first_param = 0;  ///< index of its first parameter in Manifest::params
  int num_params = 0;   ///< how many parameters it holds
};

/// All parameters and units of one configuration.
struct Manifest {
  std::vector<ParamInfo> params;  ///< canonical order
  std::vector<UnitInfo> units;    ///< 0 = embeddings, 1..L = blocks, L+1 = ln_f
  int64_t param_count = 0;        ///< total elements (psi)

  /// Look a parameter up by name (zt::Error if absent). @param name the canonical name.
  /// @return its index in params.
  int index_of(const std::string& name) const;
};

/// Build the manifest of a configuration (validated first).
/// @param cfg the configuration. @return its manifest.
Manifest make_manifest(const GptConfig& cfg);

/// Number of parameters of a configuration: V C + T C + L (12 C^2 + 13 C) + 2 C.
/// @param cfg the configuration. @return psi.
int64_t param_count(const GptConfig& cfg);

/// Element offsets of each tensor inside a block unit (the same for every layer); they equal the
/// manifest's offset_in_unit values, which tests check.
struct BlockOffsets {
  int64_t ln_1_w;       ///< ln_1.weight [C]
  int64_t ln_1_b;       ///< ln_1.bias [C]
  int64_t attn_w;       ///< attn.c_attn.weight [3C,C]
  int64_t attn_b;       ///< attn.c_attn.bias [3C]
  int64_t attn_proj_w;  ///< attn.c_proj.weight [C,C]
  int64_t attn_proj_b;  ///< attn.c_proj.bias [C]
  int64_t ln_2_w;       ///< ln_2.weight [C]
  int64_t ln_2_b;       ///< ln_2.bias [C]
  int64_t fc_w;         ///< mlp.c_fc.weight [4C,C]
  int64_t fc_b;         ///< mlp.c_fc.bias [4C]
  int64_t mlp_proj_w;   ///< mlp.c_proj.weight [C,4C]
  int64_t mlp_proj_b;   ///< mlp.c_proj.bias [C]
  int64_t numel;        ///< elements in one block: 12 C^2 + 13 C
};

/// The block layout for width C. @param C the width. @return the offsets.
BlockOffsets block_offsets(int64_t C);

}  // namespace zt::model
