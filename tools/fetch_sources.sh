#!/usr/bin/env bash
# Downloads Debian 12 (bookworm) source packages that the real-project tests
# and the wrapper benchmark build, and unpacks them (dpkg-source -x: orig
# tarball + Debian patches).
#
#   tools/fetch_sources.sh [PACKAGE...]      default: bzip2 zlib
#
# Where: ${PHASELOOP_CACHE:-$HOME/.cache/phaseloop}/debian-src/
#   <pkg>_<version>.dsc, the orig and debian tarballs, and the unpacked tree
#   <pkg>/ (a stable name: tests need not know the version).
#
# Idempotent and quick when warm: a package whose .dsc, orig tarball and
# unpacked tree are present is not looked up again, so no network is used.
# apt uses a private deb-src list and private lists/cache directories under
# the cache; the system's apt configuration is not touched. A failed download
# or unpack leaves nothing half-written under the final names.
set -euo pipefail
# Without HOME (cron, a service's clean environment): the account's home.
HOME="${HOME:-$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6)}"
[ -z "$HOME" ] || export HOME

case "${1:-}" in
  -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
  -*) echo "fetch_sources.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
cache="${PHASELOOP_CACHE:-${HOME:?is not set: set PHASELOOP_CACHE to the cache directory}/.cache/phaseloop}"
dest="${cache}/debian-src"
apt_dir="${cache}/apt-src"
packages=("$@")
[ ${#packages[@]} -gt 0 ] || packages=(bzip2 zlib)

# True when <pkg>/ is unpacked and its .dsc and orig tarball are present.
is_fetched() {
  local pkg="$1"
  [ -f "${dest}/${pkg}/.phaseloop-unpacked" ] || return 1
  compgen -G "${dest}/${pkg}_*.dsc" >/dev/null || return 1
  compgen -G "${dest}/${pkg}_*.orig.tar.*" >/dev/null || return 1
}

missing=()
for pkg in "${packages[@]}"; do
  is_fetched "$pkg" || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "fetch_sources: ${packages[*]} present in ${dest}"
  exit 0
fi

if ! command -v dpkg-source >/dev/null; then
  echo "fetch_sources: dpkg-source not found; install dpkg-dev (tools/setup.sh does)" >&2
  exit 1
fi

mkdir -p "${dest}" "${apt_dir}/lists/partial" "${apt_dir}/cache/archives/partial"
echo "deb-src http://deb.debian.org/debian bookworm main" >"${apt_dir}/sources.list"
apt_opts=(
  -o "Dir::Etc::sourcelist=${apt_dir}/sources.list"
  -o "Dir::Etc::sourceparts=/dev/null"
  -o "Dir::State::Lists=${apt_dir}/lists"
  -o "Dir::Cache=${apt_dir}/cache"
  # Downloads as the current user into a directory it owns (no _apt sandbox).
  -o "APT::Sandbox::User=$(id -un)"
)

echo "fetch_sources: updating the private deb-src index (bookworm main)"
if ! apt-get -qq "${apt_opts[@]}" update; then
  echo "fetch_sources: apt-get update of the deb-src index failed;" \
    "is deb.debian.org reachable?" >&2
  exit 1
fi

for pkg in "${missing[@]}"; do
  echo "fetch_sources: downloading source package ${pkg}"
  work="$(mktemp -d "${dest}/.${pkg}.XXXXXX")"
  trap 'rm -rf "${work}"' EXIT
  if ! (cd "${work}" && apt-get -qq "${apt_opts[@]}" source --download-only "${pkg}"); then
    echo "fetch_sources: could not download source package '${pkg}'" \
      "(is it a bookworm main source package name?)" >&2
    exit 1
  fi
  dsc="$(compgen -G "${work}/${pkg}_*.dsc" | head -n1)"
  if [ -z "${dsc}" ]; then
    echo "fetch_sources: apt-get source ${pkg} produced no .dsc" >&2
    exit 1
  fi
  # dpkg-source verifies checksums from the .dsc and applies debian/patches.
  # Without Debian's keyring gpgv cannot check the signature and says so on
  # stderr; that is expected, so its output is shown only on failure.
  if ! (cd "${work}" && dpkg-source -x "$(basename "${dsc}")" unpacked) \
      >"${work}/dpkg-source.log" 2>&1; then
    cat "${work}/dpkg-source.log" >&2
    echo "fetch_sources: dpkg-source -x ${dsc##*/} failed (output above)" >&2
    exit 1
  fi
  touch "${work}/unpacked/.phaseloop-unpacked"
  rm -rf "${dest:?}/${pkg}"
  mv "${work}/unpacked" "${dest}/${pkg}"
  mv "${work}"/"${pkg}"_* "${dest}/"
  rm -rf "${work}"
  trap - EXIT
  echo "fetch_sources: ${pkg} unpacked in ${dest}/${pkg} ($(basename "${dsc}"))"
done
