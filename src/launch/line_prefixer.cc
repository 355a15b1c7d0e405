// launch/line_prefixer.cc — see line_prefixer.h.
#include "launch/line_prefixer.h"

namespace zt::launch {

std::string LinePrefixer::feed(const char* data, std::size_t size) {
  std::string out;
  for (std::size_t i = 0; i < size; ++i) {
    partial_.push_back(data[i]);
    if (data[i] == '\n' || partial_.size() >= kMaxLineBytes) {
      out += prefix_;
      out += partial_;
      if (partial_.back() != '\n') out.push_back('\n');
      partial_.clear();
    }
  }
  return out;
}

std::string LinePrefixer::finish() {
  if (partial_.empty()) return "";
  std::string out = prefix_ + partial_ + "\n";
  partial_.clear();
  return out;
}

}  // namespace zt::launch
