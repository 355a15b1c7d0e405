// apps/zero-ckpt/export_hf.cc — `zero-ckpt export --format safetensors`: the master weights as a
// directory Hugging Face transformers loads with GPT2LMHeadModel.from_pretrained(OUT).
//
// model.safetensors (the published format): an 8-byte little-endian header length N, N bytes of
// UTF-8 JSON — {"__metadata__": {string: string}, name: {"dtype", "shape", "data_offsets":
// [begin, end)}} with offsets into the byte buffer that follows the header — then that buffer,
// tensors packed end to end. N is padded with spaces to a multiple of 8, so the buffer starts
// 8-byte aligned. Names are GPT-2's as Hugging Face stores them ("wte.weight", "h.0.attn.c_attn.
// weight", ...). config.json describes the same model to transformers, with this project's
// numerics (LayerNorm epsilon, GELU's tanh approximation). OUT appears whole or not at all: both
// files are written and fsynced in OUT.tmp.<pid>, which is then renamed to OUT.
// Not an importer, and no tokenizer: the vocabulary is this project's character-level one.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "apps/zero-ckpt/commands.h"
#include "checkpoint/reader.h"
#include "core/atomic_file.h"
#include "core/check.h"
#include "core/file_io.h"
#include "kernels/layernorm.h"
#include "model/gpt_config.h"
#include "model/manifest.h"

namespace zt::ckpt_tool {
namespace {

namespace fs = std::filesystem;

int64_t model_field(const checkpoint::Manifest& m, const char* key, const std::string& where) {
  ZT_CHECK(m.model.is_object() && m.model.contains(key) && m.model[key].is_number_integer(), where,
           ": the model has no integer \"", key, "\" (an export needs the GPT's shape)");
  return m.model[key].get<int64_t>();
}

// The GPT the checkpoint holds; its parameters must be exactly make_manifest's.
model::GptConfig gpt_of(const checkpoint::Manifest& m, const std::string& where) {
  model::GptConfig cfg;
  cfg.vocab = model_field(m, "vocab", where);
  cfg.context = model_field(m, "context", where);
  cfg.layers = model_field(m, "layers", where);
  cfg.heads = model_field(m, "heads", where);
  cfg.width = model_field(m, "width", where);
  cfg.mp_blocks = 1;  // the blocks change the rounding, never the canonical parameters
  model::validate(cfg);
  const auto canonical = model::make_manifest(cfg);
  ZT_CHECK(canonical.params.size() == m.params.size(), where, ": ", m.params.size(),
           " parameters, a GPT of this shape has ", canonical.params.size());
  for (std::size_t i = 0; i < m.params.size(); ++i)
    ZT_CHECK(m.params[i].name == canonical.params[i].name && m.params[i].shape == canonical.params[i].shape, where,
             ": parameter ", i, " is ", m.params[i].name, ", a GPT of this shape has ", canonical.params[i].name,
             " there with another shape or name");
  return cfg;
}

// Hugging Face's GPT-2 uses Conv1D for these four matrices: y = x W + b with W stored [in, out],
// the TRANSPOSE of nn.Linear's [out, in] that the checkpoint holds. They are transposed on export.
bool is_conv1d(const std::string& name) {
  for (const char* suffix : {"attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight"}) {
    const std::string s = suffix;
    if (name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) return true;
  }
  return false;
}

std::string hf_name(const std::string& name) { return name == "wte" || name == "wpe" ? name + ".weight" : name; }

// The shortest decimal that reads back as f, as a double (1e-5f gives 1e-05, not 9.99999975e-06).
double shortest_decimal(float f) {
  char text[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(f));
    if (std::strtof(text, nullptr) == f) break;
  }
  return std::strtod(text, nullptr);
}

void write_safetensors(const std::string& path, const checkpoint::Manifest& m, const std::vector<float>& master,
                       const nlohmann::ordered_json& metadata) {
  nlohmann::ordered_json header;
  header["__metadata__"] = metadata;
  uint64_t at = 0;
  for (const auto& p : m.params) {
    const std::vector<int64_t> shape = is_conv1d(p.name) ? std::vector<int64_t>{p.shape[1], p.shape[0]} : p.shape;
    const uint64_t bytes = static_cast<uint64_t>(p.numel) * sizeof(float);
    header[hf_name(p.name)] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {at, at + bytes}}};
    at += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the tensor buffer starts 8-byte aligned
  const uint64_t length = text.size();          // little-endian, as the host (reader.cc asserts)
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  ZT_CHECK(fd >= 0, "cannot create ", path, ": ", std::strerror(errno));
  try {
    write_all(fd, &length, sizeof length, path);
    write_all(fd, text.data(), text.size(), path);
    std::vector<float> transposed;
    const float* values = master.data();
    for (const auto& p : m.params) {
      const float* src = values;
      if (is_conv1d(p.name)) {  // [out, in] -> [in, out]
        const int64_t rows = p.shape[0], cols = p.shape[1];
        transposed.resize(static_cast<std::size_t>(p.numel));
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) transposed[static_cast<std::size_t>(c * rows + r)] = src[r * cols + c];
        src = transposed.data();
      }
      write_all(fd, src, static_cast<std::size_t>(p.numel) * sizeof(float), path);
      values += p.numel;
    }
    fsync_file(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  close_file(fd, path);
}

nlohmann::ordered_json gpt2_config(const model::GptConfig& g) {
  nlohmann::ordered_json c;
  c["architectures"] = {"GPT2LMHeadModel"};
  c["model_type"] = "gpt2";
  c["vocab_size"] = g.vocab;
  c["n_positions"] = g.context;
  c["n_ctx"] = g.context;
  c["n_embd"] = g.width;
  c["n_layer"] = g.layers;
  c["n_head"] = g.heads;
  c["n_inner"] = nullptr;                 // 4 n_embd, as the blocks here
  c["activation_function"] = "gelu_new";  // GELU's tanh approximation (kernels/gelu.h)
  c["layer_norm_epsilon"] = shortest_decimal(kernels::kLayerNormEps);
  c["resid_pdrop"] = 0.0;  // this project trains without dropout
  c["embd_pdrop"] = 0.0;
  c["attn_pdrop"] = 0.0;
  c["summary_first_dropout"] = 0.0;
  c["scale_attn_weights"] = true;   // scores / sqrt(C/H)
  c["tie_word_embeddings"] = true;  // the head reads wte
  // no begin/end token in the character vocabulary; null, because a missing id would make
  // transformers assume GPT-2's 50256, outside this vocabulary
  c["bos_token_id"] = nullptr;
  c["eos_token_id"] = nullptr;
  c["torch_dtype"] = "float32";
  return c;
}

}  // namespace

