// model/gpt_config.cc — validation of a GptConfig.
#include "model/gpt_config.h"
#include "model/tensor_parallel.h"

#include "core/check.h"

namespace zt::model {

void validate(const GptConfig& cfg) {
  ZT_CHECK(cfg.vocab > 0, "vocab must be positive, got ", cfg.vocab);
  ZT_CHECK(cfg.context > 0, "context must be positive, got ", cfg.context);
  ZT_CHECK(cfg.layers > 0, "layers must be positive, got ", cfg.layers);
  ZT_CHECK(cfg.heads > 0, "heads must be positive, got ", cfg.heads);
  ZT_CHECK(cfg.width > 0, "width must be positive, got ", cfg.width);
  ZT_CHECK(cfg.width % cfg.heads == 0, "width ", cfg.width, " is not divisible by heads ", cfg.heads);
  ZT_CHECK(cfg.mp_blocks > 0 && (cfg.mp_blocks & (cfg.mp_blocks - 1)) == 0, "mp_blocks ", cfg.mp_blocks,
           " is not a power of two");
  ZT_CHECK(cfg.heads % cfg.mp_blocks == 0, "mp_blocks ", cfg.mp_blocks, " does not divide the ", cfg.heads,
           " heads (a block holds whole heads)");
  const int64_t limit = int64_t{1} << 30;  // keeps every matrix dimension and product in range
  ZT_CHECK(cfg.vocab <= limit && cfg.context <= limit && cfg.width <= (int64_t{1} << 20) &&
               cfg.vocab * cfg.width <= limit * 2,
           "model too large for this implementation (vocab ", cfg.vocab, ", width ", cfg.width, ")");
}

void validate(const GptConfig& cfg, const MpPlacement& mp) {
  ZT_CHECK(mp.size >= 1 && cfg.mp_blocks % mp.size == 0, "model-parallel size ", mp.size, " does not divide mp_blocks ",
           cfg.mp_blocks, " (each model-parallel rank holds a whole number of blocks)");
  ZT_CHECK(mp.rank >= 0 && mp.rank < mp.size, "model-parallel rank ", mp.rank, " outside a group of ", mp.size);
}

}  // namespace zt::model
