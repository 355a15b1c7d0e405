// checkpoint/reader.cc — finding, opening, checking and reading a checkpoint (see reader.h).
//
// The index: for each (state, parameter) the indices of its intervals sorted by offset. Coverage
// (checked at open) makes them contiguous from 0 to numel, so a range starts at the last interval
// whose offset is <= its first element (a binary search) and continues with the next ones.
// An interval the range covers whole is read straight into the caller's memory and verified
// there; one it touches partly is read into a scratch buffer, verified, and the part copied.
#include "checkpoint/reader.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/check.h"
#include "core/file_io.h"

namespace zt::checkpoint {

static_assert(std::endian::native == std::endian::little, "checkpoints store FP32 little-endian, as memory holds it");

namespace {

namespace fs = std::filesystem;

std::string hex32(uint32_t x) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", x);
  return text;
}

// The step of a directory named step-<at least 8 digits>, or -1 for any other name.
int64_t step_of(const std::string& name) {
  const std::string prefix = "step-";
  if (name.compare(0, prefix.size(), prefix) != 0) return -1;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() < 8 || digits.size() > 18) return -1;
  for (char c : digits)
    if (c < '0' || c > '9') return -1;
  return std::stoll(digits);
}

}  // namespace

std::string resolve_checkpoint(const std::string& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  ZT_CHECK(fs::exists(status), "no checkpoint in ", path, ": it does not exist");
  ZT_CHECK(fs::is_directory(status), "no checkpoint in ", path, ": not a directory");
  if (fs::exists(fs::path(path) / kManifestName, ec)) return path;
  int64_t best = -1;
  std::string found;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    const int64_t step = step_of(entry.path().filename().string());
    std::error_code e2;
    if (step > best && entry.is_directory(e2) && fs::exists(entry.path() / kManifestName, e2)) {
      best = step;
      found = entry.path().string();
    }
  }
  ZT_CHECK(!ec, "cannot list ", path, ": ", ec.message());
  ZT_CHECK(best >= 0, "no checkpoint in ", path, " (no ", kManifestName,
           " and no complete step-NNNNNNNN directory in it)");
  return found;
}

struct Reader::Impl {
  std::string dir, manifest_path;
  Manifest m;
  std::vector<std::string> paths;                 // of m.files
  std::vector<int> fds;                           // opened on first use, -1 before
  std::vector<std::vector<std::vector<int>>> by;  // [state][param] -> interval indices by offset
  uint64_t bytes_read = 0;
  std::vector<float> scratch;

  int fd(int file) {
    int& f = fds[static_cast<std::size_t>(file)];
    if (f < 0) f = open_for_reading(paths[static_cast<std::size_t>(file)]);
    return f;
  }

  // Read interval `iv` whole into dst (4 * iv.length bytes) and check its CRC.
  void read_interval(const Interval& iv, void* dst) {
    const std::size_t bytes = static_cast<std::size_t>(iv.length) * sizeof(float);
    const std::string& path = paths[static_cast<std::size_t>(iv.file)];
    pread_all(fd(iv.file), dst, bytes, iv.byte_offset, path);
    bytes_read += bytes;
    const uint32_t crc = crc32c(dst, bytes);
    ZT_CHECK(crc == iv.crc32c, path, ": bytes ", iv.byte_offset, "..", iv.byte_offset + bytes, " (", describe(m, iv),
             ") fail their checksum (crc32c ", hex32(crc), ", the manifest says ", hex32(iv.crc32c), ")");
  }

  std::size_t state_index(const std::string& state) const {
    const auto it = std::find(m.states.begin(), m.states.end(), state);
    if (it == m.states.end()) {
      std::string saved;
      for (const auto& s : m.states) saved += (saved.empty() ? "" : ", ") + s;
      ZT_FAIL(dir, ": no state \"", state, "\" in this checkpoint (it has ", saved, ")");
    }
    return static_cast<std::size_t>(it - m.states.begin());
  }
};

