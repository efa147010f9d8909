#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CACHE_COMMAND_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CACHE_COMMAND_H_

// `phaseloop cache stats|clear|export|import [--dir DIR]`: topk's outcome cache
// (outcome_cache.h) — how many choices it holds and how many bytes, against
// its cap — and emptying it. DIR defaults to the one phaseloop-cc uses
// (OutcomeCacheDirFromEnv).

#include <iosfwd>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::cc_wrapper {

struct CacheFlags {
  std::string dir;  // "" = phaseloop-cc's (OutcomeCacheDirFromEnv)
  bool json = false;
  std::string bundle;  // export: --out FILE; import: the FILE argument
};

// Exit codes: 0 ok, 1 the cache cannot be read or cleared, 2 no directory.
int RunCacheStats(const CacheFlags& flags, std::ostream& out,
                  std::ostream& err);
int RunCacheClear(const CacheFlags& flags, std::ostream& out,
                  std::ostream& err);
// `cache export --out FILE` and `cache import FILE` (outcome_bundle.h):
// 0 ok, 1 the cache or the file cannot be read or written, 2 bad input (no
// directory, nothing to export, not a bundle, or entries refused: the good
// ones are imported, the refused ones named).
int RunCacheExport(const CacheFlags& flags, std::ostream& out,
                   std::ostream& err);
int RunCacheImport(const CacheFlags& flags, std::ostream& out,
                   std::ostream& err);

void AddCacheCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CACHE_COMMAND_H_
