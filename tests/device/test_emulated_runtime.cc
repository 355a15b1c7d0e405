// The emulated device is strict where a GPU is strict (device/emulated_runtime.h): copies and
// kernels move the right bytes and count them; host code that touches device memory dies naming
// the buffer (in a forked child); a stream that uses another stream's bytes without an event is
// refused when the work is enqueued, whatever the threads' timing; streams run concurrently; an
// error in a stream's work surfaces at synchronize and never leaves a waiter hanging.
//
// Nothing here sleeps or times anything: where a test needs a stream to be busy, a kernel blocks
// on a promise that the test fulfils after checking what must already have happened.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <ostream>
#include <string>
#include <vector>

#include "core/check.h"
#include "device/cuda_probe.h"
#include "device/emulated_runtime.h"
#include "device/make_runtime.h"
#include "ops/gelu_items.h"
#include "ops/op_launch.h"

using zt::device::CopyKind;
using zt::device::CopyStats;
using zt::device::EmulatedRuntime;
using zt::device::Event;
using zt::device::KernelLaunch;
using zt::device::span_of;
using zt::device::Stream;

namespace zt::device {
// How Catch prints a CopyStats in a failed check.
std::ostream& operator<<(std::ostream& out, const CopyStats& s) {
  for (const auto& w : words(CopyKind{}))
    out << w.text << " " << s.copies_of(w.value) << " copies " << s.bytes_of(w.value) << " bytes; ";
  return out;
}
}  // namespace zt::device

namespace {
constexpr CopyKind kH2D = CopyKind::host_to_device;
constexpr CopyKind kD2H = CopyKind::device_to_host;
constexpr CopyKind kD2D = CopyKind::device_to_device;

// A small item op of the test's own: out[i] = 2 in[i] + 1.
struct AffineItems {
  int32_t* out = nullptr;
  const int32_t* in = nullptr;
  int64_t n = 0;
  ZT_HD int64_t items() const { return n; }
  ZT_HD void operator()(int64_t i) const { out[i] = 2 * in[i] + 1; }
};

// The test's own op as a kernel launch. Built by hand, not by op_kernel: an op without a CUDA
// launcher of ops/cuda would not link in a build with the CUDA kernels.
KernelLaunch affine_kernel(int32_t* out, const int32_t* in, int64_t n) {
  KernelLaunch k;
  k.name = "affine";
  k.reads = {span_of(in, static_cast<std::size_t>(n))};
  k.writes = {span_of(out, static_cast<std::size_t>(n))};
  k.host_body = [op = AffineItems{out, in, n}] { zt::device::run_items_on_host(op); };
  return k;
}

template <typename T>
T* as(std::byte* p) {
  return reinterpret_cast<T*>(p);
}

// The message of the zt::Error that f throws, or "" when it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const zt::Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Run f in a forked child whose stderr comes back through a pipe (stdout goes to /dev/null, so
// that a test framework's report in the child does not mix with the parent's).
struct ChildOutcome {
  int status = -1;  // as waitpid reports it
  std::string err;  // what the child wrote on stderr
};
template <typename F>
ChildOutcome run_in_child(F&& f) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[1]);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    try {
      f();
    } catch (...) {
      ::_exit(4);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  ChildOutcome out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n > 0) out.err.append(buffer, static_cast<std::size_t>(n));
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  ::close(fds[0]);
  while (::waitpid(pid, &out.status, 0) < 0 && errno == EINTR) {
  }
  return out;
}

// The ints 0, 1, 2, ..., n - 1.
std::vector<int32_t> iota_ints(std::size_t n) {
  std::vector<int32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(i);
  return v;
}
}  // namespace

