// report/compare_runs.cc — bitwise comparison of two runs (see compare_runs.h).
#include "report/compare_runs.h"

#include <bit>
#include <cstdint>
#include <sstream>

namespace zt::report {
namespace {

bool same(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

// "name a vs b" with enough digits to show any two distinct floats as distinct text
template <typename V>
std::string differ(const char* name, V a, V b) {
  std::ostringstream s;
  s.precision(9);
  s << name << " " << a << " vs " << b;
  return s.str();
}

}  // namespace

std::string RunComparison::describe() const {
  if (equal()) return "";
  std::string out = params.empty() ? "master weights equal" : "first differing parameter " + params;
  if (!steps.empty()) out += "; step records differ at " + steps;
  if (!evals.empty()) out += "; held-out evaluations differ at " + evals;
  return out;
}

std::string compare_steps(const std::vector<StepRecord>& a, const std::vector<StepRecord>& b) {
  if (a.size() != b.size()) return differ("step count", a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const StepRecord &x = a[i], &y = b[i];
    std::string d;
    if (x.step != y.step)
      d = differ("step number", x.step, y.step);
    else if (!same(x.loss, y.loss))
      d = differ("loss", x.loss, y.loss);
    else if (!same(x.loss_scale, y.loss_scale))
      d = differ("loss_scale", x.loss_scale, y.loss_scale);
    else if (!same(x.lr, y.lr))
      d = differ("lr", x.lr, y.lr);
    else if (x.skipped != y.skipped)
      d = differ("skipped", x.skipped, y.skipped);
    else if (x.grad_norm.has_value() != y.grad_norm.has_value())
      d = "grad_norm finite in one run only";
    else if (x.grad_norm && !same(*x.grad_norm, *y.grad_norm))
      d = differ("grad_norm", *x.grad_norm, *y.grad_norm);
    else if (x.clipped != y.clipped)
      d = differ("clipped", x.clipped, y.clipped);
    if (!d.empty()) return "step " + std::to_string(i + 1) + ": " + d;
  }
  return "";
}

std::string compare_evals(const std::vector<EvalRecord>& a, const std::vector<EvalRecord>& b) {
  if (a.size() != b.size()) return differ("evaluation count", a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const EvalRecord &x = a[i], &y = b[i];
    std::string d;
    if (x.step != y.step)
      d = differ("step", x.step, y.step);
    else if (!same(x.loss, y.loss))
      d = differ("loss", x.loss, y.loss);
    else if (x.accuracy != y.accuracy)
      d = differ("accuracy", x.accuracy, y.accuracy);
    else if (x.problems != y.problems)
      d = differ("problems", x.problems, y.problems);
    if (!d.empty()) return "evaluation " + std::to_string(i + 1) + " (step " + std::to_string(x.step) + "): " + d;
  }
  return "";
}

std::string compare_params(const std::vector<float>& a, const std::vector<float>& b, const model::Manifest* manifest) {
  if (a.size() != b.size()) return differ("element count", a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (same(a[i], b[i])) continue;
    std::string where = "element " + std::to_string(i);
    if (manifest)
      for (const auto& p : manifest->params)
        if (i >= static_cast<std::size_t>(p.offset) && i < static_cast<std::size_t>(p.offset + p.numel))
          where = p.name + "[" + std::to_string(i - static_cast<std::size_t>(p.offset)) + "]";
    return differ((where + ":").c_str(), a[i], b[i]);
  }
  return "";
}

RunComparison compare_runs(const RunResult& a, const std::vector<float>& a_params, const RunResult& b,
                           const std::vector<float>& b_params, const model::Manifest* manifest) {
  return {compare_steps(a.steps, b.steps), compare_evals(a.evals, b.evals),
          compare_params(a_params, b_params, manifest)};
}

}  // namespace zt::report
