#!/usr/bin/env bash
# scripts/deps.sh [build|fuzz] — install the Debian 12 packages the project needs, only those missing.
# As root it runs apt-get; otherwise it prints the exact command to run and fails.
#   (none)  everything `make test` uses: the build's packages, then the test, docs and notebook stack;
#   build   only what configuring and building zero-train needs (`make run`): the compiler, CMake,
#           Gloo, OpenBLAS, nlohmann-json and Catch2 (a header CMake looks for when it configures the
#           tests, 1 MB; the tests themselves are built by `make test` only);
#   fuzz    everything, plus the clang toolchain that only `make fuzz` uses (libFuzzer and the
#           sanitizer runtimes); make test never needs it.
# The notebook stack comes from Debian too (python3-matplotlib, nbconvert, ipykernel) and is run
# with Debian's /usr/bin/python3, so a pyenv or conda python on PATH does not matter.
set -euo pipefail
build_packages=(
  build-essential cmake g++ make
  libgloo-dev catch2 nlohmann-json3-dev libopenblas-dev
)
test_packages=(
  git doxygen redis-server clang-format iproute2
  python3 python3-matplotlib python3-nbconvert python3-nbformat python3-nbclient python3-ipykernel
)
fuzz_packages=(clang-14 libclang-rt-14-dev libfuzzer-14-dev)
group=${1:-}
if [[ -z "$group" ]]; then
  packages=("${build_packages[@]}" "${test_packages[@]}")
elif [[ "$group" == build ]]; then
  packages=("${build_packages[@]}")
elif [[ "$group" == fuzz ]]; then
  packages=("${build_packages[@]}" "${test_packages[@]}" "${fuzz_packages[@]}")
else
  echo "deps: unknown group '$group' (the groups are build and fuzz; none means everything make test uses)" >&2
  exit 2
fi
missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "deps: missing Debian packages: ${missing[*]}" >&2
  echo "deps: run as root:  sudo sh -c '$cmd'" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}"
sh -c "$cmd"