TEST_CASE("emulated device: host -> device -> device -> host on three streams, bytes and counts exact", "[ch13]") {
  EmulatedRuntime rt;
  const std::size_t n = 10000, bytes = n * sizeof(float), chunk = bytes / 4;
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = 0.5f * static_cast<float>(i) - 7.0f;
  std::byte* a = rt.allocate(bytes, "a");
  std::byte* b = rt.allocate(bytes, "b");
  std::byte* staging = rt.allocate_pinned(bytes, "staging");
  const Stream h2d = rt.create_stream("h2d"), d2d = rt.create_stream("d2d"), d2h = rt.create_stream("d2h");
  const CopyStats before = rt.stats();

  for (std::size_t c = 0; c < 4; ++c)
    rt.copy_async(a + c * chunk, reinterpret_cast<const std::byte*>(host.data()) + c * chunk, chunk, kH2D, h2d);
  rt.wait(d2d, rt.record(h2d));
  rt.copy_async(b, a, bytes, kD2D, d2d);
  rt.wait(d2h, rt.record(d2d));
  rt.copy_async(staging, b, bytes / 2, kD2H, d2h);
  rt.copy_async(staging + bytes / 2, b + bytes / 2, bytes / 2, kD2H, d2h);
  rt.synchronize(d2h);

  CHECK(std::memcmp(staging, host.data(), bytes) == 0);
  CopyStats expected;           // by kind (host_to_device, device_to_host, device_to_device): 4 uploads of a
  expected.copies = {4, 2, 1};  // quarter, 2 downloads of a half, 1 device copy of the whole
  expected.bytes = {static_cast<int64_t>(bytes), static_cast<int64_t>(bytes), static_cast<int64_t>(bytes)};
  CHECK(rt.stats() - before == expected);
  CHECK((rt.stats() - before) + before == rt.stats());
  CHECK(zt::word_of(kD2H) == "device_to_host");
  rt.release(a);
  rt.release(b);
  rt.release_pinned(staging);
}

// GELU of x on a runtime, through the interface alone: upload on one stream, the kernel on
// another after an event, download, synchronize; the emulated device and a CUDA device run this
// same code.
std::vector<float> gelu_on(zt::device::Runtime& rt, const std::vector<float>& x) {
  const std::size_t bytes = x.size() * sizeof(float);
  const auto n = static_cast<int64_t>(x.size());
  float* x_dev = as<float>(rt.allocate(bytes, "x"));
  float* y_dev = as<float>(rt.allocate(bytes, "y"));
  auto* staging = as<float>(rt.allocate_pinned(bytes, "staging"));
  std::copy(x.begin(), x.end(), staging);
  const Stream upload = rt.create_stream("upload"), compute = rt.create_stream("compute");
  rt.copy_async(x_dev, staging, bytes, kH2D, upload);
  rt.wait(compute, rt.record(upload));
  rt.launch(compute, zt::ops::op_kernel("gelu_forward", zt::ops::GeluForwardElements<float>{y_dev, x_dev, n},
                                        {span_of(x_dev, x.size())}, {span_of(y_dev, x.size())}));
  rt.copy_async(staging, y_dev, bytes, kD2H, compute);
  rt.synchronize(compute);
  std::vector<float> y(staging, staging + x.size());
  rt.release(reinterpret_cast<std::byte*>(x_dev));
  rt.release(reinterpret_cast<std::byte*>(y_dev));
  rt.release_pinned(reinterpret_cast<std::byte*>(staging));
  return y;
}

