// model/pipe_stage.h — which contiguous run of transformer blocks one model instance runs, when the
// model is cut into pipeline stages (schedule/pipeline.h chooses the cut; this file only says what
// a cut means for the model).
//
// Stage [begin, end) of L blocks runs blocks begin .. end-1. The first stage (begin = 0) also runs
// the embedding; the last (end = L) the final LayerNorm, the tied head and the loss. One instance
// running every block (the default, end = -1) is the single-device model. The head is tied to
// wte, which the embedding owns: a last stage that is not also the first reads wte's values (the
// caller brings them) and hands the head's part of wte's gradient back to the first stage
// (Gpt::tied_head_grad), where the embedding adds its part exactly as on one device
// (kernels/embedding.h: the head's part first, rounded to T, then the embedding's, rounded once).
// Nothing here communicates: the caller moves the boundary tensors (schedule/pipeline.h's traffic).
#pragma once

#include <cstdint>

#include "core/check.h"
#include "model/gpt_config.h"

namespace zt::model {

/// The blocks one instance runs: [begin, end); end < 0 means every block (no pipeline).
struct PipeStage {
  int64_t begin = 0;  ///< first block
  int64_t end = -1;   ///< one past the last block; < 0: L
};

/// One past the stage's last block. @param cfg the model. @param s the stage. @return end, or L.
inline int64_t stage_end(const GptConfig& cfg, const PipeStage& s) { return s.end < 0 ? cfg.layers : s.end; }
/// Whether the stage runs the embedding (it is the first). @param s the stage. @return begin == 0.
inline bool runs_embedding(const PipeStage& s) { return s.begin == 0; }
/// Whether the stage runs ln_f, the head and the loss (it is the last). @param cfg the model.
/// @param s the stage. @return end == L.
inline bool runs_head(const GptConfig& cfg, const PipeStage& s) { return stage_end(cfg, s) == cfg.layers; }
/// Whether wte crosses stages: the head runs on a stage without the embedding, or the reverse.
/// @param cfg the model. @param s the stage. @return exactly one of the two runs here.
inline bool tied_across_stages(const GptConfig& cfg, const PipeStage& s) {
  return runs_embedding(s) != runs_head(cfg, s);
}

/// zt::Error (one line) unless 0 <= begin < end <= L. @param cfg the model. @param s the stage.
inline void validate(const GptConfig& cfg, const PipeStage& s) {
  const int64_t end = stage_end(cfg, s);
  ZT_CHECK(s.begin >= 0 && s.begin < end && end <= cfg.layers, "pipeline stage [", s.begin, ", ", end,
           ") is not a non-empty run of the model's ", cfg.layers, " blocks");
}

}  // namespace zt::model
