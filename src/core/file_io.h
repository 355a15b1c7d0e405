// core/file_io.h — the few POSIX file operations checkpoints and atomic files (core/atomic_file.h)
// need, each failing with one zt::Error line that names the path and the system's reason
// (strerror: "No space left on device", "Input/output error", "Permission denied").
//
// write(2) and pread(2) may move fewer bytes than asked, or be interrupted (EINTR); these loop
// until every byte has moved. Durability is explicit: a file's bytes reach the disk with
// fsync_file, a new or renamed directory entry with fsync_dir on the directory holding it.
// Not a buffering layer (checkpoint/writer.cc buffers) and not portable beyond POSIX.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace zt {

/// Write all `size` bytes at the file's current position. @param fd an open file.
/// @param data bytes. @param size count. @param path the file's name, for messages.
void write_all(int fd, const void* data, std::size_t size, const std::string& path);

/// Read exactly `size` bytes at byte `offset`; reaching the end of the file first is an error.
/// @param fd an open file. @param data destination. @param size count. @param offset first byte.
/// @param path the file's name, for messages.
void pread_all(int fd, void* data, std::size_t size, uint64_t offset, const std::string& path);

/// Open an existing file for reading. @param path the file. @return the descriptor.
int open_for_reading(const std::string& path);

/// Flush a file's data and metadata to the disk. @param fd an open file.
/// @param path the file's name, for messages.
void fsync_file(int fd, const std::string& path);

/// Flush a directory's entries (files created, removed or renamed in it) to the disk.
/// @param dir the directory.
void fsync_dir(const std::string& dir);

/// Close a descriptor; a failure (a delayed write error) is an error. @param fd the descriptor.
/// @param path the file's name, for messages.
void close_file(int fd, const std::string& path);

/// The size of a file, or -1 if it does not exist. @param path the file. @return bytes or -1.
int64_t file_size_or_missing(const std::string& path);

}  // namespace zt