TEST_CASE("emulated device: a kernel gives the bits of the same op run on host memory", "[ch13]") {
  const int64_t n = 1000;  // not a multiple of the block: the edge block's idle threads run too
  std::vector<float> x(static_cast<std::size_t>(n)), y_host(x.size());
  for (int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = -6.0f + 12.0f * static_cast<float>(i) / 999.0f;
  zt::device::run_items_on_host(zt::ops::GeluForwardElements<float>{y_host.data(), x.data(), n});

  EmulatedRuntime rt;
  const std::vector<float> y = gelu_on(rt, x);
  CHECK(std::memcmp(y.data(), y_host.data(), x.size() * sizeof(float)) == 0);
  // the same code on a CUDA device, where this build has the kernels and the machine a device
  const zt::device::CudaProbe p = zt::device::probe_cuda();
#if defined(ZT_WITH_CUDA_KERNELS)
  if (p.devices > 0) {
    const auto cuda = zt::device::make_runtime(zt::device::RuntimeKind::cuda);
    const std::vector<float> y_cuda = gelu_on(*cuda, x);
    CHECK(std::memcmp(y_cuda.data(), y_host.data(), x.size() * sizeof(float)) == 0);
  }
#endif
  (void)p;
}

TEST_CASE("emulated device: host code that reads or writes device memory dies naming the buffer", "[ch13]") {
  const ChildOutcome read = run_in_child([] {
    EmulatedRuntime rt;
    std::byte* params = rt.allocate(4096, "params");
    const float v = *reinterpret_cast<volatile float*>(params + 64);  // the bug: a host read of device memory
    std::printf("%f\n", static_cast<double>(v));
  });
  INFO(read.err);
  CHECK(WIFEXITED(read.status));
  CHECK(WEXITSTATUS(read.status) == 3);
  CHECK(contains(read.err, "emulated device: host code touched device buffer 'params' at byte 64 of 4096"));
  CHECK(contains(read.err, "device memory is not host memory"));

  // a write after the device has used the buffer: its copies opened it, and closed it again
  const ChildOutcome write = run_in_child([] {
    EmulatedRuntime rt;
    std::byte* grads = rt.allocate(8192, "grads");
    std::vector<std::byte> host(8192);
    rt.copy_async(grads, host.data(), host.size(), kH2D, Stream{0});
    rt.synchronize();
    *reinterpret_cast<volatile float*>(grads + 4100) = 1.0f;
  });
  INFO(write.err);
  CHECK(WIFEXITED(write.status));
  CHECK(WEXITSTATUS(write.status) == 3);
  CHECK(contains(write.err, "device buffer 'grads' at byte 4100 of 8192"));

  // a fault outside every device buffer is not ours to explain: the handler installed before ours
  // gets it, or the default action (each child sets its own first, not the test framework's)
  const auto fault_elsewhere = [](bool previous_handler) {
    struct sigaction before = {};
    sigemptyset(&before.sa_mask);
    before.sa_handler = SIG_DFL;
    if (previous_handler)
      before.sa_handler = [](int) {
        const char line[] = "the previous handler\n";
        (void)!::write(STDERR_FILENO, line, sizeof(line) - 1);
        ::_exit(7);
      };
    ::sigaction(SIGSEGV, &before, nullptr);
    EmulatedRuntime rt;
    rt.allocate(4096, "params");
    void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) ::_exit(5);
    const int v = *static_cast<volatile int*>(page);
    std::printf("%d\n", v);
  };
  const ChildOutcome chained = run_in_child([&] { fault_elsewhere(true); });
  INFO(chained.err);
  CHECK(WIFEXITED(chained.status));
  CHECK(WEXITSTATUS(chained.status) == 7);
  CHECK(chained.err == "the previous handler\n");
  const ChildOutcome by_default = run_in_child([&] { fault_elsewhere(false); });
  INFO(by_default.err);
  CHECK(WIFSIGNALED(by_default.status));
  CHECK(WTERMSIG(by_default.status) == SIGSEGV);
  CHECK(!contains(by_default.err, "emulated device"));

  // the right way: copy it to the host, synchronize, read the host copy
  EmulatedRuntime rt;
  const std::vector<int32_t> values = iota_ints(1024);
  std::byte* params = rt.allocate(4096, "params");
  auto* staging = as<int32_t>(rt.allocate_pinned(4096, "staging"));
  rt.copy_async(params, values.data(), 4096, kH2D, Stream{0});
  rt.copy_async(staging, params, 4096, kD2H, Stream{0});
  rt.synchronize(Stream{0});
  CHECK(std::equal(values.begin(), values.end(), staging));
}

