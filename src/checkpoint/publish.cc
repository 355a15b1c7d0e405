// checkpoint/publish.cc — protocol step 3: the fragments become manifest.json and the temporary
// directory becomes the checkpoint, in one rename (see writer.h).
//
// Before anything becomes visible the manifest passes the same checks a reader makes
// (manifest_from_json's structure and references, check_coverage), so a bug in what the ranks
// wrote fails the save instead of being found at the next resume.
// Replacing a checkpoint of the same step (a re-run) uses renameat2(RENAME_EXCHANGE): the new
// directory and the old one swap names in one atomic step and the old one, now under the .tmp
// name, is removed. A filesystem without the exchange gets the old one renamed to .old first;
// between those two renames that step has no complete directory (the only window, documented in
// README.md).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "checkpoint/crash_point.h"
#include "checkpoint/writer.h"
#include "core/atomic_file.h"
#include "core/check.h"
#include "core/file_io.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

std::string join(const std::string& dir, const std::string& name) { return (fs::path(dir) / name).string(); }

// Rank r's fragment: its data file (which must exist with the size the fragment says) and its
// intervals, appended to m with the file's index.
void merge_fragment(const std::string& temp, int rank, Manifest& m) {
  const std::string path = join(temp, rank_fragment_name(rank));
  ZT_CHECK(file_size_or_missing(path) >= 0, path, ": missing: rank ", rank,
           " has not finished its part (or the world size is wrong)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    // not only parse_error: a number too large for a double (1e400) is nlohmann's out_of_range
    ZT_FAIL(path, ": not valid JSON (", e.what(), ")");
  }
  ZT_CHECK(j.is_object() && j.contains("file") && j.contains("intervals") && j["intervals"].is_array(), path,
           ": not a fragment (it needs \"file\" and an array \"intervals\")");
  const FileEntry file = file_from_json(j["file"], path, "file");
  ZT_CHECK(file.name == rank_data_name(rank), path, ": names the data file ", file.name, ", not ",
           rank_data_name(rank));
  const int64_t size = file_size_or_missing(join(temp, file.name));
  ZT_CHECK(size == static_cast<int64_t>(file.bytes), join(temp, file.name), ": ", size, " bytes, its fragment says ",
           file.bytes);
  const int index = static_cast<int>(m.files.size());
  m.files.push_back(file);
  const auto& intervals = j["intervals"];
  for (std::size_t i = 0; i < intervals.size(); ++i) {
    Interval iv = interval_from_json(intervals[i], path, "intervals[" + std::to_string(i) + "]");
    iv.file = index;
    m.intervals.push_back(std::move(iv));
  }
}

// The temporary directory holds exactly the files of ranks 0..world_size-1.
void check_entries(const std::string& temp, int world_size) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(temp, ec)) {
    const std::string name = entry.path().filename().string();
    int rank = -1;
    char ext[8] = {};
    int consumed = 0;
    const bool ours = std::sscanf(name.c_str(), "rank-%d.%4s%n", &rank, ext, &consumed) == 2 &&
                      consumed == static_cast<int>(name.size()) && rank >= 0 &&
                      (name == rank_data_name(rank) || name == rank_fragment_name(rank));
    ZT_CHECK(ours && rank < world_size, temp, ": unexpected file ", name, " (publish was told ", world_size, " ranks)");
  }
  ZT_CHECK(!ec, "cannot list ", temp, ": ", ec.message());
}

void rename_or_fail(const std::string& from, const std::string& to) {
  ZT_CHECK(::rename(from.c_str(), to.c_str()) == 0, "cannot rename ", from, " to ", to, ": ", std::strerror(errno));
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  ZT_CHECK(!ec, "cannot remove ", path, ": ", ec.message());
}

// Give `temp` the name `final_dir`; a directory of that name (this step saved before) is replaced.
void install(const std::string& temp, const std::string& final_dir, const std::string& save_dir) {
  std::error_code ec;
  const bool replacing = fs::exists(fs::symlink_status(final_dir, ec));
  if (!replacing) {
    rename_or_fail(temp, final_dir);
    crash_if_armed("renamed", final_dir);
    fsync_dir(save_dir);
    return;
  }
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_EXCHANGE) == 0) {
    crash_if_armed("renamed", final_dir);
    fsync_dir(save_dir);
    remove_tree(temp);  // the old checkpoint, under the temporary name since the exchange
    return;
  }
  ZT_CHECK(errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP, "cannot exchange ", temp, " and ", final_dir,
           ": ", std::strerror(errno));
  const std::string old = final_dir + ".old";
  remove_tree(old);
  rename_or_fail(final_dir, old);
  fsync_dir(save_dir);
  rename_or_fail(temp, final_dir);
  crash_if_armed("renamed", final_dir);
  fsync_dir(save_dir);
  remove_tree(old);
}

}  // namespace

std::string publish(const std::string& save_dir, int64_t step, Manifest header, int world_size) {
  ZT_CHECK(world_size >= 1, "publish: world size ", world_size, " is not positive");
  const std::string final_dir = step_dir(save_dir, step);
  const std::string temp = final_dir + ".tmp";
  const std::string manifest_path = join(temp, kManifestName);
  ZT_CHECK(fs::is_directory(temp), "publish: ", temp, " does not exist (begin_save makes it)");
  ZT_CHECK(header.files.empty() && header.intervals.empty(), manifest_path,
           ": the header lists files or intervals; they come from the ranks' fragments");
  armed_crash_point();  // a bad ZT_CHECKPOINT_CRASH_AT fails here, before anything moves
  check_entries(temp, world_size);
  header.format_version = kFormatVersion;
  for (int r = 0; r < world_size; ++r) merge_fragment(temp, r, header);
  const Manifest m = manifest_from_json(to_json(header), manifest_path);  // a reader's checks
  check_coverage(m, manifest_path);
  write_file_atomic(manifest_path, manifest_text(m));
  crash_if_armed("manifest-written", temp);
  for (int r = 0; r < world_size; ++r) {
    const std::string fragment = join(temp, rank_fragment_name(r));
    ZT_CHECK(::unlink(fragment.c_str()) == 0, "cannot remove ", fragment, ": ", std::strerror(errno));
  }
  fsync_dir(temp);
  install(temp, final_dir, save_dir);
  return final_dir;
}

}  // namespace zt::checkpoint
