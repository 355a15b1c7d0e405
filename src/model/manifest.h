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
//
// That canonical manifest (make_manifest) names the model as PyTorch/GPT-2 checkpoints do; dumps
// and exports use it. What a rank STORES is its storage manifest (make_storage_manifest): for
// mp_blocks Q = 1 the canonical one itself; for Q > 1 each block's split tensors (c_attn rows of
// its heads, attn.c_proj columns, c_fc rows, mlp.c_proj columns; model/tensor_parallel.h) form a
// unit of their own, "h.l/bj", after the block's replicated unit "h.l" (its LayerNorms and the
// row-parallel biases), and an MP rank holds only its blocks' units. Every stored parameter maps
// back to canonical elements through runs, so any layout can be read back in canonical order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/gpt_config.h"
#include "model/pipe_stage.h"
#include "model/tensor_parallel.h"

namespace zt::model {

/// A run of a stored parameter's elements that are consecutive elements of one canonical parameter.
struct CanonicalRun {
  int64_t offset = 0;            ///< first element, relative to the stored parameter
  int param = 0;                 ///< the canonical parameter (index in make_manifest's params)
  int64_t canonical_offset = 0;  ///< first element, relative to the canonical parameter
  int64_t length = 0;            ///< elements in the run
  int64_t dense = 0;             ///< first element in the canonical dense layout (make_manifest)
};

/// One parameter tensor.
struct ParamInfo {
  std::string name;                ///< canonical name, e.g. "h.0.attn.c_attn.weight" ("/bj": block j's part)
  std::vector<int64_t> shape;      ///< row-major shape
  int64_t offset = 0;              ///< first element in this manifest's dense layout
  int64_t numel = 0;               ///< number of elements
  int unit = 0;                    ///< the unit holding it
  int64_t offset_in_unit = 0;      ///< first element relative to the unit's first element
  std::vector<CanonicalRun> runs;  ///< where its elements sit in canonical order (they cover numel)
};

/// One unit: a contiguous run of parameters acquired and released as a whole.
struct UnitInfo {
  std::string name;      ///< "embeddings", "h.<l>", "h.<l>/b<j>" or "ln_f"
  int64_t offset = 0;    ///< first element in this manifest's dense layout
  int64_t numel = 0;     ///< number of elements
  int first_param = 0;   ///< index of its first parameter in Manifest::params
  int num_params = 0;    ///< how many parameters it holds
  int layer = -1;        ///< the transformer block it belongs to (-1: embeddings, ln_f)
  int block = -1;        ///< the tensor-parallel block it holds (-1: replicated on every MP rank)
  int global_index = 0;  ///< its index among the units of the whole model (the one-rank layout)
};

/// All parameters and units of one configuration.
struct Manifest {
  std::vector<ParamInfo> params;  ///< canonical order (a storage manifest: storage order)
  std::vector<UnitInfo> units;    ///< 0 = embeddings, then every block's units, ln_f last
  int64_t param_count = 0;        ///< total elements (psi; of this rank for a storage manifest)
  /// The units of block l in the order the model acquires them: {"h.l"} for mp_blocks 1;
  /// {"h.l", "h.l/bj", ...} for the blocks j this rank holds otherwise.
  std::vector<std::vector<int>> layer_units;

  /// Look a parameter up by name (zt::Error if absent). @param name the canonical name.
  /// @return its index in params.
  int index_of(const std::string& name) const;
};

/// Build the manifest of a configuration (validated first).
/// @param cfg the configuration. @return its manifest.
Manifest make_manifest(const GptConfig& cfg);

/// The storage manifest of one model-parallel rank (see the file comment; for mp_blocks 1 it is
/// make_manifest's). @param cfg the configuration. @param mp the rank's placement. @return it.
Manifest make_storage_manifest(const GptConfig& cfg, const MpPlacement& mp);

/// The units a pipeline stage holds (model/pipe_stage.h), in unit order: the embeddings' unit on
/// the first stage, its blocks' units, ln_f's on the last. The tied head's reads of wte on a last
/// stage without the embedding do not make unit 0 the stage's: the first stage holds it.
/// @param m the manifest. @param stage the stage. @return unit indices.
std::vector<int> stage_units(const Manifest& m, const PipeStage& stage);

/// Write a rank's stored values (dense in its storage manifest) into canonical order.
/// @param stored the storage manifest. @param values stored.param_count values.
/// @param canonical param_count(cfg) values; the stored elements are written, others untouched.
void to_canonical(const Manifest& stored, const float* values, float* canonical);

/// Read a rank's stored values out of canonical order (the inverse of to_canonical).
/// @param stored the storage manifest. @param canonical param_count(cfg) values.
/// @param values stored.param_count values (written).
void from_canonical(const Manifest& stored, const float* canonical, float* values);

/// Number of parameters of a configuration: V C + T C + L (12 C^2 + 13 C) + 2 C.
/// @param cfg the configuration. @return psi.
int64_t param_count(const GptConfig& cfg);

}  // namespace zt::model
