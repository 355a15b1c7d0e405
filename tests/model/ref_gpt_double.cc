// ref_gpt_double.cc — the float64 reference GPT (see the header).
#include "model/ref_gpt_double.h"

#include <cmath>

namespace zt_test {
namespace {

using Mat = std::vector<double>;  // row-major [rows, cols]

// Reads the canonical parameter list in order, handing out consecutive chunks.
struct Cursor {
  const std::vector<double>& p;
  std::size_t at = 0;
  const double* take(std::size_t n) {
    const double* here = p.data() + at;
    at += n;
    return here;
  }
};

Mat layernorm(const Mat& x, int rows, int C, const double* w, const double* b) {
  Mat y(x.size());
  for (int r = 0; r < rows; ++r) {
    double mean = 0;
    for (int c = 0; c < C; ++c) mean += x[r * C + c];
    mean /= C;
    double var = 0;
    for (int c = 0; c < C; ++c) var += (x[r * C + c] - mean) * (x[r * C + c] - mean);
    var /= C;
    const double inv = 1.0 / std::sqrt(var + 1e-5);
    for (int c = 0; c < C; ++c) y[r * C + c] = (x[r * C + c] - mean) * inv * w[c] + b[c];
  }
  return y;
}

// y = x W^T + b, W [out, in].
Mat linear(const Mat& x, int rows, int in, int out, const double* W, const double* b) {
  Mat y(static_cast<std::size_t>(rows) * out);
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < out; ++o) {
      double s = b ? b[o] : 0.0;
      for (int i = 0; i < in; ++i) s += x[r * in + i] * W[o * in + i];
      y[r * out + o] = s;
    }
  return y;
}

}  // namespace

double ref_gpt_loss_sum(const RefGptConfig& cfg, const std::vector<double>& params, const std::vector<int32_t>& batch,
                        int B) {
  const int V = cfg.V, T = cfg.T, C = cfg.C, H = cfg.H, D = C / H;
  Cursor cur{params};
  const double* wte = cur.take(static_cast<std::size_t>(V) * C);
  const double* wpe = cur.take(static_cast<std::size_t>(T) * C);
  double total = 0;
  for (int b = 0; b < B; ++b) {  // sequences are independent: one at a time
    const int32_t* row = batch.data() + static_cast<std::size_t>(b) * (T + 1);
    Mat x(static_cast<std::size_t>(T) * C);
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < C; ++c) x[t * C + c] = wte[row[t] * C + c] + wpe[t * C + c];
    Cursor layer = cur;
    for (int l = 0; l < cfg.L; ++l) {
      const double* ln1w = layer.take(C);
      const double* ln1b = layer.take(C);
      const double* aw = layer.take(3 * C * C);
      const double* ab = layer.take(3 * C);
      const double* pw = layer.take(C * C);
      const double* pb = layer.take(C);
      const double* ln2w = layer.take(C);
      const double* ln2b = layer.take(C);
      const double* fw = layer.take(4 * C * C);
      const double* fb = layer.take(4 * C);
      const double* mw = layer.take(4 * C * C);
      const double* mb = layer.take(C);
      const Mat qkv = linear(layernorm(x, T, C, ln1w, ln1b), T, C, 3 * C, aw, ab);
      Mat att(static_cast<std::size_t>(T) * C, 0.0);
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < T; ++i) {
          std::vector<double> w(i + 1);
          double mx = -1e300, z = 0;
          for (int j = 0; j <= i; ++j) {
            double s = 0;
            for (int d = 0; d < D; ++d) s += qkv[i * 3 * C + h * D + d] * qkv[j * 3 * C + C + h * D + d];
            w[j] = s / std::sqrt(static_cast<double>(D));
            mx = std::max(mx, w[j]);
          }
          for (int j = 0; j <= i; ++j) z += (w[j] = std::exp(w[j] - mx));
          for (int j = 0; j <= i; ++j)
            for (int d = 0; d < D; ++d) att[i * C + h * D + d] += w[j] / z * qkv[j * 3 * C + 2 * C + h * D + d];
        }
      const Mat proj = linear(att, T, C, C, pw, pb);
      for (std::size_t k = 0; k < x.size(); ++k) x[k] += proj[k];
      Mat hid = linear(layernorm(x, T, C, ln2w, ln2b), T, C, 4 * C, fw, fb);
      for (double& u : hid) u = 0.5 * u * (1 + std::tanh(std::sqrt(2 / M_PI) * (u + 0.044715 * u * u * u)));
      const Mat out = linear(hid, T, 4 * C, C, mw, mb);
      for (std::size_t k = 0; k < x.size(); ++k) x[k] += out[k];
    }
    const double* lnfw = layer.take(C);
    const double* lnfb = layer.take(C);
    const Mat logits = linear(layernorm(x, T, C, lnfw, lnfb), T, C, V, wte, nullptr);
    for (int t = 0; t < T; ++t) {
      double mx = -1e300, z = 0;
      for (int v = 0; v < V; ++v) mx = std::max(mx, logits[t * V + v]);
      for (int v = 0; v < V; ++v) z += std::exp(logits[t * V + v] - mx);
      total += mx + std::log(z) - logits[t * V + row[t + 1]];
    }
  }
  return total;
}

}  // namespace zt_test