Reader::Reader(const std::string& checkpoint_dir) : impl_(std::make_unique<Impl>()) {
  Impl& r = *impl_;
  r.dir = checkpoint_dir;
  r.manifest_path = (fs::path(checkpoint_dir) / kManifestName).string();
  r.m = parse_manifest(read_file(r.manifest_path), r.manifest_path);
  for (const auto& f : r.m.files) {
    const std::string path = (fs::path(checkpoint_dir) / f.name).string();
    const int64_t size = file_size_or_missing(path);
    ZT_CHECK(size >= 0, path, ": missing (the manifest lists it)");
    ZT_CHECK(static_cast<uint64_t>(size) == f.bytes, path, ": ", size, " bytes, the manifest says ", f.bytes,
             static_cast<uint64_t>(size) < f.bytes ? " (truncated?)" : " (overwritten?)");
    r.paths.push_back(path);
  }
  r.fds.assign(r.paths.size(), -1);
  check_coverage(r.m, r.manifest_path);
  r.by.assign(r.m.states.size(), std::vector<std::vector<int>>(r.m.params.size()));
  for (std::size_t i = 0; i < r.m.intervals.size(); ++i) {
    const Interval& iv = r.m.intervals[i];
    r.by[r.state_index(iv.state)][static_cast<std::size_t>(iv.param)].push_back(static_cast<int>(i));
  }
  for (auto& state : r.by)
    for (auto& list : state)
      std::sort(list.begin(), list.end(), [&](int a, int b) {
        return r.m.intervals[static_cast<std::size_t>(a)].offset < r.m.intervals[static_cast<std::size_t>(b)].offset;
      });
}

Reader::~Reader() {
  for (int fd : impl_->fds)
    if (fd >= 0) ::close(fd);
}

const Manifest& Reader::manifest() const { return impl_->m; }

const std::string& Reader::dir() const { return impl_->dir; }

void Reader::read(const std::string& state, int param, int64_t offset, int64_t length, float* out) {
  Impl& r = *impl_;
  const std::size_t s = r.state_index(state);
  ZT_CHECK(param >= 0 && param < static_cast<int>(r.m.params.size()), r.dir, ": no parameter ", param, " (there are ",
           r.m.params.size(), ")");
  const ParamEntry& p = r.m.params[static_cast<std::size_t>(param)];
  ZT_CHECK(offset >= 0 && length >= 0 && offset <= p.numel - length, r.dir, ": ", state, " of ", p.name, ": elements [",
           offset, ", ", offset + length, ") are outside its ", p.numel);
  if (length == 0) return;
  const auto& list = r.by[s][static_cast<std::size_t>(param)];
  auto it = std::upper_bound(list.begin(), list.end(), offset,
                             [&](int64_t x, int i) { return x < r.m.intervals[static_cast<std::size_t>(i)].offset; });
  --it;  // the interval holding `offset` (coverage: the first one starts at 0)
  for (int64_t pos = offset, end = offset + length; pos < end; ++it) {
    const Interval& iv = r.m.intervals[static_cast<std::size_t>(*it)];
    const int64_t hi = std::min(end, iv.offset + iv.length);
    float* dst = out + (pos - offset);
    if (pos == iv.offset && hi == iv.offset + iv.length) {
      r.read_interval(iv, dst);
    } else {
      r.scratch.resize(static_cast<std::size_t>(iv.length));
      r.read_interval(iv, r.scratch.data());
      std::memcpy(dst, r.scratch.data() + (pos - iv.offset), static_cast<std::size_t>(hi - pos) * sizeof(float));
    }
    pos = hi;
  }
}

std::vector<float> Reader::read_dense(const std::string& state) {
  int64_t total = 0;
  for (const auto& p : impl_->m.params) total += p.numel;
  std::vector<float> out(static_cast<std::size_t>(total));
  int64_t at = 0;
  for (std::size_t p = 0; p < impl_->m.params.size(); ++p) {
    read(state, static_cast<int>(p), 0, impl_->m.params[p].numel, out.data() + at);
    at += impl_->m.params[p].numel;
  }
  return out;
}

void Reader::verify_files() {
  Impl& r = *impl_;
  constexpr std::size_t kChunk = std::size_t{8} << 20;
  std::vector<char> buffer(kChunk);
  for (std::size_t f = 0; f < r.m.files.size(); ++f) {
    const FileEntry& file = r.m.files[f];
    uint32_t crc = 0;
    for (uint64_t at = 0; at < file.bytes;) {
      const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(kChunk, file.bytes - at));
      pread_all(r.fd(static_cast<int>(f)), buffer.data(), n, at, r.paths[f]);
      crc = crc32c(buffer.data(), n, crc);
      at += n;
      r.bytes_read += n;
    }
    ZT_CHECK(crc == file.crc32c, r.paths[f], ": the whole file fails its checksum (crc32c ", hex32(crc),
             ", the manifest says ", hex32(file.crc32c), ")");
  }
}

uint64_t Reader::bytes_read() const { return impl_->bytes_read; }

}  // namespace zt::checkpoint
