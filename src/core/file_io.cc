// core/file_io.cc — looping, error-checked POSIX I/O (see file_io.h).
#include "core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/check.h"

namespace zt {

void write_all(int fd, const void* data, std::size_t size, const std::string& path) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    ZT_CHECK(n > 0, "cannot write ", path, ": ", n < 0 ? std::strerror(errno) : "no progress");
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void pread_all(int fd, void* data, std::size_t size, uint64_t offset, const std::string& path) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    ZT_CHECK(n >= 0, "cannot read ", path, " at byte ", offset, ": ", std::strerror(errno));
    ZT_CHECK(n > 0, path, ": the file ends at byte ", offset, ", before the ", size,
             " bytes still expected (truncated?)");
    p += n;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<std::size_t>(n);
  }
}

int open_for_reading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ZT_CHECK(fd >= 0, "cannot open ", path, ": ", std::strerror(errno));
  return fd;
}

void fsync_file(int fd, const std::string& path) {
  ZT_CHECK(::fsync(fd) == 0, "cannot flush ", path, " to disk: ", std::strerror(errno));
}

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ZT_CHECK(fd >= 0, "cannot open directory ", dir, ": ", std::strerror(errno));
  const bool ok = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  ZT_CHECK(ok, "cannot flush directory ", dir, " to disk: ", std::strerror(err));
}

void close_file(int fd, const std::string& path) {
  ZT_CHECK(::close(fd) == 0, "cannot close ", path, ": ", std::strerror(errno));
}

int64_t file_size_or_missing(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    ZT_CHECK(errno == ENOENT || errno == ENOTDIR, "cannot stat ", path, ": ", std::strerror(errno));
    return -1;
  }
  ZT_CHECK(S_ISREG(st.st_mode), path, " is not a regular file");
  return static_cast<int64_t>(st.st_size);
}

}  // namespace zt
