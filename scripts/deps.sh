#!/usr/bin/env bash
# scripts/deps.sh — install the Debian 12 packages the project needs, only those missing.
# As root it runs apt-get; otherwise it prints the exact command to run and fails.
# The notebook stack comes from Debian too (python3-matplotlib, nbconvert, ipykernel) and is run
# with Debian's /usr/bin/python3, so a pyenv or conda python on PATH does not matter.
set -euo pipefail
packages=(
  build-essential cmake g++ make git
  libgloo-dev catch2 nlohmann-json3-dev libopenblas-dev
  doxygen graphviz redis-server clang-format iproute2
  python3 python3-matplotlib python3-nbconvert python3-nbformat python3-nbclient python3-ipykernel
)
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
