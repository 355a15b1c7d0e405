// Line prefixing: only whole lines leave, each with its prefix, however the bytes are chunked.
#include <catch2/catch.hpp>

#include <string>

#include "launch/line_prefixer.h"

using zt::launch::LinePrefixer;

TEST_CASE("lines are prefixed whole whatever the chunking", "[ch5][launch]") {
  const std::string text = "alpha\nbeta gamma\n\ndelta";
  const std::string expected = "[rank 3] alpha\n[rank 3] beta gamma\n[rank 3] \n[rank 3] delta\n";
  for (std::size_t chunk = 1; chunk <= text.size(); ++chunk) {
    LinePrefixer p("[rank 3] ");
    std::string got;
    for (std::size_t i = 0; i < text.size(); i += chunk) {
      std::string part = p.feed(text.data() + i, std::min(chunk, text.size() - i));
      // Whatever leaves is a sequence of whole lines.
      CHECK((part.empty() || part.back() == '\n'));
      got += part;
    }
    got += p.finish();
    CHECK(got == expected);
  }
  LinePrefixer empty("[x] ");
  CHECK(empty.finish().empty());
}

TEST_CASE("an endless line is cut at the size limit", "[ch5][launch]") {
  LinePrefixer p("> ");
  std::string big(LinePrefixer::kMaxLineBytes + 10, 'y');
  std::string out = p.feed(big.data(), big.size());
  CHECK(out == "> " + std::string(LinePrefixer::kMaxLineBytes, 'y') + "\n");
  CHECK(p.finish() == "> yyyyyyyyyy\n");
}