void export_safetensors(const std::string& dir, const std::string& out) {
  checkpoint::Reader reader(checkpoint::resolve_checkpoint(dir));
  const checkpoint::Manifest& m = reader.manifest();
  const std::string where = (fs::path(reader.dir()) / checkpoint::kManifestName).string();
  const model::GptConfig cfg = gpt_of(m, where);
  require_absent(out);
  const std::vector<float> master = reader.read_dense("master");

  nlohmann::ordered_json metadata;
  metadata["format"] = "pt";
  metadata["source"] = "zero-teach checkpoint " + reader.dir();
  if (m.run.is_object() && m.run.contains("step")) metadata["step"] = m.run["step"].dump();
  metadata["state"] = "master (FP32)";
  metadata["layout"] =
      "Hugging Face GPT-2: the Conv1D weights (attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj) are [in, out], "
      "the transpose of the checkpoint's nn.Linear [out, in]";
  metadata["vocab"] = std::to_string(cfg.vocab) +
                      " symbols of this project's character-level data (src/data), not GPT-2's BPE; no tokenizer";

  const std::string temp = out + ".tmp." + std::to_string(::getpid());
  ZT_CHECK(::mkdir(temp.c_str(), 0755) == 0, "cannot create ", temp, ": ", std::strerror(errno));
  try {
    write_safetensors((fs::path(temp) / "model.safetensors").string(), m, master, metadata);
    write_file_atomic((fs::path(temp) / "config.json").string(), gpt2_config(cfg).dump(2) + "\n");
    fsync_dir(temp);
    if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, out.c_str(), RENAME_NOREPLACE) != 0) {
      ZT_CHECK(errno == EINVAL || errno == ENOSYS, "cannot rename ", temp, " to ", out, ": ", std::strerror(errno));
      require_absent(out);  // a filesystem without RENAME_NOREPLACE
      ZT_CHECK(::rename(temp.c_str(), out.c_str()) == 0, "cannot rename ", temp, " to ", out, ": ",
               std::strerror(errno));
    }
  } catch (...) {
    std::error_code ec;
    fs::remove_all(temp, ec);
    throw;
  }
  const fs::path parent = fs::path(out).parent_path();
  fsync_dir(parent.empty() ? "." : parent.string());
  std::printf("%s: model.safetensors (%zu tensors, %zu values) and config.json from %s\n", out.c_str(), m.params.size(),
              master.size(), reader.dir().c_str());
}

}  // namespace zt::ckpt_tool
