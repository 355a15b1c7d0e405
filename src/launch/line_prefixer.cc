// launch/line_prefixer.cc — see line_prefixer.h.
#include "launch/line_prefixer.h"

#include <algorithm>

namespace zt::launch {

std::string LinePrefixer::feed(const char* data, std::size_t size) {
  std::string out;
  for (std::size_t i = 0; i < size; ++i) {
    partial_.push_back(data[i]);
    if (data[i] == '\n' || partial_.size() >= kMaxLineBytes) {
      out += prefix_;
      out += partial_;
      if (partial_.back() != '\n') out.push_back('\n');
      keep(partial_);
      partial_.clear();
    }
  }
  return out;
}

std::string LinePrefixer::finish() {
  if (partial_.empty()) return "";
  std::string out = prefix_ + partial_ + "\n";
  keep(partial_);
  partial_.clear();
  return out;
}

void LinePrefixer::keep(const std::string& line) {
  std::size_t end = line.size();
  while (end > 0 && (line[end - 1] == '\n' || line[end - 1] == '\r')) --end;
  if (end == 0) return;
  last_line_.assign(line, 0, std::min(end, kMaxKeptBytes));
}

}  // namespace zt::launch