TEST_CASE("emulated device: a kernel that touches device memory outside its declared spans dies naming the kernel",
          "[ch13]") {
  // The race checker trusts the spans a launch declares; a body that writes past them would hide
  // a race, so only the declared spans' pages are open while it runs.
  const ChildOutcome other_page = run_in_child([] {
    EmulatedRuntime rt;
    std::byte* grads = rt.allocate(3 * 4096, "grads");
    KernelLaunch k;
    k.name = "widen_first_page";
    k.writes = {zt::device::DeviceSpan{grads, 4096}};
    k.host_body = [grads] { *reinterpret_cast<volatile float*>(grads + 2 * 4096 + 8) = 1.0f; };  // the bug
    rt.launch(Stream{0}, k);
    rt.synchronize();
  });
  INFO(other_page.err);
  CHECK(WIFEXITED(other_page.status));
  CHECK(WEXITSTATUS(other_page.status) == 3);
  CHECK(contains(other_page.err,
                 "emulated device: kernel 'widen_first_page' touched device buffer 'grads' at byte "
                 "8200 of 12288, outside the spans it declared"));

  // a kernel whose spans name every byte it touches runs, and a page no operation has written
  // reads as the 0xFF of fresh device memory
  EmulatedRuntime rt;
  std::byte* params = rt.allocate(2 * 4096, "params");
  auto* staging = as<uint32_t>(rt.allocate_pinned(4096, "staging"));
  KernelLaunch k;
  k.name = "write_first_word";
  k.writes = {zt::device::DeviceSpan{params, 4}};
  k.host_body = [params] { *reinterpret_cast<uint32_t*>(params) = 7; };
  rt.launch(Stream{0}, k);
  rt.copy_async(staging, params, 8, kD2H, Stream{0});
  rt.copy_async(staging + 2, params + 4096, 4, kD2H, Stream{0});
  rt.synchronize();
  CHECK(staging[0] == 7);
  CHECK(staging[1] == 0xFFFFFFFFu);
  CHECK(staging[2] == 0xFFFFFFFFu);
}

TEST_CASE("emulated device: reading a copy's bytes on another stream needs an event or a host synchronize", "[ch13]") {
  const std::vector<int32_t> values = iota_ints(1024);
  const std::size_t bytes = 4096;
  struct Setup {
    EmulatedRuntime rt;
    Stream h2d = rt.create_stream("h2d"), compute = rt.create_stream("compute");
    int32_t* in = as<int32_t>(rt.allocate(4096, "activations"));
    int32_t* out = as<int32_t>(rt.allocate(4096, "out"));
    KernelLaunch affine = affine_kernel(out, in, 1024);
    std::vector<int32_t> result() {
      std::vector<int32_t> r(1024);
      rt.copy_async(r.data(), out, 4096, kD2H, compute);
      rt.synchronize(compute);
      return r;
    }
  };

  SECTION("no event: refused at launch, naming both operations, both streams, the buffer and the bytes") {
    Setup s;
    s.rt.copy_async(s.in, values.data(), bytes, kH2D, s.h2d);
    CHECK(error_of([&] { s.rt.launch(s.compute, s.affine); }) ==
          "emulated device: kernel 'affine' on stream 'compute' (#1) reads bytes [0, 4096) of buffer 'activations' "
          "written by copy host_to_device on stream 'h2d' (#1) with no event between them (record an event on "
          "'h2d' after the copy and make 'compute' wait for it)");
    // a host synchronize of another stream orders nothing
    s.rt.synchronize(s.compute);
    CHECK(contains(error_of([&] { s.rt.launch(s.compute, s.affine); }), "with no event between them"));
    // the refused launch left no trace: with the event, the same launch runs
    s.rt.wait(s.compute, s.rt.record(s.h2d));
    s.rt.launch(s.compute, s.affine);
    const std::vector<int32_t> r = s.result();
    CHECK(r[0] == 1);
    CHECK(r[1023] == 2047);
  }
  SECTION("a host synchronize of the copy's stream orders it before later work on any stream") {
    Setup s;
    s.rt.copy_async(s.in, values.data(), bytes, kH2D, s.h2d);
    s.rt.synchronize(s.h2d);
    s.rt.launch(s.compute, s.affine);
    CHECK(s.result()[5] == 11);
  }
  SECTION("only the bytes both touch race") {
    Setup s;
    s.rt.copy_async(s.in, values.data(), bytes / 2, kH2D, s.h2d);
    KernelLaunch upper = s.affine;
    upper.reads = {span_of(s.in + 256, 768)};
    CHECK(
        contains(error_of([&] { s.rt.launch(s.compute, upper); }), "reads bytes [1024, 2048) of buffer 'activations'"));
    upper.reads = {span_of(s.in + 512, 512)};  // the half the copy does not write
    s.rt.launch(s.compute, upper);
    s.rt.synchronize();
  }
  SECTION("write after read: a copy may not overwrite what a kernel on another stream still reads") {
    Setup s;
    s.rt.copy_async(s.in, values.data(), bytes, kH2D, s.h2d);
    s.rt.wait(s.compute, s.rt.record(s.h2d));
    s.rt.launch(s.compute, s.affine);
    CHECK(error_of([&] { s.rt.copy_async(s.in, values.data(), bytes, kH2D, s.h2d); }) ==
          "emulated device: copy host_to_device on stream 'h2d' (#2) writes bytes [0, 4096) of buffer 'activations' "
          "read by kernel 'affine' on stream 'compute' (#1) with no event between them (record an event on "
          "'compute' after the kernel and make 'h2d' wait for it)");
    s.rt.wait(s.h2d, s.rt.record(s.compute));
    s.rt.copy_async(s.in, values.data(), bytes, kH2D, s.h2d);
    s.rt.synchronize();
  }
  SECTION("write after write, and a download of a kernel's output without an event") {
    Setup s;
    s.rt.copy_async(s.in, values.data(), bytes, kH2D, s.h2d);
    CHECK(contains(error_of([&] { s.rt.copy_async(s.in + 100, values.data(), 16, kH2D, s.compute); }),
                   "writes bytes [400, 416) of buffer 'activations' written by copy host_to_device on stream 'h2d'"));
    s.rt.wait(s.compute, s.rt.record(s.h2d));
    s.rt.launch(s.compute, s.affine);
    std::vector<int32_t> r(1024);
    CHECK(contains(error_of([&] { s.rt.copy_async(r.data(), s.out, bytes, kD2H, s.h2d); }),
                   "copy device_to_host on stream 'h2d' (#2) reads bytes [0, 4096) of buffer 'out' written by "
                   "kernel 'affine' on stream 'compute'"));
    s.rt.synchronize();
  }
}

