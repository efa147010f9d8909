#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_OUTCOME_CACHE_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_OUTCOME_CACHE_H_

// topk's outcome cache (issue 20), like ccache for the policy's choice: on
// by default (OutcomeCacheDirFromEnv), when a learned policy measures
// candidates on a module (topk), the pipeline it keeps is stored under a
// key of everything that decides it — the optimizer binary, the module
// (its bitcode, use-list order, target triple and CPU included, with
// source_filename's
// directory left out: ir::ModuleStateHashIgnoringSourceDirectory, so that a
// checkout at another path shares the entries), the -O level,
// the code generator settings, the policy's version and its inference
// options (mode, k, budget). A rebuild, or another configuration of the
// same code, then runs one pipeline instead of topk's k+1 measurements.
//
// A hit gives the decision a miss computes: topk's budget counts work,
// never the clock, so its choice is a function of the key. The cache never
// changes an object, and never fails a compile (an unreadable or bad entry
// is a miss, an unwritable directory a note in the decision's detail).
//
// Entries: DIR/outcomes/<key[0:2]>/<key>, a small JSON file written with
// files::WriteFileAtomically (processes sharing DIR see a whole entry or
// none; two writing one key write equal bytes). Bounded like ccache: each of
// the 256 subdirectories may hold max_bytes/256; after a store, entries of
// that subdirectory are removed oldest first (by modification time; a hit
// touches its entry) until it fits, never the entry just stored (so a cap
// below 256 entries holds one per subdirectory). `phaseloop cache
// stats|clear` reads and empties it, touching only the cache's own files.
// Thread-compatible; safe across processes.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "compiler_driver/cc_wrapper/object_cache.h"
#include "compiler_driver/cc_wrapper/policy.h"
#include "compiler_driver/cc_wrapper/wrapper_config.h"  // kOutcomeCacheMaxSizeEnv

namespace phaseloop::cc_wrapper {

inline constexpr char kOutcomeCacheEnv[] = "PHASELOOP_OUTCOME_CACHE";
inline constexpr int64_t kDefaultOutcomeCacheMaxBytes = 16LL << 20;  // 16 Mi

// The directory phaseloop-cc's outcome cache uses (on by default, like
// ccache's): PHASELOOP_OUTCOME_CACHE when it is set — "", "off", "0" or
// "none" turn the cache off and give ""; a relative path is returned as it
// is, and OutcomeCache::Lookup then uses nothing and says why —, else
// $XDG_CACHE_HOME/phaseloop/outcomes, else ~/.cache/phaseloop/outcomes —
// Bazel runs actions without HOME: then under the password file's home
// (files::UserCacheDir) —, else /tmp/phaseloop-outcomes-<uid>. The
// generated Bazel toolchain names it in cc_wrapper.sh only when it is
// another directory.
std::string OutcomeCacheDirFromEnv();

// A directory phaseloop-cc does not use as its outcome cache: a relative
// path, which each compile would resolve against its own working
// directory (cache folders inside the source tree, misses where hits were
// due).
inline bool IsRelativeCacheDir(const std::string& dir) {
  return !dir.empty() && dir.front() != '/';
}

// The cap phaseloop-cc applies: PHASELOOP_OUTCOME_CACHE_MAX_SIZE (a size as
// PHASELOOP_SPOOL_MAX_SIZE takes: "16Mi", "500k", bytes), or the default
// when it is unset. A value that does not read as a size > 0 gives the
// default too, and `*warning` (when given) says so, naming the variable,
// for `phaseloop cache stats`; phaseloop-cc steps aside on it before
// (config_invalid, ReadWrapperConfig).
int64_t OutcomeCacheMaxBytesFromEnv(std::string* warning = nullptr);

// Bumped when the entry layout or the key's meaning changes.
inline constexpr int kOutcomeCacheFormat = 1;

struct OutcomeLookup {
  std::string key;                    // empty when the cache cannot be used
  std::optional<PolicyDecision> hit;  // set on a verified hit
  std::string outcome;                // "hit" or "miss"
  std::string note;                   // for the detail: a bad entry, an error
};

class OutcomeCache {
 public:
  // `identity`: WrapperIdentity of the running optimizer, or why it could
  // not be had (then every lookup is a miss saying so, nothing is stored).
  OutcomeCache(std::string dir, absl::StatusOr<std::string> identity,
               int64_t max_bytes = kDefaultOutcomeCacheMaxBytes);

