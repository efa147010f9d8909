#!/usr/bin/env bash
# Installs the Debian packages phaseloop builds and runs with. Idempotent: a
# package already installed (dpkg -s) is not asked for again, so a warm machine
# does not wait on apt. Uses sudo only when not root.
set -euo pipefail

packages=(
  # build
  bazel-bootstrap clang-16 llvm-16-dev llvm-16-tools lld-16 g++ libclang-16-dev libpolly-16-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # rpc / serialization
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  # storage, config, kafka
  libsqlite3-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev librdkafka-dev kcat
  # signed policy artifacts (ed25519, common/signing)
  libsodium-dev
  # http endpoints (/metrics)
  libcpp-httplib-dev
  # learning
  libtorch-dev libopenblas0-pthread libeigen3-dev
  # misc tools used by tests and benchmarks
  zlib1g-dev libzstd-dev libedit-dev libxml2-dev libffi-dev libncurses-dev
  make cmake hyperfine jq sqlite3
  # phaseloop search --objective runtime samples the baseline with perf record
  linux-perf
  # phaseloop stage --bolt (post-link layout: llvm-bolt, merge-fdata)
  bolt-16
  # sanitizer runtimes (phaseloop stage --ubsan tells undefined behaviour from a miscompile)
  libclang-rt-16-dev
  # tools/fetch_sources.sh (dpkg-source unpacks Debian source packages)
  dpkg-dev
  # phaseloop corpus generate (random C programs and their headers)
  csmith libcsmith-dev
  # tools/check_report.sh: HTML reports rendered in a real browser (headless)
  chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
else
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo "setup: packages installed"
fi

# Debian source packages the real-project tests build (no network when warm).
"$(dirname "$0")/fetch_sources.sh"
