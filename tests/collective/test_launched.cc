// Every collective, both modes, all dtypes, across 2-4 PROCESSES started by zero-launch: once
// meeting through a FileStore (ZT_STORE=file:DIR) and once through the TCP store that zero-launch
// serves at MASTER_ADDR:MASTER_PORT (the torchrun convention; the ranks only connect to it).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/run_program.h"

TEST_CASE("zero-launch: every collective across 2, 3 and 4 processes", "[ch5][collective][process]") {
  namespace fs = std::filesystem;
  using zt::test::bin;
  for (int n : {2, 3, 4}) {
    for (const std::string store : {"file", "tcp"}) {
      const fs::path dir =
          fs::temp_directory_path() / ("zt-launched-" + std::to_string(::getpid()) + "-" + std::to_string(n));
      fs::remove_all(dir);
      zt::test::RunOptions o;
      if (store == "file") o.env.emplace_back("ZT_STORE", "file:" + dir.string());
      const std::vector<std::string> argv{bin("zero-launch"), "-n", std::to_string(n), "--",
                                          bin("zt-collective-probe")};
      const auto out = zt::test::run_program(argv, o);
      INFO("store " << store << ", " << n << " ranks\n" << out.out << out.err);
      CHECK(out.status == 0);
      for (int r = 0; r < n; ++r)
        CHECK(out.out.find("rank " + std::to_string(r) + " of " + std::to_string(n) + ": ") != std::string::npos);
      CHECK(out.out.find(", 0 mismatches") != std::string::npos);
      CHECK(out.out.find("MISMATCH") == std::string::npos);
      fs::remove_all(dir);
    }
  }
}
