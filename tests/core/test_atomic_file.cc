// Atomic whole-file writes: the new contents replace the old, and a failing write leaves the old.
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/atomic_file.h"
#include "core/check.h"

TEST_CASE("write_file_atomic replaces contents and leaves no temporary", "[ch1][io]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("zt_atomic_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "out.bin").string();
  zt::write_file_atomic(path, std::string("first"));
  zt::write_file_atomic(path, std::string("second"));
  CHECK(zt::read_file(path) == "second");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);
  CHECK_THROWS_AS(zt::write_file_atomic((dir / "missing" / "x").string(), std::string("y")), zt::Error);
  CHECK(zt::read_file(path) == "second");
  CHECK_THROWS_AS(zt::read_file((dir / "nope").string()), zt::Error);
  fs::remove_all(dir);
}
