#!/usr/bin/env bash
# Installs every Debian 12 package that building, running and testing Converge needs.
# Idempotent: runs `apt-get update` and `apt-get install` only when something is missing.
# Boost 1.81 is named explicitly; never pull in libboost-dev / libboost-all-dev (they bring
# 1.74, which conflicts with 1.81 as Debian packages).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git
  clang clang-format libclang-rt-14-dev lld
  # libraries (DESIGN.md, Dependencies)
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  liblmdb-dev libzstd-dev libsimdjson-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev
  libssl-dev libnghttp2-dev zlib1g-dev libjemalloc-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  etcd-server etcd-client
  curl openssl procps python3 valgrind
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
