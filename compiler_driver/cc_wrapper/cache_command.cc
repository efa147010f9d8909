#include "compiler_driver/cc_wrapper/cache_command.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_format.h"
#include "common/command/exit_code.h"
#include "common/command/subcommand.h"
#include "common/files/output_paths.h"
#include "compiler_driver/cc_wrapper/outcome_bundle.h"
#include "compiler_driver/cc_wrapper/outcome_cache.h"
#include "nlohmann/json.hpp"

namespace phaseloop::cc_wrapper {
namespace {

constexpr char kName[] = "phaseloop cache: ";

// The directory to work on: --dir, else the one phaseloop-cc uses
// (OutcomeCacheDirFromEnv); "" after saying why there is none.
std::string CacheDir(const CacheFlags& flags, std::ostream& err) {
  if (!flags.dir.empty()) return flags.dir;
  std::string dir = OutcomeCacheDirFromEnv();
  if (IsRelativeCacheDir(dir)) {
    err << kName << kOutcomeCacheEnv << "='" << dir
        << "' is a relative path, which phaseloop-cc does not use (each "
           "compile would resolve it against its own directory): set it to "
           "an absolute path, or pass --dir DIR\n";
    return "";
  }
  if (dir.empty()) {
    if (const char* off = std::getenv(kOutcomeCacheEnv); off != nullptr) {
      err << kName << kOutcomeCacheEnv << " turns the outcome cache off ('"
          << off << "'): pass --dir DIR to read or clear a cache directory\n";
    } else {
      err << kName
          << "no outcome cache: HOME is unset and the per-user one under "
             "/tmp is not this user's own private directory; pass --dir DIR "
             "(or set HOME or "
          << kOutcomeCacheEnv << ")\n";
    }
  }
  return dir;
}

// A --dir (or PHASELOOP_OUTCOME_CACHE) that does not exist reads as an
// empty cache: said, as a mistyped path would otherwise look like one.
void NoteMissingDir(const std::string& dir, std::ostream& err) {
  if (std::error_code error; !std::filesystem::exists(dir, error)) {
    err << kName << "note: " << dir
        << " does not exist yet (no compile has stored a choice there; a "
           "mistyped --dir?)\n";
  }
}

}  // namespace

int RunCacheStats(const CacheFlags& flags, std::ostream& out,
                  std::ostream& err) {
  const std::string dir = CacheDir(flags, err);
  if (dir.empty()) return command::kExitBadInput;
  absl::StatusOr<OutcomeCacheStats> stats = ReadOutcomeCacheStats(dir);
  if (!stats.ok()) {
    err << kName << stats.status().message() << "\n";
    return command::kExitInternal;
  }
  NoteMissingDir(dir, err);
  // The cap phaseloop-cc applies with this environment; a value it cannot
  // read is said here (the compile path stays silent).
  std::string warning;
  const int64_t max_bytes = OutcomeCacheMaxBytesFromEnv(&warning);
  if (!warning.empty()) err << kName << "warning: " << warning << "\n";
  if (flags.json) {
    out << nlohmann::ordered_json{{"dir", dir},
                                  {"entries", stats->entries},
                                  {"bytes", stats->bytes},
                                  {"max_bytes", max_bytes}}
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << absl::StrFormat(
        "outcome cache %s\n  %d choices, %d bytes of %d (%.1f %%)\n", dir,
        stats->entries, stats->bytes, max_bytes,
        100.0 * static_cast<double>(stats->bytes) / max_bytes);
  }
  return command::kExitOk;
}

int RunCacheClear(const CacheFlags& flags, std::ostream& out,
                  std::ostream& err) {
  const std::string dir = CacheDir(flags, err);
  if (dir.empty()) return command::kExitBadInput;
  absl::StatusOr<OutcomeCacheStats> before = ReadOutcomeCacheStats(dir);
  NoteMissingDir(dir, err);
  if (absl::Status cleared = ClearOutcomeCache(dir); !cleared.ok()) {
    err << kName << cleared.message() << "\n";
    return absl::IsFailedPrecondition(cleared) ? command::kExitBadInput
                                               : command::kExitInternal;
  }
  out << "cleared " << (before.ok() ? before->entries : 0) << " choices from "
      << dir << "\n";
  return command::kExitOk;
}

int RunCacheExport(const CacheFlags& flags, std::ostream& out,
                   std::ostream& err) {
  const std::string dir = CacheDir(flags, err);
  if (dir.empty()) return command::kExitBadInput;
  // Before any entry is read: an --out that cannot be written is the
  // user's to fix (exit 2).
  if (absl::Status s = files::CheckOutputPath("--out", flags.bundle); !s.ok()) {
    err << kName << s.message() << "\n";
    return command::kExitBadInput;
  }
  absl::StatusOr<OutcomeExport> exported =
      ExportOutcomeBundle(dir, flags.bundle);
  if (!exported.ok()) {
    err << kName << exported.status().message() << "\n";
    return absl::IsNotFound(exported.status()) ? command::kExitBadInput
                                               : command::kExitInternal;
  }
  for (const std::string& skipped : exported->skipped) {
    err << kName << "warning: left out a bad entry: " << skipped << "\n";
  }
  out << "exported " << exported->entries << " choices from " << dir << " to "
      << flags.bundle << "\n";
  return command::kExitOk;
}

int RunCacheImport(const CacheFlags& flags, std::ostream& out,
                   std::ostream& err) {
  const std::string dir = CacheDir(flags, err);
  if (dir.empty()) return command::kExitBadInput;
  if (std::error_code error;
      std::filesystem::is_directory(flags.bundle, error)) {
    err << kName << flags.bundle
        << " is a directory: give a bundle file (`phaseloop cache export "
           "--out FILE` writes one)\n";
    return command::kExitBadInput;
  }
  std::string warning;
  const int64_t max_bytes = OutcomeCacheMaxBytesFromEnv(&warning);
  if (!warning.empty()) err << kName << "warning: " << warning << "\n";
  absl::StatusOr<OutcomeImport> imported =
      ImportOutcomeBundle(flags.bundle, dir, max_bytes);
  if (!imported.ok()) {
    err << kName << imported.status().message() << "\n";
    return absl::IsInternal(imported.status()) ? command::kExitInternal
                                               : command::kExitBadInput;
  }
  for (const std::string& refused : imported->refused) {
    err << kName << "refused entry " << refused << "\n";
  }
  if (flags.json) {
    out << nlohmann::ordered_json{{"dir", dir},
                                  {"bundle", flags.bundle},
                                  {"entries", imported->entries},
                                  {"imported", imported->imported},
                                  {"present", imported->present},
                                  {"refused", imported->refused.size()}}
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << "imported " << imported->imported << " of " << imported->entries
        << " choices into " << dir << " (" << imported->present
        << " already there, " << imported->refused.size() << " refused)\n";
  }
  return imported->refused.empty() ? command::kExitOk : command::kExitBadInput;
}

void AddCacheCommand(CLI::App& app, int& exit_code) {
  CLI::App* cache = command::AddCommandGroup(
      app, "cache",
      "topk's outcome cache (on by default: ~/.cache/phaseloop/outcomes, or "
      "PHASELOOP_OUTCOME_CACHE): the policy's choice per module, so a "
      "rebuild runs one pipeline");
  const std::string dir_help =
      "the cache directory (default: phaseloop-cc's, $PHASELOOP_OUTCOME_CACHE "
      "or ~/.cache/phaseloop/outcomes)";
  for (const bool clear : {false, true}) {
    auto [sub, flags] = command::AddSubcommand<CacheFlags>(
        *cache, clear ? "clear" : "stats",
        clear ? "Remove every cached choice"
              : "Choices held, bytes used and the cap "
                "(PHASELOOP_OUTCOME_CACHE_MAX_SIZE, default 16Mi)",
        exit_code, [clear](const CacheFlags& f) {
          return clear ? RunCacheClear(f, std::cout, std::cerr)
                       : RunCacheStats(f, std::cout, std::cerr);
        });
    sub->add_option("--dir", flags->dir, dir_help);
    if (!clear) sub->add_flag("--json", flags->json, "print JSON");
  }
  {
    auto [sub, flags] = command::AddSubcommand<CacheFlags>(
        *cache, "export",
        "Write every cached choice to one bundle file, to share one "
        "machine's measurements with the fleet (`cache import` on the "
        "others; the same phaseloop install hits)",
        exit_code, [](const CacheFlags& f) {
          return RunCacheExport(f, std::cout, std::cerr);
        });
    sub->add_option("--dir", flags->dir, dir_help);
    sub->add_option("--out", flags->bundle, "the bundle file to write")
        ->required();
  }
  {
    auto [sub, flags] = command::AddSubcommand<CacheFlags>(
        *cache, "import",
        "Add a bundle's choices (`cache export`) to the cache, each entry "
        "verified; choices already cached stay",
        exit_code, [](const CacheFlags& f) {
          return RunCacheImport(f, std::cout, std::cerr);
        });
    sub->add_option("bundle", flags->bundle, "the bundle file")->required();
    sub->add_option("--dir", flags->dir, dir_help);
    sub->add_flag("--json", flags->json, "print JSON");
  }
}

}  // namespace phaseloop::cc_wrapper