TEST_CASE("emulated device: streams run concurrently, and a wait holds up only its own stream", "[ch13]") {
  EmulatedRuntime rt;
  const Stream a = rt.create_stream("a"), b = rt.create_stream("b"), c = rt.create_stream("c");
  const std::vector<int32_t> values = iota_ints(1024);
  int32_t* gated = as<int32_t>(rt.allocate(4096, "gated"));
  int32_t* other = as<int32_t>(rt.allocate(4096, "other"));
  auto* back = as<int32_t>(rt.allocate_pinned(2 * 4096, "back"));
  std::promise<void> gate;
  const std::shared_future<void> opened = gate.get_future().share();
  std::atomic<bool> gate_done{false};

  KernelLaunch held;  // blocks stream a until the test opens the gate
  held.name = "held";
  held.writes = {span_of(gated, 1024)};
  held.host_body = [gated, opened, &gate_done] {
    opened.wait();
    for (int i = 0; i < 1024; ++i) gated[i] = 7;
    gate_done = true;
  };
  rt.launch(a, held);  // returns although its body cannot finish yet
  rt.wait(c, rt.record(a));
  rt.copy_async(back, gated, 4096, kD2H, c);  // ordered after the held kernel by the event

  // stream b is not behind a: its round trip completes while a is still held
  rt.copy_async(other, values.data(), 4096, kH2D, b);
  rt.copy_async(back + 1024, other, 4096, kD2H, b);
  rt.synchronize(b);
  CHECK(std::equal(values.begin(), values.end(), back + 1024));
  CHECK(!gate_done);

  gate.set_value();
  rt.synchronize(c);  // c waited for a's event, so it saw the kernel's bytes
  CHECK(gate_done);
  CHECK(std::all_of(back, back + 1024, [](int32_t v) { return v == 7; }));
}

