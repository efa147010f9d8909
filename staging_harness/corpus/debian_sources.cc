#include "staging_harness/corpus/debian_sources.h"

#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "common/process/subprocess.h"
#include "compiler_driver/ir/module_loader.h"

namespace phaseloop::corpus {
namespace {

namespace fs = std::filesystem;

constexpr char kUnpackedMarker[] = ".phaseloop-unpacked";
constexpr char kConfiguredMarker[] = ".phaseloop-configured";

// The version from CACHE/<pkg>_<version>.dsc; "" when there is none.
std::string DscVersion(const fs::path& dir, const std::string& package) {
  std::error_code ec;
  const std::string prefix = package + "_";
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && entry.path().extension() == ".dsc") {
      return name.substr(prefix.size(), name.size() - prefix.size() - 4);
    }
  }
  return "";
}

bool ValidPackageName(const std::string& name) {
  if (name.size() < 2) return false;
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' ||
          c == '.')) {
      return false;
    }
  }
  return true;
}

}  // namespace

const std::vector<std::string>& DefaultDebianPackages() {
  static const auto* packages = new std::vector<std::string>{
      // compression
      "bzip2", "zlib", "xz-utils", "lz4", "libzstd", "brotli", "zopfli",
      "libdeflate", "lzo2",
      // parsers and data formats
      "expat", "libyaml", "jansson", "cjson", "libxml2", "libonig", "pcre2",
      // interpreters and language tools
      "lua5.4", "mawk", "gawk", "bc", "byacc", "jq",
      // crypto and hashing
      "nettle", "libsodium", "mbedtls", "libtommath", "libtomcrypt", "xxhash",
      // image, audio and text tools, storage
      "giflib", "libpng1.6", "opus", "libogg", "less", "lmdb"};
  return *packages;
}

std::string DefaultDebianCache() {
  const char* cache = std::getenv("PHASELOOP_CACHE");
  if (cache != nullptr && *cache != '\0') {
    return (fs::path(cache) / "debian-src").string();
  }
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') {
    const passwd* user = getpwuid(getuid());
    home = user != nullptr ? user->pw_dir : "/tmp";
  }
  return (fs::path(home) / ".cache" / "phaseloop" / "debian-src").string();
}

absl::StatusOr<DebianSource> CachedDebianSource(const std::string& cache,
                                                const std::string& package) {
  const fs::path tree = fs::path(cache) / package;
  std::error_code ec;
  const std::string version = DscVersion(cache, package);
  if (!fs::exists(tree / kUnpackedMarker, ec) || version.empty()) {
    return absl::NotFoundError(
        absl::StrCat(package, " is not unpacked in ", cache));
  }
  return DebianSource{package, version, tree.string()};
}

std::vector<std::string> DebianFetcher::AptOptions() const {
  const fs::path apt = fs::path(cache_) / ".apt";
  std::vector<std::string> options = {
      "-o",
      absl::StrCat("Dir::Etc::sourcelist=", (apt / "sources.list").string()),
      "-o",
      "Dir::Etc::sourceparts=/dev/null",
      "-o",
      absl::StrCat("Dir::State::Lists=", (apt / "lists").string()),
      "-o",
      absl::StrCat("Dir::Cache=", (apt / "cache").string())};
  // Download as the current user into a directory it owns (no _apt sandbox).
  if (const passwd* user = getpwuid(getuid()); user != nullptr) {
    options.insert(options.end(),
                   {"-o", absl::StrCat("APT::Sandbox::User=", user->pw_name)});
  }
  return options;
}

absl::Status DebianFetcher::UpdateIndex(std::ostream& progress) {
  if (index_updated_) return absl::OkStatus();
  const fs::path apt = fs::path(cache_) / ".apt";
  std::error_code ec;
  fs::create_directories(apt / "lists" / "partial", ec);
  fs::create_directories(apt / "cache" / "archives" / "partial", ec);
  {
    std::ofstream list(apt / "sources.list", std::ios::trunc);
    list << "deb-src http://deb.debian.org/debian bookworm main\n";
  }
  progress
      << "fetch-debian: updating the private deb-src index (bookworm main)\n";
  process::ProcessSpec spec;
  spec.argv = {"apt-get", "-qq"};
  for (const std::string& o : AptOptions()) spec.argv.push_back(o);
  spec.argv.push_back("update");
  spec.timeout_seconds = 600;
  absl::StatusOr<process::ProcessResult> run = process::RunProcess(spec);
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::UnavailableError(
        absl::StrCat("apt-get update of the private deb-src index failed (is "
                     "deb.debian.org reachable?): ",
                     process::ShortReason(run->output)));
  }
  index_updated_ = true;
  return absl::OkStatus();
}

