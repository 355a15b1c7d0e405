// core/atomic_file.cc — temporary file + fsync + rename (see atomic_file.h).
#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/check.h"
#include "core/file_io.h"

namespace zt {

void write_file_atomic(const std::string& path, const void* data, std::size_t size) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ZT_CHECK(fd >= 0, "cannot create ", tmp, ": ", std::strerror(errno));
  try {  // errors name the target; the temporary is removed
    write_all(fd, data, size, path);
    fsync_file(fd, path);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    ZT_FAIL("cannot rename ", tmp, " to ", path, ": ", std::strerror(err));
  }
}

void write_file_atomic(const std::string& path, const std::string& text) {
  write_file_atomic(path, text.data(), text.size());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ZT_CHECK(in.good(), "cannot read ", path, ": ", std::strerror(errno));
  std::ostringstream out;
  out << in.rdbuf();
  ZT_CHECK(!in.bad(), "error while reading ", path);
  return out.str();
}

}  // namespace zt
