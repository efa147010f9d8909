#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CACHE_COMMAND_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CACHE_COMMAND_H_

// `phaseloop cache stats|clear [--dir DIR] [--json]`: topk's outcome cache
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
};

// Exit codes: 0 ok, 1 the cache cannot be read or cleared, 2 no directory.
int RunCacheStats(const CacheFlags& flags, std::ostream& out,
                  std::ostream& err);
int RunCacheClear(const CacheFlags& flags, std::ostream& out,
                  std::ostream& err);

void AddCacheCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CACHE_COMMAND_H_
