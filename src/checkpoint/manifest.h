// checkpoint/manifest.h — what a checkpoint directory holds, as one JSON document (manifest.json).
//
// A checkpoint stores every per-element state of a run (the FP32 master weights, and the
// optimizer's moments) in the model's canonical space: element k of canonical parameter p
// (model/manifest.h, GPT-2 names and shapes), whatever rank, stage or model-parallel block held
// it. Each rank writes the elements it owns as intervals — (state, parameter, element offset,
// length) — into its own data file, and the manifest lists every interval with the file, the byte
// offset and a CRC-32C of its bytes. Because the coordinates are canonical, a run with any other
// (stage, N_d, N_m) reads what it needs by intersecting its own intervals with the saved ones
// (checkpoint/reader.h): resharding is a lookup, not a conversion.
// The scalars of the run (step, Adam's step count, the loss scaler, the data position, the seed)
// sit in `run`; the model's shape in `model`; how the saving run was sharded in `sharding`
// (information for people and tools; a reader never needs it).
// Not the writer or the reader (writer.h, reader.h); no I/O here besides (de)serialising.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace zt::checkpoint {

/// The version this code writes and the only one it reads.
inline constexpr int kFormatVersion = 1;
/// The manifest's file name inside a checkpoint directory.
inline constexpr const char* kManifestName = "manifest.json";

/// One data file of the checkpoint.
struct FileEntry {
  std::string name;     ///< relative to the checkpoint directory, e.g. "rank-00003.bin"
  uint64_t bytes = 0;   ///< exact size
  uint32_t crc32c = 0;  ///< CRC-32C (Castagnoli) of the whole file
};

/// A run of consecutive canonical elements of one parameter of one state, stored as
/// little-endian FP32 at `byte_offset` of file `file`.
struct Interval {
  std::string state;         ///< "master", "adam.m", "adam.v" or "sgd.momentum"
  int param = 0;             ///< canonical parameter index (Manifest::params)
  int64_t offset = 0;        ///< first element, relative to the parameter
  int64_t length = 0;        ///< elements (> 0)
  int file = 0;              ///< index in Manifest::files
  uint64_t byte_offset = 0;  ///< first byte in that file
  uint32_t crc32c = 0;       ///< CRC-32C of its 4·length bytes
};

/// One canonical parameter.
struct ParamEntry {
  std::string name;            ///< e.g. "h.0.attn.c_attn.weight"
  std::vector<int64_t> shape;  ///< row-major
  int64_t numel = 0;           ///< product of shape
};

/// The whole manifest.
struct Manifest {
  int format_version = kFormatVersion;  ///< kFormatVersion
  nlohmann::json model;                 ///< the model's shape: family, vocab, context, layers, heads, width, mp_blocks
  nlohmann::json sharding;              ///< the saving run's layout: stage, dp_size, mp_size, norm_block, units
  nlohmann::json run;                   ///< step, optimizer_step, loss scaler, data position, seed, precision, ...
  std::vector<std::string> states;      ///< the states saved; each covers every element of every parameter once
  std::vector<ParamEntry> params;       ///< canonical order
  std::vector<FileEntry> files;         ///< data files
  std::vector<Interval> intervals;      ///< every saved run of elements
};

/// Serialise. @param m the manifest. @return its JSON.
nlohmann::json to_json(const Manifest& m);

/// Parse and check the structure (types, indices in range, lengths positive); a problem is a
/// zt::Error that names `where` (the manifest's path) and the field. The format version is
/// checked first: another version is an error saying which one was found.
/// @param j the parsed document. @param where the manifest's path, for messages. @return it.
Manifest manifest_from_json(const nlohmann::json& j, const std::string& where);

/// Parse manifest.json's text and check it as manifest_from_json does; text that is not JSON is a
/// zt::Error naming `where` too. @param text the file's contents. @param where its path, for
/// messages. @return the manifest.
Manifest parse_manifest(const std::string& text, const std::string& where);

/// manifest.json's text: to_json laid out with one parameter, file or interval per line.
/// @param m the manifest. @return the text, ending in a newline.
std::string manifest_text(const Manifest& m);

/// One file entry as JSON. @param f the entry. @return {"name", "bytes", "crc32c"}.
nlohmann::json file_to_json(const FileEntry& f);
/// Parse one file entry, checking every field's presence and type; the name must be a plain file
/// name (no directory part). @param j the JSON. @param where the document's path, for messages.
/// @param field the entry's place in it, e.g. "files[2]". @return the entry.
FileEntry file_from_json(const nlohmann::json& j, const std::string& where, const std::string& field);

/// One interval as JSON. @param iv the interval. @return its fields by their names.
nlohmann::json interval_to_json(const Interval& iv);
/// Parse one interval, checking every field's presence and type, and offset >= 0, length > 0
/// (references to states, parameters and files are the manifest's to check).
/// @param j the JSON. @param where the document's path, for messages.
/// @param field the interval's place in it, e.g. "intervals[7]". @return the interval.
Interval interval_from_json(const nlohmann::json& j, const std::string& where, const std::string& field);

/// Check that the intervals of each state cover every element of every parameter exactly once:
/// sorted by (state, parameter, offset), each starts where the previous one ended, the first at
/// 0 and the last ends at numel; and that no two intervals share a byte of a file, so that the
/// elements declared never exceed the bytes stored. A gap or an overlap is a zt::Error naming
/// `where`, the state, the parameter and the elements (or the two intervals and the bytes). @param m the manifest.
/// @param where its path, for messages.
void check_coverage(const Manifest& m, const std::string& where);

/// An interval for people: "adam.m of h.0.attn.c_attn.weight [0, 1024)".
/// @param m the manifest it belongs to. @param iv the interval. @return the text.
std::string describe(const Manifest& m, const Interval& iv);

/// CRC-32C (Castagnoli polynomial, as iSCSI and ext4 use) of bytes, continuing from `crc`
/// (0 to start); the crc32 instruction where the CPU has it, else tables, the same values
/// (crc32c.h). @param data bytes. @param size count. @param crc the running value.
/// @return the updated value.
uint32_t crc32c(const void* data, std::size_t size, uint32_t crc = 0);

}  // namespace zt::checkpoint