absl::StatusOr<DebianSource> DebianFetcher::Fetch(const std::string& package,
                                                  std::ostream& progress) {
  if (!ValidPackageName(package)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", package, "' is not a Debian source package name"));
  }
  absl::StatusOr<DebianSource> cached = CachedDebianSource(cache_, package);
  if (cached.ok()) return cached;
  absl::Status updated = UpdateIndex(progress);
  if (!updated.ok()) return updated;
  std::error_code ec;
  fs::create_directories(cache_, ec);
  const fs::path work =
      fs::path(cache_) / absl::StrCat(".", package, ".", getpid(), ".tmp");
  fs::remove_all(work, ec);
  fs::create_directories(work, ec);
  progress << "fetch-debian: downloading source package " << package << "\n";
  process::ProcessSpec download;
  download.argv = {"apt-get", "-qq"};
  for (const std::string& o : AptOptions()) download.argv.push_back(o);
  download.argv.insert(download.argv.end(),
                       {"source", "--download-only", package});
  download.cwd = work.string();
  download.timeout_seconds = 900;
  absl::StatusOr<process::ProcessResult> got = process::RunProcess(download);
  const std::string version = DscVersion(work, package);
  if (!got.ok() || got->exit_code != 0 || version.empty()) {
    fs::remove_all(work, ec);
    return absl::NotFoundError(absl::StrCat(
        "could not download source package '", package,
        "' (is it a bookworm main source package name?): ",
        got.ok() ? process::ShortReason(got->output) : got.status().message()));
  }
  // dpkg-source verifies the checksums in the .dsc and applies debian/patches.
  process::ProcessSpec unpack;
  unpack.argv = {"dpkg-source", "-x",
                 absl::StrCat(package, "_", version, ".dsc"), "unpacked"};
  unpack.cwd = work.string();
  unpack.timeout_seconds = 600;
  absl::StatusOr<process::ProcessResult> unpacked = process::RunProcess(unpack);
  if (!unpacked.ok() || unpacked->exit_code != 0) {
    fs::remove_all(work, ec);
    return absl::InternalError(
        absl::StrCat("dpkg-source -x failed for ", package,
                     " (install dpkg-dev: "
                     "tools/setup.sh): ",
                     unpacked.ok() ? process::ShortReason(unpacked->output)
                                   : unpacked.status().message()));
  }
  std::ofstream(work / "unpacked" / kUnpackedMarker).close();
  const fs::path tree = fs::path(cache_) / package;
  fs::remove_all(tree, ec);
  fs::rename(work / "unpacked", tree, ec);
  for (const auto& entry : fs::directory_iterator(work, ec)) {
    fs::rename(entry.path(), fs::path(cache_) / entry.path().filename(), ec);
  }
  fs::remove_all(work, ec);
  return CachedDebianSource(cache_, package);
}

absl::StatusOr<std::string> PrepareWorkTree(const DebianSource& source,
                                            const std::string& work_root) {
  const fs::path tree = fs::path(work_root) / source.package;
  const fs::path stamp = tree / ".phaseloop-version";
  absl::StatusOr<std::string> have = ir::ReadFile(stamp.string());
  if (have.ok() && *have == source.origin()) return tree.string();
  std::error_code ec;
  const fs::path tmp = fs::path(work_root) / ("." + source.package + ".tmp");
  fs::remove_all(tmp, ec);
  fs::create_directories(work_root, ec);
  fs::copy(source.tree, tmp,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
  if (ec) {
    fs::remove_all(tmp, ec);
    return absl::InternalError(absl::StrCat("cannot copy ", source.tree, " to ",
                                            tmp.string(), ": ", ec.message()));
  }
  std::ofstream(tmp / ".phaseloop-version", std::ios::trunc) << source.origin();
  fs::remove_all(tree, ec);
  fs::rename(tmp, tree, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot rename ", tmp.string(), ": ", ec.message()));
  }
  return tree.string();
}

std::string ConfigureTree(const std::string& tree, double timeout_seconds) {
  const fs::path root(tree);
  const fs::path marker = root / kConfiguredMarker;
  std::error_code ec;
  if (fs::exists(marker, ec)) {
    absl::StatusOr<std::string> note = ir::ReadFile(marker.string());
    return note.ok() && *note != "ok\n" ? *note : "";
  }
  if (!fs::exists(root / "configure", ec) ||
      fs::exists(root / "config.h", ec)) {
    return "";
  }
  process::ProcessSpec spec;
  spec.argv = {"sh", "./configure"};
  spec.cwd = tree;
  spec.env = {"CC=clang-16", "CFLAGS=-O2 -w"};
  spec.timeout_seconds = timeout_seconds;
  absl::StatusOr<process::ProcessResult> run = process::RunProcess(spec);
  std::string note;
  if (!run.ok()) {
    note = absl::StrCat("./configure could not run: ", run.status().message());
  } else if (run->timed_out) {
    note = absl::StrCat("./configure timed out after ", timeout_seconds, " s");
  } else if (run->exit_code != 0) {
    note = absl::StrCat("./configure failed (exit ", run->exit_code,
                        "): ", process::ShortReason(run->output));
  }
  std::ofstream(marker, std::ios::trunc)
      << (note.empty() ? "ok" : note) << "\n";
  return note;
}

}  // namespace phaseloop::corpus
