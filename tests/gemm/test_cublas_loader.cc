// cuBLAS is opened on first use (gemm/cuda/cublas_loader.h): a program linked with the CUDA GEMM
// has not mapped libcublas before it asks for a cuBLAS function, and afterwards every entry point
// the GEMM calls is resolved. Needs the library, not a device: nothing here makes a handle.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "gemm/cuda/cublas_loader.h"

namespace {

// Whether a file whose name contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(name) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("cuBLAS is opened on first use, not at start-up, and every entry point resolves", "[ch13]") {
  using namespace zt::gemm::cuda;
  CHECK(std::string(cublas_library_name()) == "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR));
  // linked against the CUDA GEMM, yet neither cuBLAS nor cuBLASLt was loaded at start-up
  REQUIRE_FALSE(mapped("libcublas"));
  const CublasApi& api = cublas();
  CHECK(api.create != nullptr);
  CHECK(api.destroy != nullptr);
  CHECK(api.set_stream != nullptr);
  CHECK(api.set_math_mode != nullptr);
  CHECK(api.gemm_ex != nullptr);
  CHECK(api.sgemm != nullptr);
  CHECK(mapped("libcublas.so"));
  CHECK(&cublas() == &api);  // loaded once
}
