// model/manifest.cc — building the canonical parameter list and its units.
#include "model/manifest.h"

#include "core/check.h"

namespace zt::model {

BlockOffsets block_offsets(int64_t C) {
  BlockOffsets o{};
  int64_t at = 0;
  const auto take = [&](int64_t n) {
    const int64_t here = at;
    at += n;
    return here;
  };
  o.ln_1_w = take(C);
  o.ln_1_b = take(C);
  o.attn_w = take(3 * C * C);
  o.attn_b = take(3 * C);
  o.attn_proj_w = take(C * C);
  o.attn_proj_b = take(C);
  o.ln_2_w = take(C);
  o.ln_2_b = take(C);
  o.fc_w = take(4 * C * C);
  o.fc_b = take(4 * C);
  o.mlp_proj_w = take(4 * C * C);
  o.mlp_proj_b = take(C);
  o.numel = at;
  return o;
}

int64_t param_count(const GptConfig& cfg) {
  const int64_t C = cfg.width;
  return cfg.vocab * C + cfg.context * C + cfg.layers * (12 * C * C + 13 * C) + 2 * C;
}

int Manifest::index_of(const std::string& name) const {
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].name == name) return static_cast<int>(i);
  }
  ZT_FAIL("no parameter named '", name, "'");
}

Manifest make_manifest(const GptConfig& cfg) {
  validate(cfg);
  const int64_t V = cfg.vocab, T = cfg.context, C = cfg.width;
  Manifest m;
  int64_t offset = 0;
  const auto begin_unit = [&](std::string name) {
    UnitInfo u;
    u.name = std::move(name);
    u.offset = offset;
    u.first_param = static_cast<int>(m.params.size());
    m.units.push_back(u);
  };
  const auto add = [&](std::string name, std::vector<int64_t> shape) {
    ParamInfo p;
    p.name = std::move(name);
    p.numel = 1;
    for (int64_t d : shape) p.numel *= d;
    p.shape = std::move(shape);
    p.offset = offset;
    p.unit = static_cast<int>(m.units.size()) - 1;
    p.offset_in_unit = offset - m.units.back().offset;
    offset += p.numel;
    m.units.back().numel += p.numel;
    m.units.back().num_params += 1;
    m.params.push_back(std::move(p));
  };
  begin_unit("embeddings");
  add("wte", {V, C});
  add("wpe", {T, C});
  for (int64_t l = 0; l < cfg.layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    begin_unit("h." + std::to_string(l));
    add(h + "ln_1.weight", {C});
    add(h + "ln_1.bias", {C});
    add(h + "attn.c_attn.weight", {3 * C, C});
    add(h + "attn.c_attn.bias", {3 * C});
    add(h + "attn.c_proj.weight", {C, C});
    add(h + "attn.c_proj.bias", {C});
    add(h + "ln_2.weight", {C});
    add(h + "ln_2.bias", {C});
    add(h + "mlp.c_fc.weight", {4 * C, C});
    add(h + "mlp.c_fc.bias", {4 * C});
    add(h + "mlp.c_proj.weight", {C, 4 * C});
    add(h + "mlp.c_proj.bias", {C});
  }
  begin_unit("ln_f");
  add("ln_f.weight", {C});
  add("ln_f.bias", {C});
  m.param_count = offset;
  return m;
}

}  // namespace zt::model
