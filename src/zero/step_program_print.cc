// zero/step_program_print.cc — a step program as text (zero-plan / zero-train --print-step and
// --step-trace): one line per operation. Only formatting; the program is step_program.cc's.
#include <cstdio>
#include <iterator>
#include <string>

#include "zero/step_program.h"

namespace zt::zero {

const char* op_name(OpKind k) {
  static constexpr const char* kNames[] = {
      "acquire",  "release",    "grad",           "param_done",     "grad_done",  "send",   "recv",       "pass",
      "pass_end", "all_gather", "open_reduction", "reduce_scatter", "all_reduce", "wait",   "accumulate", "add",
      "keep16",   "step_grad",  "step_sync",      "loss",           "agree",      "update", "free"};
  const auto i = static_cast<std::size_t>(k);
  return i < std::size(kNames) ? kNames[i] : "?";
}

std::string op_text(const Op& o) {
  std::string what = op_name(o.kind);
  if (o.kind == OpKind::pass)
    what += std::string(o.forward ? " forward" : " backward") + " m" + std::to_string(o.micro);
  if ((o.kind == OpKind::send || o.kind == OpKind::recv) && o.micro >= 0) what += " m" + std::to_string(o.micro);
  if (o.unit >= 0) what += " u" + std::to_string(o.unit);
  if (o.peer >= 0) what += (o.kind == OpKind::send ? " to s" : " from s") + std::to_string(o.peer);
  if (o.bucket >= 0 && o.kind != OpKind::all_gather) what += " b" + std::to_string(o.bucket);
  if (o.param >= 0) what += " p" + std::to_string(o.param);
  if (o.kind == OpKind::all_gather && o.dst == kNoBuffer) what += " in place";
  return what;
}

std::string print_program(const StepProgram& p, std::size_t live_at_start) {
  std::string out;
  std::size_t live = live_at_start;
  char line[320];
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const Op& o = p.ops[i];
    const std::string what = op_text(o);
    std::string effect;
    if (o.bytes) effect += std::to_string(o.bytes) + " B moved";
    for (uint32_t a : o.allocs) {
      live += p.buffers[a].bytes;
      effect += (effect.empty() ? "+" : ", +") + p.buffers[a].category + " " + std::to_string(p.buffers[a].bytes);
    }
    for (uint32_t f : o.frees) {
      live -= p.buffers[f].bytes;
      effect += (effect.empty() ? "-" : ", -") + p.buffers[f].category + " " + std::to_string(p.buffers[f].bytes);
    }
    std::snprintf(line, sizeof line, "%5zu  %-30s %-52s live %zu\n", i, what.c_str(), effect.c_str(), live);
    out += line;
  }
  return out;
}

}  // namespace zt::zero
