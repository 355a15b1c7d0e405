// model/manifest.cc — building the canonical parameter list and its units.
#include "model/manifest.h"

#include "model/param_provider.h"

#include "core/check.h"

namespace zt::model {

namespace {

// Open unit `name` at dense offset `offset` (the parameters added next are its); a block's unit
// joins layer_units[layer], which must be sized already.
void open_unit(Manifest& m, std::string name, int64_t offset, int layer, int block, int global) {
  m.units.push_back({.name = std::move(name),
                     .offset = offset,
                     .first_param = static_cast<int>(m.params.size()),
                     .layer = layer,
                     .block = block,
                     .global_index = global});
  if (layer >= 0) m.layer_units[static_cast<std::size_t>(layer)].push_back(static_cast<int>(m.units.size()) - 1);
}

// Append a parameter of `shape` to the last unit at dense offset `offset`, and move `offset` past
// it. @return the parameter, its runs as given.
ParamInfo& add_param(Manifest& m, int64_t& offset, std::string name, std::vector<int64_t> shape,
                     std::vector<CanonicalRun> runs) {
  ParamInfo p;
  p.name = std::move(name);
  p.numel = 1;
  for (int64_t d : shape) p.numel *= d;
  p.shape = std::move(shape);
  p.offset = offset;
  p.unit = static_cast<int>(m.units.size()) - 1;
  p.offset_in_unit = offset - m.units.back().offset;
  p.runs = std::move(runs);
  offset += p.numel;
  m.units.back().numel += p.numel;
  m.units.back().num_params += 1;
  m.params.push_back(std::move(p));
  return m.params.back();
}

}  // namespace

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
  m.layer_units.resize(static_cast<std::size_t>(cfg.layers));
  int64_t offset = 0;
  const auto begin_unit = [&](std::string name, int layer) {
    open_unit(m, std::move(name), offset, layer, -1, static_cast<int>(m.units.size()));
  };
  const auto add = [&](std::string name, std::vector<int64_t> shape) {
    ParamInfo& p = add_param(m, offset, std::move(name), std::move(shape), {});
    p.runs = {{0, static_cast<int>(m.params.size()) - 1, 0, p.numel, p.offset}};  // each is its canonical self
  };
  begin_unit("embeddings", -1);
  add("wte", {V, C});
  add("wpe", {T, C});
  for (int64_t l = 0; l < cfg.layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    begin_unit("h." + std::to_string(l), static_cast<int>(l));
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
  begin_unit("ln_f", -1);
  add("ln_f.weight", {C});
  add("ln_f.bias", {C});
  m.param_count = offset;
  return m;
}

namespace {

/// Builds a storage manifest unit by unit, each parameter made of runs of a canonical one.
class StorageBuilder {
 public:
  explicit StorageBuilder(const GptConfig& cfg) : canon_(make_manifest(cfg)) {
    m_.layer_units.resize(static_cast<std::size_t>(cfg.layers));
  }
  void begin_unit(std::string name, int layer, int block, int global) {
    open_unit(m_, std::move(name), offset_, layer, block, global);
  }
  /// A parameter made of runs of the canonical parameter `canon_name`.
  void add(std::string name, std::vector<int64_t> shape, const std::string& canon_name,
           std::vector<CanonicalRun> runs) {
    const int c = canon_.index_of(canon_name);
    for (auto& r : runs) {
      r.param = c;
      r.dense = canon_.params[static_cast<std::size_t>(c)].offset + r.canonical_offset;
    }
    add_param(m_, offset_, std::move(name), std::move(shape), std::move(runs));
  }
  /// A replicated parameter, as in canonical order.
  void whole(const std::string& name) {
    const auto& info = canon_.params[static_cast<std::size_t>(canon_.index_of(name))];
    add(name, info.shape, name, {{0, 0, 0, info.numel}});
  }
  /// Block j of layer prefix h (C = width, Cb = C / blocks): its heads' q, k, v rows, its c_proj
  /// input columns, its 4Cb hidden units and their columns.
  void block(const std::string& h, int64_t j, int64_t C, int64_t Cb) {
    const std::string b = "/b" + std::to_string(j);
    // c_attn: the q, k and v rows of block j's heads ([q_j; k_j; v_j], each Cb rows of C)
    add(h + "attn.c_attn.weight" + b, {3 * Cb, C}, h + "attn.c_attn.weight",
        {{0, 0, (0 * C + j * Cb) * C, Cb * C},
         {Cb * C, 0, (1 * C + j * Cb) * C, Cb * C},
         {2 * Cb * C, 0, (2 * C + j * Cb) * C, Cb * C}});
    add(h + "attn.c_attn.bias" + b, {3 * Cb}, h + "attn.c_attn.bias",
        {{0, 0, 0 * C + j * Cb, Cb}, {Cb, 0, 1 * C + j * Cb, Cb}, {2 * Cb, 0, 2 * C + j * Cb, Cb}});
    // attn.c_proj: block j's Cb input columns of every output row
    add(h + "attn.c_proj.weight" + b, {C, Cb}, h + "attn.c_proj.weight", rows(C, Cb, C, j * Cb));
    // c_fc: block j's 4Cb hidden units (rows); mlp.c_proj: their columns
    add(h + "mlp.c_fc.weight" + b, {4 * Cb, C}, h + "mlp.c_fc.weight", {{0, 0, j * 4 * Cb * C, 4 * Cb * C}});
    add(h + "mlp.c_fc.bias" + b, {4 * Cb}, h + "mlp.c_fc.bias", {{0, 0, j * 4 * Cb, 4 * Cb}});
    add(h + "mlp.c_proj.weight" + b, {C, 4 * Cb}, h + "mlp.c_proj.weight", rows(C, 4 * Cb, 4 * C, j * 4 * Cb));
  }
  Manifest take() {
    m_.param_count = offset_;
    return std::move(m_);
  }

