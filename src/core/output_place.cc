// core/output_place.cc — see output_place.h.
#include "core/output_place.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/check.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

// mkdir -p, one component at a time, so that the error names the component that is in the way.
void make_directories(const OutputPlace& place, const fs::path& dir) {
  fs::path sofar;
  for (const auto& part : dir) {
    sofar /= part;
    struct stat st {};
    if (::stat(sofar.c_str(), &st) == 0) {
      ZT_CHECK(S_ISDIR(st.st_mode), place.flag, " ", place.path, ": cannot create directory ", dir.string(), ": ",
               sofar.string(), " is a file, in the way");
      continue;
    }
    // another rank of the job may create it at the same moment: EEXIST is success
    ZT_CHECK(::mkdir(sofar.c_str(), 0755) == 0 || errno == EEXIST, place.flag, " ", place.path,
             ": cannot create directory ", sofar.string(), ": ", std::strerror(errno));
  }
}

}  // namespace

void prepare_output_place(const OutputPlace& place) {
  ZT_CHECK(!place.path.empty(), place.flag, ": an empty path");
  const fs::path path(place.path);
  const fs::path dir = place.kind == PlaceKind::directory ? path : path.parent_path();
  if (place.kind == PlaceKind::file) {
    // a directory there would only be found when the result is written, after the work
    struct stat st {};
    ZT_CHECK(::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode), place.flag, " ", place.path,
             ": is a directory, not a file");
  }

  if (!dir.empty()) make_directories(place, dir);
  const std::string where = dir.empty() ? "." : dir.string();
  // the writer needs to create entries in the directory (a temporary beside the target)
  ZT_CHECK(::access(where.c_str(), W_OK | X_OK) == 0, place.flag, " ", place.path, ": cannot write into ", where, ": ",
           std::strerror(errno));
}

}  // namespace zt
