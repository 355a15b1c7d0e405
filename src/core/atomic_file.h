// core/atomic_file.h — write an output file so that a reader never sees half of it.
//
// The bytes go to a temporary file beside the target, are flushed to disk, and the temporary is
// renamed over the target (rename(2) is atomic within one filesystem). A crash or a full disk
// leaves either the old file or the new one, never a torn mix, and a failed write is a zt::Error.
// Not a general file library: whole-file writes only.
#pragma once

#include <cstddef>
#include <string>

namespace zt {

/// Replace `path` with exactly `size` bytes from `data`, atomically.
/// @param path target file. @param data bytes to write. @param size number of bytes.
void write_file_atomic(const std::string& path, const void* data, std::size_t size);

/// Replace `path` with the characters of `text`, atomically.
/// @param path target file. @param text the new contents.
void write_file_atomic(const std::string& path, const std::string& text);

/// Read a whole file; a missing or unreadable file is a zt::Error naming it.
/// @param path the file. @return its bytes.
std::string read_file(const std::string& path);

}  // namespace zt
