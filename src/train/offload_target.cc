// train/offload_target.cc — parsing an offload target (see offload_target.h).
#include "train/offload_target.h"

#include "core/check.h"

namespace zt::train {

OffloadTarget parse_offload_target(const std::string& text, const std::string& flag, bool host_allowed) {
  const char* accepted = host_allowed ? " is not none, host or file:DIR" : " is not none or file:DIR";
  if (text.rfind("file:", 0) == 0) {
    ZT_CHECK(text.size() > 5 || !host_allowed, flag, " file: names no directory (file:DIR)");
    ZT_CHECK(text.size() > 5, flag, " ", text, accepted);
    return {OffloadKind::file, text.substr(5)};
  }
  for (const Word<OffloadKind>& w : words(OffloadKind{}))
    if (w.text == text && w.value != OffloadKind::file && (host_allowed || w.value != OffloadKind::host))
      return {w.value, ""};
  ZT_FAIL(flag, " ", text, accepted);
}

}  // namespace zt::train
