// Every op's backward (float instantiation) against central finite differences in double.
//
// Method: each op's forward formula is written a second time here, independently, in double with
// naive loops (the *_ref functions). For a random instance and random output weights w, the
// objective L(x) = sum_i w_i f_ref(x)_i is differentiated numerically in double by central
// differences, h = 1e-4 (truncation ~h^2 |f'''| ~ 1e-8, round-off ~1e-16/h ~ 1e-12), and compared
// with the op's float backward fed dout = w. The same check also compares the float forward with
// f_ref. Tolerance: each float result is a sum of at most n <= 64 terms with a few roundings per
// term, so its error is below ~(n + 8) u sum|terms|, u = 2^-24; on these O(1) instances that is
// < 1e-5 relative to the largest gradient, and we allow 1e-4 (a wrong formula is off by O(1)).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "kernels/attention.h"
#include "kernels/cross_entropy.h"
#include "kernels/embedding.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "kernels/residual.h"

namespace {

using Vec = std::vector<double>;
using zt::kernels::TokenView;

std::vector<float> random_floats(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

Vec to_d(const std::vector<float>& v) { return Vec(v.begin(), v.end()); }

double dot(const Vec& w, const Vec& y) {
  double s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) s += w[i] * y[i];
  return s;
}

// Central differences of L at x, one coordinate at a time.
Vec fd_grad(Vec x, const std::function<double(const Vec&)>& L, double h = 1e-4) {
  Vec g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + h;
    const double up = L(x);
    x[i] = keep - h;
    const double down = L(x);
    x[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

// max |a - ref| relative to max |ref|.
double rel_err(const float* a, const Vec& ref) {
  double err = 0, scale = 1e-30;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    err = std::max(err, std::fabs(a[i] - ref[i]));
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return err / scale;
}

constexpr double kTol = 1e-4;

// ---- independent double references ----
Vec layernorm_ref(const Vec& x, const Vec& w, const Vec& b, int N, int C) {
  Vec y(x.size());
  for (int i = 0; i < N; ++i) {
    double mu = 0, var = 0;
    for (int c = 0; c < C; ++c) mu += x[i * C + c];
    mu /= C;
    for (int c = 0; c < C; ++c) var += (x[i * C + c] - mu) * (x[i * C + c] - mu);
    var /= C;
    for (int c = 0; c < C; ++c) y[i * C + c] = (x[i * C + c] - mu) / std::sqrt(var + 1e-5) * w[c] + b[c];
  }
  return y;
}

Vec linear_ref(const Vec& x, const Vec& W, const Vec& b, int N, int in, int out) {
  Vec y(static_cast<std::size_t>(N * out));
  for (int i = 0; i < N; ++i)
    for (int o = 0; o < out; ++o) {
      double s = b.empty() ? 0.0 : b[o];
      for (int k = 0; k < in; ++k) s += x[i * in + k] * W[o * in + k];
      y[i * out + o] = s;
    }
  return y;
}

Vec attention_ref(const Vec& qkv, int B, int T, int C, int H) {
  const int D = C / H;
  Vec y(static_cast<std::size_t>(B * T * C), 0.0);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < T; ++i) {
        std::vector<double> s(i + 1);
        double m = -1e300;
        for (int j = 0; j <= i; ++j) {
          double d = 0;
          for (int k = 0; k < D; ++k)
            d += qkv[(b * T + i) * 3 * C + h * D + k] * qkv[(b * T + j) * 3 * C + C + h * D + k];
          s[j] = d / std::sqrt(static_cast<double>(D));
          m = std::max(m, s[j]);
        }
        double z = 0;
        for (int j = 0; j <= i; ++j) z += std::exp(s[j] - m);
        for (int j = 0; j <= i; ++j)
          for (int k = 0; k < D; ++k)
            y[(b * T + i) * C + h * D + k] += std::exp(s[j] - m) / z * qkv[(b * T + j) * 3 * C + 2 * C + h * D + k];
      }
  return y;
}

double gelu_ref(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }

}  // namespace

TEST_CASE("layernorm backward matches finite differences", "[ch2][kernels][gradcheck]") {
  const int N = 5, C = 16;
  const auto x = random_floats(N * C, 1, 2.0f), w = random_floats(C, 2), b = random_floats(C, 3);
  const auto dy = random_floats(N * C, 4);
  std::vector<float> y(N * C), mean(N), rstd(N), dx(N * C), dw(C), db(C), scratch(2 * N * C);
  zt::kernels::layernorm_forward(y.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
  zt::kernels::layernorm_backward(dx.data(), dw.data(), db.data(), dy.data(), x.data(), mean.data(), rstd.data(),
                                  w.data(), N, C, scratch.data());
  const Vec xd = to_d(x), wd = to_d(w), bd = to_d(b), wy = to_d(dy);
  CHECK(rel_err(y.data(), layernorm_ref(xd, wd, bd, N, C)) < kTol);
  CHECK(rel_err(dx.data(), fd_grad(xd, [&](const Vec& v) { return dot(wy, layernorm_ref(v, wd, bd, N, C)); })) < kTol);
  CHECK(rel_err(dw.data(), fd_grad(wd, [&](const Vec& v) { return dot(wy, layernorm_ref(xd, v, bd, N, C)); })) < kTol);
  CHECK(rel_err(db.data(), fd_grad(bd, [&](const Vec& v) { return dot(wy, layernorm_ref(xd, wd, v, N, C)); })) < kTol);
}

TEST_CASE("linear backward matches finite differences", "[ch2][kernels][gradcheck]") {
  const int N = 6, in = 8, out = 5;
  const auto x = random_floats(N * in, 11), W = random_floats(out * in, 12), b = random_floats(out, 13);
  const auto dy = random_floats(N * out, 14);
  std::vector<float> y(N * out), dx(N * in), dW(out * in), db(out);
  std::vector<float> scratch(zt::kernels::linear_backward_scratch_floats(N, in, out, false) +
                             zt::kernels::linear_forward_scratch_floats(N, in, out, false));
  zt::kernels::linear_forward(y.data(), x.data(), W.data(), b.data(), N, in, out, scratch.data());
  zt::kernels::linear_backward(dx.data(), dW.data(), db.data(), dy.data(), x.data(), W.data(), N, in, out,
                               scratch.data());
  const Vec xd = to_d(x), Wd = to_d(W), bd = to_d(b), wy = to_d(dy);
  CHECK(rel_err(y.data(), linear_ref(xd, Wd, bd, N, in, out)) < kTol);
  CHECK(rel_err(dx.data(), fd_grad(xd, [&](const Vec& v) { return dot(wy, linear_ref(v, Wd, bd, N, in, out)); })) <
        kTol);
  CHECK(rel_err(dW.data(), fd_grad(Wd, [&](const Vec& v) { return dot(wy, linear_ref(xd, v, bd, N, in, out)); })) <
        kTol);
  CHECK(rel_err(db.data(), fd_grad(bd, [&](const Vec& v) { return dot(wy, linear_ref(xd, Wd, v, N, in, out)); })) <
        kTol);
}

TEST_CASE("causal attention backward matches finite differences", "[ch2][kernels][gradcheck]") {
  const int B = 2, T = 5, C = 8, H = 2;
  const auto qkv = random_floats(B * T * 3 * C, 21, 1.5f), dy = random_floats(B * T * C, 22);
  std::vector<float> y(B * T * C), P(B * H * T * T), dqkv(B * T * 3 * C);
  std::vector<float> scratch(zt::kernels::attention_backward_scratch_floats(T, C, false) +
                             zt::kernels::attention_forward_scratch_floats(T, C, false));
  zt::kernels::attention_forward(y.data(), P.data(), qkv.data(), B, T, C, H, scratch.data());
  zt::kernels::attention_backward(dqkv.data(), dy.data(), qkv.data(), P.data(), B, T, C, H, scratch.data());
  const Vec qd = to_d(qkv), wy = to_d(dy);
  CHECK(rel_err(y.data(), attention_ref(qd, B, T, C, H)) < kTol);
  CHECK(rel_err(dqkv.data(), fd_grad(qd, [&](const Vec& v) { return dot(wy, attention_ref(v, B, T, C, H)); })) < kTol);
  for (int i = 0; i < T; ++i)
    for (int j = i + 1; j < T; ++j) CHECK(P[i * T + j] == 0.0f);  // the mask is exact
}

TEST_CASE("gelu backward matches finite differences", "[ch2][kernels][gradcheck]") {
  const int n = 64;
  auto x = random_floats(n, 31, 4.0f);
  const auto dy = random_floats(n, 32);
  std::vector<float> y(n), dx(n);
  zt::kernels::gelu_forward(y.data(), x.data(), n);
  zt::kernels::gelu_backward(dx.data(), dy.data(), x.data(), n);
  const Vec xd = to_d(x), wy = to_d(dy);
  const auto ref = [&](const Vec& v) {
    Vec o(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) o[i] = gelu_ref(v[i]);
    return o;
  };
  CHECK(rel_err(y.data(), ref(xd)) < kTol);
  CHECK(rel_err(dx.data(), fd_grad(xd, [&](const Vec& v) { return dot(wy, ref(v)); })) < kTol);
}

TEST_CASE("cross-entropy backward matches finite differences", "[ch2][kernels][gradcheck]") {
  const int B = 2, T = 3, V = 7, N = B * T;
  const auto logits = random_floats(N * V, 41, 3.0f);
  const std::vector<int32_t> tgt = {0, 6, 3, 3, 1, 5};
  const TokenView targets{tgt.data(), B, T, T};
  const float grad_scale = 0.37f;
  std::vector<float> loss(N), m(N), s(N), dl(N * V);
  zt::kernels::cross_entropy_forward(loss.data(), m.data(), s.data(), logits.data(), targets, V);
  zt::kernels::cross_entropy_backward(dl.data(), logits.data(), m.data(), s.data(), targets, V, grad_scale);
  const auto ref = [&](const Vec& l) {  // per-position losses
    Vec out(N);
    for (int n = 0; n < N; ++n) {
      double z = 0;
      for (int j = 0; j < V; ++j) z += std::exp(l[n * V + j]);
      out[n] = std::log(z) - l[n * V + tgt[n]];
    }
    return out;
  };
  const Vec ld = to_d(logits);
  CHECK(rel_err(loss.data(), ref(ld)) < kTol);
  const Vec g = fd_grad(ld, [&](const Vec& v) {
    double sum = 0;
    for (double x : ref(v)) sum += grad_scale * x;
    return sum;
  });
  CHECK(rel_err(dl.data(), g) < kTol);
}

TEST_CASE("embedding backward matches finite differences, head part kept", "[ch2][kernels][gradcheck]") {
  const int B = 2, T = 4, C = 3, V = 5;
  const std::vector<int32_t> tok = {1, 3, 1, 0, 3, 3, 2, 1};  // token 4 never appears
  const TokenView inputs{tok.data(), B, T, T};
  const auto wte = random_floats(V * C, 51), wpe = random_floats(T * C, 52), dy = random_floats(B * T * C, 53);
  const auto head = random_floats(V * C, 54);
  std::vector<float> y(B * T * C), dwte = head, dwpe(T * C), scratch(B * T * C);
  std::vector<int32_t> iscratch(zt::kernels::embedding_backward_scratch_ints(B, T, V));
  zt::kernels::embedding_forward(y.data(), inputs, wte.data(), wpe.data(), V, C);
  zt::kernels::embedding_backward(dwte.data(), dwpe.data(), dy.data(), inputs, V, C, scratch.data(), iscratch.data());
  const auto ref = [&](const Vec& te, const Vec& pe) {
    Vec o(static_cast<std::size_t>(B * T * C));
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t)
        for (int c = 0; c < C; ++c) o[(b * T + t) * C + c] = te[tok[b * T + t] * C + c] + pe[t * C + c];
    return o;
  };
  const Vec ted = to_d(wte), ped = to_d(wpe), wy = to_d(dy);
  CHECK(rel_err(y.data(), ref(ted, ped)) < kTol);
  Vec g_te = fd_grad(ted, [&](const Vec& v) { return dot(wy, ref(v, ped)); });
  for (int i = 0; i < V * C; ++i) g_te[i] += head[i];  // the head's contribution rides along
  CHECK(rel_err(dwte.data(), g_te) < kTol);
  CHECK(rel_err(dwpe.data(), fd_grad(ped, [&](const Vec& v) { return dot(wy, ref(ted, v)); })) < kTol);
  for (int c = 0; c < C; ++c) CHECK(dwte[4 * C + c] == head[4 * C + c]);  // absent token: unchanged
}

TEST_CASE("residual add and gradient join", "[ch2][kernels][gradcheck]") {
  // out = a + b has d/da = d/db = identity; the join adds skip and branch gradients exactly
  // (these inputs are exactly representable sums).
  const std::vector<float> a = {1.5f, -2.0f, 0.25f}, b = {0.5f, 4.0f, -0.125f};
  std::vector<float> out(3), skip = a;
  zt::kernels::residual_forward(out.data(), a.data(), b.data(), 3);
  zt::kernels::residual_grad_join(skip.data(), b.data(), 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(out[i] == a[i] + b[i]);
    CHECK(skip[i] == a[i] + b[i]);
  }
  // 16-bit: the sum is rounded once to the storage type.
  const zt::fp16 x(1.0f), y(0x1p-11f);
  zt::fp16 r;
  zt::kernels::residual_forward(&r, &x, &y, 1);
  CHECK(r.bits == zt::fp16(1.0f + 0x1p-11f).bits);
}