TEST_CASE("emulated device: an error in a stream's work surfaces at synchronize, and its waiters fail, never hang",
          "[ch13]") {
  EmulatedRuntime rt;
  const Stream a = rt.create_stream("a"), b = rt.create_stream("b");
  const std::vector<int32_t> values = iota_ints(1024);
  int32_t* x = as<int32_t>(rt.allocate(4096, "x"));
  KernelLaunch explode;
  explode.name = "explode";
  explode.host_body = [] { ZT_FAIL("the op found a NaN"); };
  std::atomic<bool> later_ran{false};
  KernelLaunch later;
  later.name = "later";
  later.host_body = [&later_ran] { later_ran = true; };

  rt.launch(a, explode);                           // returns: the error is the stream's, not the call's
  rt.copy_async(x, values.data(), 4096, kH2D, a);  // skipped: the stream has failed
  rt.wait(b, rt.record(a));
  rt.launch(b, later);

  const std::string on_b = error_of([&] { rt.synchronize(b); });
  CHECK(contains(on_b, "emulated device: stream 'b': waiting for an event of stream 'a' failed"));
  CHECK(contains(on_b, "kernel 'explode' (#1) failed: the op found a NaN"));
  CHECK(!later_ran);
  CHECK(contains(error_of([&] { rt.synchronize(a); }),
                 "emulated device: stream 'a': kernel 'explode' (#1) failed: the op found a NaN"));
  CHECK(contains(error_of([&] { rt.synchronize(); }), "stream 'a'"));  // the error stays

  // the skipped copy wrote nothing: x still holds a fresh buffer's 0xFF bytes
  const Stream c = rt.create_stream("c");
  std::vector<uint8_t> back(4096);
  rt.copy_async(back.data(), x, 4096, kD2H, c);
  rt.synchronize(c);
  CHECK(std::all_of(back.begin(), back.end(), [](uint8_t v) { return v == 0xFF; }));
}

TEST_CASE("emulated device: spans and pointers must be what the call says they are", "[ch13]") {
  EmulatedRuntime rt;
  std::byte* params = rt.allocate(4096, "params");
  std::byte* grads = rt.allocate(4096, "grads");
  std::vector<std::byte> host(8192);
  const Stream s{0};
  const CopyStats before = rt.stats();

  KernelLaunch k;
  k.name = "k";
  k.host_body = [] {};
  k.reads = {{host.data(), 64}};
  CHECK(contains(error_of([&] { rt.launch(s, k); }), "emulated device: kernel 'k': its read span "));
  CHECK(contains(error_of([&] { rt.launch(s, k); }), "(64 bytes) is not inside any device allocation"));
  k.reads = {{params + 4000, 200}};
  CHECK(contains(error_of([&] { rt.launch(s, k); }),
                 "its read span bytes [4000, 4200) run past the end of device buffer 'params' (4096 bytes)"));
  k.reads = {};
  k.host_body = nullptr;
  CHECK(contains(error_of([&] { rt.launch(s, k); }), "kernel 'k' has no host body"));

  CHECK(contains(error_of([&] { rt.copy_async(host.data(), host.data() + 4096, 64, kH2D, s); }),
                 "copy host_to_device: the destination "));
  CHECK(contains(error_of([&] { rt.copy_async(grads, params, 64, kH2D, s); }),
                 "copy host_to_device: the source is in device buffer 'params', but a host_to_device copy's source is "
                 "host memory"));
  CHECK(contains(error_of([&] { rt.copy_async(grads, params, 64, kD2H, s); }),
                 "the destination is in device buffer 'grads'"));
  CHECK(error_of([&] { rt.copy_async(params, host.data(), 4096, kH2D, s); }).empty());  // the one good copy
  rt.synchronize();
  CHECK(contains(error_of([&] { rt.copy_async(params + 2048, host.data(), 4096, kH2D, s); }),
                 "bytes [2048, 6144) run past the end of device buffer 'params' (4096 bytes)"));
  CHECK(contains(error_of([&] { rt.copy_async(params + 64, params, 128, kD2D, s); }), "of one buffer overlap"));
  CHECK(contains(error_of([&] { rt.copy_async(params, host.data(), 64, kH2D, Stream{7}); }),
                 "stream 7 was not created by this runtime"));
  CHECK(contains(error_of([&] { rt.wait(s, Event{99}); }), "waits for event 99, which record() did not return"));
  CHECK(contains(error_of([&] { rt.release(params + 64); }), "is not the start of a device allocation"));
  CHECK(contains(error_of([&] { rt.release_pinned(host.data()); }), "which allocate_pinned did not return"));
  CHECK(contains(error_of([&] { rt.allocate(0, "empty"); }), "allocate 0 bytes for 'empty'"));

  CopyStats one_upload;  // only the one good copy above was counted
  one_upload.copies = {1, 0, 0};
  one_upload.bytes = {4096, 0, 0};
  CHECK(rt.stats() - before == one_upload);
}