  // The cache at `dir` for this process's binary (/proc/self/exe).
  static OutcomeCache ForRunningBinary(const std::string& dir,
                                       int64_t max_bytes);

  const std::string& dir() const { return dir_; }
  int64_t max_bytes() const { return max_bytes_; }

  // `policy_spec`: PolicyRunner::OutcomeSpec (version and inference
  // options); `codegen`: the settings the object is generated with.
  OutcomeLookup Lookup(const std::string& module_hash,
                       const std::string& opt_level,
                       const codegen::CodegenSettings& codegen,
                       const std::string& policy_spec) const;

  // After a miss with a key: writes the entry, then trims its
  // subdirectory to its share of max_bytes. "" when stored, else a note.
  std::string Store(const OutcomeLookup& miss,
                    const PolicyDecision& computed) const;

  std::string EntryPath(const std::string& key) const;

 private:
  std::string dir_;
  absl::StatusOr<std::string> identity_;
  int64_t max_bytes_;
};

// The entry's bytes and their reading (for tests): Parse checks the format
// and the key and says what was wrong.
std::string SerializeOutcome(const std::string& key,
                             const PolicyDecision& decision);
absl::StatusOr<PolicyDecision> ParseOutcome(const std::string& key,
                                            const std::string& bytes);

// `phaseloop cache stats|clear`.
struct OutcomeCacheStats {
  int64_t entries = 0;
  int64_t bytes = 0;  // of entry files, as stored
};
absl::StatusOr<OutcomeCacheStats> ReadOutcomeCacheStats(const std::string& dir);
// Removes every entry (DIR/outcomes); the directory itself stays.
// FailedPrecondition, nothing removed, when DIR/outcomes holds anything
// that is not the cache's own (a --dir naming another directory).
absl::Status ClearOutcomeCache(const std::string& dir);

// A policy runner that consults `cache` before `inner` when `inner`
// measures candidates (a non-empty OutcomeSpec), and stores what `inner`
// measured after a miss. Decisions say "outcome cache hit" in their note
// and carry PolicyDecision::outcome_cache. A hit keeping a pipeline `inner`
// never chooses (PolicyRunner::MayChoose) is a bad entry: measured again.
// Neither is owned.
class OutcomeCachingPolicy : public PolicyRunner {
 public:
  OutcomeCachingPolicy(const PolicyRunner& inner, const OutcomeCache& cache,
                       codegen::CodegenSettings codegen)
      : inner_(inner), cache_(cache), codegen_(std::move(codegen)) {}
  const char* kind() const override { return inner_.kind(); }
  const std::string& version() const override { return inner_.version(); }
  std::string OutcomeSpec() const override { return inner_.OutcomeSpec(); }
  bool MayChoose(const std::string& pipeline) const override {
    return inner_.MayChoose(pipeline);
  }
  std::string Decide(const PolicyInput& input) const override {
    return DecideWithNote(input).pipeline;
  }
  // A miss is not stored here: StorePending stores it once the compile is
  // known to write its object.
  PolicyDecision DecideWithNote(const PolicyInput& input) const override;

  // Stores the choice of the last miss DecideWithNote made, if any; the
  // store's note ("" when nothing was pending or it said nothing). The
  // wrapper calls it once nothing made the compile fall back to clang: a
  // stored choice of a compile that fell back (LLVM printed a diagnostic
  // while measuring) made the next identical compile a hit that measured
  // nothing, printed nothing and wrote another object (a -Werror build
  // failed once, then passed).
  std::string StorePending() const;

 private:
  const PolicyRunner& inner_;
  const OutcomeCache& cache_;
  codegen::CodegenSettings codegen_;
  mutable std::optional<std::pair<OutcomeLookup, PolicyDecision>> pending_;
};

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_OUTCOME_CACHE_H_