 private:
  // `count` consecutive-in-storage runs, each a row slice
  static std::vector<CanonicalRun> rows(int64_t count, int64_t row_len, int64_t canon_row_stride, int64_t first_row) {
    std::vector<CanonicalRun> r;
    for (int64_t i = 0; i < count; ++i) r.push_back({i * row_len, 0, i * canon_row_stride + first_row, row_len});
    return r;
  }
  Manifest canon_, m_;
  int64_t offset_ = 0;
};

}  // namespace

Manifest make_storage_manifest(const GptConfig& cfg, const MpPlacement& mp) {
  validate(cfg);
  validate(cfg, mp);
  if (cfg.mp_blocks == 1) return make_manifest(cfg);  // one block: the canonical layout, nothing split
  const int64_t C = cfg.width, B = cfg.mp_blocks, Cb = C / B, J = local_blocks(cfg, mp);
  StorageBuilder m(cfg);
  m.begin_unit("embeddings", -1, -1, 0);
  m.whole("wte");
  m.whole("wpe");
  for (int64_t l = 0; l < cfg.layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    const int global = static_cast<int>(1 + l * (B + 1));
    m.begin_unit("h." + std::to_string(l), static_cast<int>(l), -1, global);
    for (const char* name :
         {"ln_1.weight", "ln_1.bias", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_proj.bias"})
      m.whole(h + name);
    for (int64_t j = first_block(cfg, mp); j < first_block(cfg, mp) + J; ++j) {
      m.begin_unit("h." + std::to_string(l) + "/b" + std::to_string(j), static_cast<int>(l), static_cast<int>(j),
                   global + 1 + static_cast<int>(j));
      m.block(h, j, C, Cb);
    }
  }
  m.begin_unit("ln_f", -1, -1, static_cast<int>(1 + cfg.layers * (B + 1)));
  m.whole("ln_f.weight");
  m.whole("ln_f.bias");
  return m.take();
}

void to_canonical(const Manifest& stored, const float* values, float* canonical) {
  for (const auto& p : stored.params)
    for (const auto& r : p.runs)
      for (int64_t k = 0; k < r.length; ++k) canonical[r.dense + k] = values[p.offset + r.offset + k];
}

std::vector<ProviderCall> provider_calls(const Manifest& m, const PipeStage& stage) {
  using K = ProviderCall::Kind;
  std::vector<ProviderCall> c;
  const int ln_f = static_cast<int>(m.units.size()) - 1;
  const auto L = static_cast<int64_t>(m.layer_units.size());
  const int64_t first = stage.begin, end = stage.end < 0 ? L : stage.end;
  const bool embedding = first == 0, head = end == L;
  const auto each = [&](K kind, const std::vector<int>& units) {
    for (int u : units) c.push_back({kind, u});
  };
  const auto param_done = [&](int param) {
    c.push_back({K::param_grad_done, m.params[static_cast<std::size_t>(param)].unit, param});
  };
  const auto layer = [&](int64_t l) -> const std::vector<int>& { return m.layer_units[static_cast<std::size_t>(l)]; };
  if (embedding) c.push_back({K::acquire, 0}), c.push_back({K::release, 0});
  for (int64_t l = first; l < end; ++l) each(K::acquire, layer(l)), each(K::release, layer(l));
  if (head) {
    c.push_back({K::acquire, ln_f}), c.push_back({K::release, ln_f});
    c.push_back({K::acquire, 0}), c.push_back({K::release, 0});  // the tied head
    c.push_back({K::acquire, 0});
    if (embedding) c.push_back({K::grad, 0});  // else the head's part goes to tied_head_grad()
    c.push_back({K::release, 0});
    const int lnf_first = m.units[static_cast<std::size_t>(ln_f)].first_param;
    c.push_back({K::acquire, ln_f}), c.push_back({K::grad, ln_f});
    param_done(lnf_first), param_done(lnf_first + 1);
    c.push_back({K::grad_done, ln_f}), c.push_back({K::release, ln_f});
  }
  for (int64_t l = end - 1; l >= first; --l) {
    each(K::acquire, layer(l)), each(K::grad, layer(l));
    if (layer(l).size() == 1) {  // one unit: pairs from its end, as backward finishes them (weight, bias)
      const auto& info = m.units[static_cast<std::size_t>(layer(l).front())];
      for (int k0 = info.num_params - 2; k0 >= 0; k0 -= 2)
        param_done(info.first_param + k0), param_done(info.first_param + k0 + 1);
      c.push_back({K::grad_done, layer(l).front()});
    } else {  // split: after the block's backward, each unit's parameters from its last
      for (int u : layer(l)) {
        const auto& info = m.units[static_cast<std::size_t>(u)];
        for (int k = info.num_params - 1; k >= 0; --k) param_done(info.first_param + k);
        c.push_back({K::grad_done, u});
      }
    }
    each(K::release, layer(l));
  }
  if (embedding) {
    if (!head) c.push_back({K::grad, 0});  // the head's part is copied in, then the embedding's added
    param_done(1), param_done(0);          // wpe, wte
    c.push_back({K::grad_done, 0});
  }
  return c;
}

std::size_t forward_call_count(const Manifest& m, const PipeStage& stage) {
  const auto L = static_cast<int64_t>(m.layer_units.size());
  const int64_t end = stage.end < 0 ? L : stage.end;
  std::size_t reads = (stage.begin == 0 ? 1 : 0) + (end == L ? 2 : 0);  // the embedding; ln_f and the tied head
  for (int64_t l = stage.begin; l < end; ++l) reads += m.layer_units[static_cast<std::size_t>(l)].size();
  return 2 * reads;
}

std::vector<int> stage_units(const Manifest& m, const PipeStage& stage) {
  const auto L = static_cast<int64_t>(m.layer_units.size());
  const int64_t end = stage.end < 0 ? L : stage.end;
  std::vector<int> u;
  if (stage.begin == 0) u.push_back(0);
  for (int64_t l = stage.begin; l < end; ++l)
    for (int x : m.layer_units[static_cast<std::size_t>(l)]) u.push_back(x);
  if (end == L) u.push_back(static_cast<int>(m.units.size()) - 1);
  return u;
}

void from_canonical(const Manifest& stored, const float* canonical, float* values) {
  for (const auto& p : stored.params)
    for (const auto& r : p.runs)
      for (int64_t k = 0; k < r.length; ++k) values[p.offset + r.offset + k] = canonical[r.dense + k];
}

}  // namespace zt::model
