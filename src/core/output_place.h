// core/output_place.h — the places a program writes, made ready before any work is done.
//
// Every flag that names a file or a directory the program writes is treated alike: the directory
// (for a file, the directory that will hold it) is created with its parents, as `mkdir -p`
// would, or the flag is refused at start-up for a real reason — a file in the way, no permission,
// a directory where a file is wanted — in one line naming the flag. Checking first means a run
// never trains for an hour and then fails to save its result. Not an atomic writer
// (core/atomic_file.h is) and not a path sanitiser: any path the user may write is accepted.
#pragma once

#include <string>

namespace zt {

/// What a flag's path names.
enum class PlaceKind {
  file,       ///< a file the program writes (its directory is created; a directory there is refused)
  directory,  ///< a directory the program writes into (created if missing)
};

/// One place a program will write, as its command line named it.
struct OutputPlace {
  std::string flag;  ///< "--summary-json", "--offload-optimizer file:", "OUT" ...
  std::string path;  ///< the path given
  PlaceKind kind;    ///< file or directory
};

/// Create the place's directory (with its parents) and check that it can be written: a zt::Error
/// naming the flag, the path and the reason otherwise. An existing place is kept as it is.
/// @param place the flag and its path.
void prepare_output_place(const OutputPlace& place);

}  // namespace zt