TEST_CASE("emulated device: destruction runs the queued work, then joins", "[ch13]") {
  std::atomic<int> ran{0};
  {
    EmulatedRuntime rt;
    const Stream a = rt.create_stream("a"), b = rt.create_stream("b");
    std::promise<void> gate;
    const std::shared_future<void> opened = gate.get_future().share();
    KernelLaunch held;
    held.name = "held";
    held.host_body = [opened] { opened.wait(); };
    KernelLaunch count;
    count.name = "count";
    count.host_body = [&ran] { ++ran; };
    rt.launch(a, held);
    for (int i = 0; i < 50; ++i) rt.launch(a, count);
    rt.wait(b, rt.record(a));
    for (int i = 0; i < 50; ++i) rt.launch(b, count);
    CHECK(ran == 0);  // everything is behind the gate
    gate.set_value();
  }
  CHECK(ran == 100);
}

TEST_CASE("emulated device: the race checker's memory does not grow with the number of steps", "[ch13]") {
  EmulatedRuntime rt;
  const Stream h2d = rt.create_stream("h2d"), compute = rt.create_stream("compute"), d2h = rt.create_stream("d2h");
  const std::vector<int32_t> values = iota_ints(1024);
  int32_t* in = as<int32_t>(rt.allocate(4096, "in"));
  int32_t* out = as<int32_t>(rt.allocate(4096, "out"));
  auto* back = as<int32_t>(rt.allocate_pinned(4096, "back"));
  const KernelLaunch affine = affine_kernel(out, in, 1024);
  std::size_t most = 0;
  for (const bool host_sync : {true, false}) {
    Event compute_done, download_done;
    for (int step = 0; step < 300; ++step) {
      if (compute_done.id >= 0) rt.wait(h2d, compute_done);  // in is free again
      rt.copy_async(in, values.data(), 4096, kH2D, h2d);
      rt.wait(compute, rt.record(h2d));
      if (download_done.id >= 0) rt.wait(compute, download_done);  // out is free again
      rt.launch(compute, affine);
      compute_done = rt.record(compute);
      rt.wait(d2h, compute_done);
      rt.copy_async(back, out, 4096, kD2H, d2h);
      download_done = rt.record(d2h);
      if (host_sync) rt.synchronize(d2h);
      most = std::max(most, rt.tracked_accesses());
    }
    rt.synchronize();
  }
  CHECK(most <= 8);  // a step touches two buffers with four accesses
  CHECK(back[1023] == 2047);
}

TEST_CASE("make_runtime: the emulated device always, CUDA only where the probe finds a device", "[ch13]") {
  const auto emulated = zt::device::make_runtime(zt::device::RuntimeKind::emulated);
  CHECK(emulated->name() == "emulated");
  CHECK(zt::parse_word<zt::device::RuntimeKind>("emulated", "runtime") == zt::device::RuntimeKind::emulated);
  const zt::device::CudaProbe p = zt::device::probe_cuda();
  if (p.compiled && p.devices > 0) {
    CHECK(zt::device::make_runtime(zt::device::RuntimeKind::cuda)->name() == "cuda");
  } else {
    const std::string e = error_of([] { zt::device::make_runtime(zt::device::RuntimeKind::cuda); });
    CHECK(e.find('\n') == std::string::npos);
    CHECK(contains(e, p.compiled ? "no CUDA device is visible to this process" : "this build has no CUDA support"));
  }
}
