#!/usr/bin/env bash
# Installs the Debian packages phaseloop builds and runs with. Idempotent: a
# package already installed is not asked for again, so a warm machine does
# not wait on apt. Uses sudo only when not root. Then fetches the Debian
# source packages the tests build (tools/fetch_sources.sh).
#   tools/setup.sh [--no-sources]
set -euo pipefail

sources=1
for arg in "$@"; do
  case "$arg" in
    --no-sources) sources=0 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

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

# Installed means dpkg's status "installed": `dpkg -s` also succeeds for a
# package removed but not purged (its config files left), which was then
# never installed again.
installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
else
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: missing packages: ${missing[*]}" >&2
    echo "setup: apt-get is not on this machine; phaseloop is set up on Debian 12 (bookworm): install these packages with your system's package manager, or use a Debian 12 machine or container" >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "setup: missing packages: ${missing[*]}" >&2
      echo "setup: not root and no sudo: run tools/setup.sh as root, or install sudo, or install these packages as root yourself" >&2
      exit 1
    fi
    sudo="sudo"
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get update -qq || \
     ! $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
    echo "setup: apt-get could not install ${missing[*]}: check the messages above (network, apt sources: these are Debian 12 bookworm packages, some from bookworm-backports)" >&2
    exit 1
  fi
  echo "setup: packages installed"
fi

# Debian source packages the real-project tests build (no network when warm).
if [ "$sources" -eq 1 ]; then
  "$(dirname "$0")/fetch_sources.sh"
fi
