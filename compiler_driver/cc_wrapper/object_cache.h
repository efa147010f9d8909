#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_OBJECT_CACHE_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_OBJECT_CACHE_H_

// The wrapper's object cache, a lab setting (off by default): with
// PHASELOOP_OBJECT_CACHE=DIR, once the policy has chosen a translation
// unit's pipeline, the object is looked up by a content key of everything
// that decides its bytes (ObjectCacheKey); a hit skips the passes and code
// generation. Runtime search rebuilds a whole workload per evaluation with
// one module's pipeline changed: with the cache only that module compiles.
//
// Entries: DIR/objects/<key[0:2]>/<key>, a text header (format, key, the
// per-TU figures a decision records, the object's length and content hash)
// then the object bytes. A lookup verifies all of it and the ELF magic; a
// bad entry is a miss (and the store after it rewrites the entry).
// Entries are written with files::WriteFileAtomically, so processes sharing
// DIR see a whole entry or none, and two writing one key write equal bytes.
//
// The cache never fails a compile: an error (unreadable entry, unwritable
// or full directory) is a note for the decision's detail and the object is
// computed as without the cache. Nothing evicts entries: DIR is scratch.
// Thread-compatible; safe across processes.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "compiler_driver/cc_wrapper/argument_processing.h"
#include "compiler_driver/codegen/object_emitter.h"

namespace phaseloop::cc_wrapper {

inline constexpr char kObjectCacheEnv[] = "PHASELOOP_OBJECT_CACHE";

// Bumped when the entry layout or the key's meaning changes.
inline constexpr int kObjectCacheFormat = 4;

// Everything that decides a translation unit's object once the policy chose
// its pipeline. A new input of the optimizer that changes object bytes (a
// mode, a setting) must become a field here and a line of ObjectCacheKey.
struct ObjectCacheKeyInput {
  std::string wrapper_identity;  // WrapperIdentity of the optimizer binary
  std::string module_hash;       // the unoptimised module
  std::string opt_level;         // "O0".."Oz": pipeline tuning, codegen level
  std::string pipeline;          // the policy's text, codegen<...> included
  codegen::CodegenSettings codegen;
  // PHASELOOP_COUNT_EXECUTED: the object carries the executed-IR counter
  // (compiler_driver/instrumentation/executed_count.h).
  bool count_executed = false;
  // -flto / -flto=thin: the entry is LTO bitcode, not an object.
  LtoMode lto = LtoMode::kNone;
};

// 32 hex digits: ir::ContentHash of the format, the LLVM version and every
// field of `input`, each length-prefixed.
std::string ObjectCacheKey(const ObjectCacheKeyInput& input);

// Identifies the optimizer binary at `exe_path` by content: its BLAKE3
// ("phaseloop-cc-opt:<32 hex>"). Any change to the wrapper's code or the
// LLVM it links changes it. Hashing ~100 MB takes a while, so the hash is
// remembered in `memo_dir` (created; "" for none) under a name made of the
// file's device, inode, size and times; a memo that cannot be written is
// not an error. NotFound/Internal naming the file when it cannot be read.
absl::StatusOr<std::string> WrapperIdentity(const std::string& exe_path,
                                            const std::string& memo_dir);

// What a hit gives back: the object and the figures the decision records
// that are measured after the passes.
struct CachedObject {
  std::string object;
  int64_t ir_count_after = 0;
  int64_t text_size = 0;
  int64_t alloc_size = -1;
};

// One translation unit's lookup.
struct ObjectCacheLookup {
  std::string key;                  // empty when the cache cannot be used
  std::optional<CachedObject> hit;  // set on a verified hit
  std::string outcome;              // "hit" or "miss"
  std::string note;                 // for the detail: a bad entry, an error
};

class ObjectCache {
 public:
  // `identity`: WrapperIdentity of the running optimizer, or why it could
  // not be had (then every lookup is a miss saying so, and nothing is
  // stored).
  ObjectCache(std::string dir, absl::StatusOr<std::string> identity);

  // The cache at `dir` for this process's binary (/proc/self/exe).
  static ObjectCache ForRunningBinary(const std::string& dir);

  const std::string& dir() const { return dir_; }

  // `input.wrapper_identity` is filled in from this cache's identity.
  ObjectCacheLookup Lookup(ObjectCacheKeyInput input) const;

  // After a miss with a key: writes the entry. "" when stored, else a note
  // saying why not (for the detail).
  std::string Store(const ObjectCacheLookup& miss,
                    const CachedObject& computed) const;

  std::string EntryPath(const std::string& key) const;

 private:
  std::string dir_;
  absl::StatusOr<std::string> identity_;
};

// The entry file's bytes and their reading, for tests: Parse checks the
// header, the key, the length, the hash and the ELF magic, and says what
// was wrong.
std::string SerializeEntry(const std::string& key, const CachedObject& entry);
absl::StatusOr<CachedObject> ParseEntry(const std::string& key,
                                        const std::string& bytes);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_OBJECT_CACHE_H_
