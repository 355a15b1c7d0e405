// checkpoint/writer.cc — protocol steps 1 and 2: the temporary directory and one rank's data file
// and fragment (see writer.h; step 3, publish, is in publish.cc).
//
// Throughput: values are copied into a 4 MiB buffer that goes to write(2) when full, and a run of
// 1 MiB or more goes to write(2) straight from the caller's memory, so the data moves once from
// the caller to the page cache and then once to the disk at fsync. Each value is read once more,
// for its interval's CRC; the whole-file CRC is joined from the interval CRCs (crc32c_combine)
// instead of reading the bytes again.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "checkpoint/crash_point.h"
#include "checkpoint/crc32c.h"
#include "checkpoint/writer.h"
#include "core/atomic_file.h"
#include "core/check.h"
#include "core/file_io.h"

namespace zt::checkpoint {

static_assert(std::endian::native == std::endian::little, "checkpoints store FP32 little-endian, as memory holds it");

namespace {

constexpr std::size_t kBufferBytes = std::size_t{4} << 20;
constexpr std::size_t kDirectBytes = std::size_t{1} << 20;

std::string rank_name(int world_rank, const char* suffix) {
  ZT_CHECK(world_rank >= 0, "rank ", world_rank, " is negative");
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.%s", world_rank, suffix);
  return name;
}

}  // namespace

std::string rank_data_name(int world_rank) { return rank_name(world_rank, "bin"); }

std::string rank_fragment_name(int world_rank) { return rank_name(world_rank, "json"); }

std::string step_dir(const std::string& save_dir, int64_t step) {
  ZT_CHECK(step >= 0, "checkpoint step ", step, " is negative");
  char name[40];
  std::snprintf(name, sizeof name, "step-%08lld", static_cast<long long>(step));
  return (std::filesystem::path(save_dir) / name).string();
}

std::string begin_save(const std::string& save_dir, int64_t step) {
  std::error_code ec;
  std::filesystem::create_directories(save_dir, ec);
  ZT_CHECK(!ec, "cannot create ", save_dir, ": ", ec.message());
  const std::string temp = step_dir(save_dir, step) + ".tmp";
  std::filesystem::remove_all(temp, ec);  // a previous attempt's, interrupted: never published
  ZT_CHECK(!ec, "cannot remove the stale ", temp, ": ", ec.message());
  ZT_CHECK(::mkdir(temp.c_str(), 0755) == 0, "cannot create ", temp, ": ", std::strerror(errno));
  return temp;
}

struct RankFileWriter::Impl {
  std::string dir, name, path;
  int rank = 0;
  int fd = -1;
  std::unique_ptr<char[]> buffer{new char[kBufferBytes]};
  std::size_t used = 0;   // bytes in buffer
  uint64_t total = 0;     // bytes added: in the file plus in the buffer
  uint32_t file_crc = 0;  // CRC-32C of those `total` bytes
  std::vector<Interval> intervals;
  bool crash_half = false;  // ZT_CHECKPOINT_CRASH_AT=data-half: keep everything for finish()
  std::vector<char> held;
  bool finished = false;

  void flush() {
    write_all(fd, buffer.get(), used, path);
    used = 0;
  }

  void append(const void* data, std::size_t bytes) {
    const char* p = static_cast<const char*>(data);
    if (crash_half) {
      held.insert(held.end(), p, p + bytes);
    } else if (bytes >= kDirectBytes) {
      flush();
      write_all(fd, p, bytes, path);
    } else {
      if (used + bytes > kBufferBytes) flush();
      std::memcpy(buffer.get() + used, p, bytes);
      used += bytes;
    }
    total += bytes;
  }
};

RankFileWriter::RankFileWriter(const std::string& temp_dir, int world_rank) : impl_(std::make_unique<Impl>()) {
  Impl& w = *impl_;
  w.dir = temp_dir;
  w.rank = world_rank;
  w.name = rank_data_name(world_rank);
  w.path = (std::filesystem::path(temp_dir) / w.name).string();
  w.crash_half = crash_armed_for("data-half", temp_dir);
  w.fd = ::open(w.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ZT_CHECK(w.fd >= 0, "cannot create ", w.path, ": ", std::strerror(errno));
}

RankFileWriter::~RankFileWriter() {
  if (impl_->fd >= 0) ::close(impl_->fd);  // unfinished: the temporary directory is never published
}

void RankFileWriter::add(const std::string& state, int param, int64_t offset, const float* values, int64_t length) {
  Impl& w = *impl_;
  ZT_CHECK(!w.finished, w.path, ": add() after finish()");
  ZT_CHECK(!state.empty() && param >= 0 && offset >= 0 && length >= 0, w.path, ": add(\"", state, "\", ", param, ", ",
           offset, ", ", length, ") is not a valid range");
  while (length > 0) {
    // continue the last interval when this run extends it (a caller adding a parameter in
    // pieces), up to kMaxIntervalElements; otherwise start a new one
    Interval* last = w.intervals.empty() ? nullptr : &w.intervals.back();
    const bool extends = last != nullptr && last->state == state && last->param == param &&
                         last->offset + last->length == offset && last->length < kMaxIntervalElements;
    const int64_t n = std::min(length, extends ? kMaxIntervalElements - last->length : kMaxIntervalElements);
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    const uint32_t crc = crc32c(values, bytes);
    if (extends) {
      last->crc32c = crc32c_combine(last->crc32c, crc, bytes);
      last->length += n;
    } else {
      w.intervals.push_back({state, param, offset, n, 0, w.total, crc});
    }
    w.file_crc = crc32c_combine(w.file_crc, crc, bytes);
    w.append(values, bytes);
    values += n;
    offset += n;
    length -= n;
  }
}

void RankFileWriter::finish() {
  Impl& w = *impl_;
  ZT_CHECK(!w.finished, w.path, ": finish() called twice");
  w.finished = true;
  if (w.crash_half) {  // the file cut in the middle, as a crash during the writes leaves it
    write_all(w.fd, w.held.data(), w.held.size() / 2, w.path);
    crash_if_armed("data-half", w.dir);
  }
  w.flush();
  fsync_file(w.fd, w.path);
  const int fd = w.fd;
  w.fd = -1;
  close_file(fd, w.path);
  crash_if_armed("data-written", w.dir);
  nlohmann::json fragment = {{"rank", w.rank}, {"file", file_to_json({w.name, w.total, w.file_crc})}};
  fragment["intervals"] = nlohmann::json::array();
  for (const auto& iv : w.intervals) fragment["intervals"].push_back(interval_to_json(iv));
  write_file_atomic((std::filesystem::path(w.dir) / rank_fragment_name(w.rank)).string(), fragment.dump() + "\n");
  crash_if_armed("fragment-written", w.dir);
}

}  // namespace zt::checkpoint
