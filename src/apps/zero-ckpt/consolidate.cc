// apps/zero-ckpt/consolidate.cc — `zero-ckpt consolidate`: one state as one dense FP32 file, the
// parameters end to end in canonical order, exactly what zero-train --dump-params writes for the
// master weights, so `cmp` compares a checkpoint with a run's dump.
#include <cstdio>
#include <filesystem>

#include "apps/zero-ckpt/commands.h"
#include "checkpoint/reader.h"
#include "core/atomic_file.h"
#include "core/check.h"

namespace zt::ckpt_tool {

void require_absent(const std::string& out) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(std::filesystem::symlink_status(out, ec));
  ZT_CHECK(!exists, out, " already exists; remove it or choose another output");
}

void consolidate(const std::string& dir, const std::string& out, const std::string& state) {
  checkpoint::Reader reader(checkpoint::resolve_checkpoint(dir));
  require_absent(out);
  const std::vector<float> values = reader.read_dense(state);
  write_file_atomic(out, values.data(), values.size() * sizeof(float));  // little-endian: reader.cc asserts it
  std::printf("%s: %zu values of %s from %s\n", out.c_str(), values.size(), state.c_str(), reader.dir().c_str());
}

}  // namespace zt::ckpt_tool
