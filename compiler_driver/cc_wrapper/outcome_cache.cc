#include "compiler_driver/cc_wrapper/outcome_cache.h"

#include <sys/stat.h>
#include <utime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/files/atomic_file.h"
#include "common/files/user_dirs.h"
#include "compiler_driver/cc_wrapper/cache_fields.h"
#include "compiler_driver/cc_wrapper/spool_space.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/passes/pipeline_check.h"

namespace phaseloop::cc_wrapper {

std::string OutcomeCacheDirFromEnv() {
  if (const char* dir = std::getenv(kOutcomeCacheEnv); dir != nullptr) {
    const std::string value = dir;
    if (value.empty() || value == "off" || value == "0" || value == "none") {
      return "";
    }
    return value;
  }
  const std::string dir = files::UserCacheDir("outcomes");
  return dir.empty() ? files::PerUserTmpDir("phaseloop-outcomes") : dir;
}

int64_t OutcomeCacheMaxBytesFromEnv(std::string* warning) {
  const char* size = std::getenv(kOutcomeCacheMaxSizeEnv);
  if (size == nullptr || *size == '\0') return kDefaultOutcomeCacheMaxBytes;
  int64_t max_bytes = 0;
  if (ParseSize(size, &max_bytes) && max_bytes > 0) return max_bytes;
  if (warning != nullptr) {
    *warning = absl::StrCat(kOutcomeCacheMaxSizeEnv, "='", size,
                            "' is not a size > 0 (e.g. 16Mi, 500k, 1048576): "
                            "the default 16Mi applies");
  }
  return kDefaultOutcomeCacheMaxBytes;
}
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[] = "phaseloop-outcome";

// An entry's name in its subdirectory: its key, beginning with the
// subdirectory's name.
bool IsEntryName(const std::string& subdir, const std::string& name) {
  return subdir.size() == 2 && IsCacheKey(name) &&
         name.compare(0, 2, subdir) == 0;
}

// What a store leaves in a subdirectory: entries, and atomic writes of
// entries under way (files::TempPathFor: ".tmp-<key>.<pid>.<n>").
bool IsCacheFile(const std::string& subdir, const std::string& name) {
  if (IsEntryName(subdir, name)) return true;
  const std::string prefix = files::kTempFilePrefix;
  return name.compare(0, prefix.size(), prefix) == 0 &&
         name.size() > prefix.size() + 32 &&
         IsEntryName(subdir, name.substr(prefix.size(), 32)) &&
         name[prefix.size() + 32] == '.';
}

bool IsSubdirectoryName(const std::string& name) {
  return name.size() == 2 &&
         name.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Every file under `root` (DIR/outcomes) that is not the cache's own, up
// to `max` of them.
std::vector<std::string> ForeignFiles(const fs::path& root, size_t max) {
  std::vector<std::string> foreign;
  std::error_code ec;
  for (const fs::directory_entry& sub : fs::directory_iterator(root, ec)) {
    const std::string sub_name = sub.path().filename().string();
    if (!IsSubdirectoryName(sub_name) || !sub.is_directory(ec) ||
        sub.is_symlink(ec)) {
      foreign.push_back(sub.path().string());
    } else {
      for (const fs::directory_entry& e : fs::directory_iterator(sub, ec)) {
        if (!e.is_regular_file(ec) || e.is_symlink(ec) ||
            !IsCacheFile(sub_name, e.path().filename().string())) {
          foreign.push_back(e.path().string());
        }
        if (foreign.size() >= max) break;
      }
    }
    if (foreign.size() >= max) break;
  }
  return foreign;
}

// Removes the least recently used entries of `subdir` beyond `budget`
// bytes, never `keep` (the entry just stored: a budget below one entry
// evicted every entry as it was written).
void TrimSubdirectory(const fs::path& subdir, int64_t budget,
                      const fs::path& keep) {
  std::error_code ec;
  struct Entry {
    fs::file_time_type time;
    int64_t size;
    fs::path path;
  };
  std::vector<Entry> entries;
  int64_t total = 0;
  const std::string subdir_name = subdir.filename().string();
  for (const fs::directory_entry& e : fs::directory_iterator(subdir, ec)) {
    // Another compile's write under way is not an entry to trim.
    if (!e.is_regular_file(ec) ||
        !IsEntryName(subdir_name, e.path().filename().string())) {
      continue;
    }
    const int64_t size = static_cast<int64_t>(e.file_size(ec));
    entries.push_back({e.last_write_time(ec), size, e.path()});
    total += size;
  }
  if (total <= budget) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.time != b.time ? a.time < b.time : a.path < b.path;
  });
  for (const Entry& e : entries) {
    if (total <= budget) break;
    if (e.path == keep) continue;
    if (fs::remove(e.path, ec)) total -= e.size;
  }
}

}  // namespace

std::string SerializeOutcome(const std::string& key,
                             const PolicyDecision& decision) {
  std::string text = absl::StrCat(kMagic, " ", kOutcomeCacheFormat, "\n");
  AppendField(&text, "key", key);
  AppendField(&text, "pipeline", decision.pipeline);
  AppendField(&text, "note", decision.note);
  AppendField(&text, "oz_alloc_size", absl::StrCat(decision.oz_alloc_size));
  AppendField(&text, "measured",
              absl::StrCat(decision.measured_pipelines.size()));
  for (const auto& [pipeline, value] : decision.measured_pipelines) {
    AppendField(&text, "value", absl::StrCat(value));
    AppendField(&text, "pipeline", pipeline);
  }
  return text;
}

absl::StatusOr<PolicyDecision> ParseOutcome(const std::string& key,
                                            const std::string& bytes) {
  const std::string header =
      absl::StrCat(kMagic, " ", kOutcomeCacheFormat, "\n");
  if (bytes.compare(0, header.size(), header) != 0) {
    return absl::DataLossError("not an outcome entry of this format");
  }
  size_t pos = header.size();
  absl::StatusOr<std::string> stored_key = ReadField(bytes, &pos, "key");
  if (!stored_key.ok()) return stored_key.status();
  if (*stored_key != key) return absl::DataLossError("holds another key");
  PolicyDecision decision;
  absl::StatusOr<std::string> pipeline = ReadField(bytes, &pos, "pipeline");
  if (!pipeline.ok()) return pipeline.status();
  if (pipeline->empty()) return absl::DataLossError("empty pipeline");
  decision.pipeline = *std::move(pipeline);
  absl::StatusOr<std::string> note = ReadField(bytes, &pos, "note");
  if (!note.ok()) return note.status();
  decision.note = *std::move(note);
  absl::StatusOr<int64_t> oz = ReadNumberField(bytes, &pos, "oz_alloc_size");
  if (!oz.ok()) return oz.status();
  decision.oz_alloc_size = *oz;
  absl::StatusOr<int64_t> measured = ReadNumberField(bytes, &pos, "measured");
  if (!measured.ok()) return measured.status();
  if (*measured < 0 || *measured > 1000) {
    return absl::DataLossError("implausible measured count");
  }
  for (int64_t i = 0; i < *measured; ++i) {
    absl::StatusOr<int64_t> value = ReadNumberField(bytes, &pos, "value");
    if (!value.ok()) return value.status();
    absl::StatusOr<std::string> p = ReadField(bytes, &pos, "pipeline");
    if (!p.ok()) return p.status();
    decision.measured_pipelines.emplace_back(*std::move(p), *value);
  }
  if (pos != bytes.size()) return absl::DataLossError("trailing bytes");
  // An entry says what topk measured; one that contradicts itself was
  // changed after it was written (a damaged disk, a bundle edited on its
  // way) and would run a pipeline nothing measured (review: an entry edited
  // to default<O3> at -Oz was a hit).
  if (decision.measured_pipelines.empty()) {
    if (decision.pipeline != "default<Oz>") {
      return absl::DataLossError(
          "keeps a pipeline other than -Oz with nothing measured");
    }
    return decision;
  }
  const auto& [first, oz_value] = decision.measured_pipelines.front();
  if (first != "default<Oz>" ||
      (decision.oz_alloc_size >= 0 && decision.oz_alloc_size != oz_value)) {
    return absl::DataLossError("its first measurement is not -Oz's");
  }
  // (Not necessarily the smallest listed: a candidate measured from -Oz's
  // IR that led is measured again whole, and a failed or larger whole run
  // leaves the earlier choice standing.)
  for (const auto& [pipeline, value] : decision.measured_pipelines) {
    if (pipeline == decision.pipeline) {
      if (value > oz_value) {
        return absl::DataLossError("keeps a pipeline larger than -Oz's");
      }
      return decision;
    }
  }
  return absl::DataLossError("keeps a pipeline it never measured");
}

OutcomeCache::OutcomeCache(std::string dir,
                           absl::StatusOr<std::string> identity,
                           int64_t max_bytes)
    : dir_(std::move(dir)),
      identity_(std::move(identity)),
      max_bytes_(max_bytes) {}

OutcomeCache OutcomeCache::ForRunningBinary(const std::string& dir,
                                            int64_t max_bytes) {
  // (The identity memo is a file in `dir`: none for a relative one, which
  // Lookup refuses.)
  if (IsRelativeCacheDir(dir)) {
    return OutcomeCache(dir, absl::FailedPreconditionError("relative path"),
                        max_bytes);
  }
  return OutcomeCache(dir, WrapperIdentity("/proc/self/exe", dir + "/identity"),
                      max_bytes);
}

std::string OutcomeCache::EntryPath(const std::string& key) const {
  return absl::StrCat(dir_, "/outcomes/", key.substr(0, 2), "/", key);
}

OutcomeLookup OutcomeCache::Lookup(const std::string& module_hash,
                                   const std::string& opt_level,
                                   const codegen::CodegenSettings& codegen,
                                   const std::string& policy_spec) const {
  OutcomeLookup lookup;
  lookup.outcome = "miss";
  // Each compile would resolve a relative directory against its own working
  // directory: cache folders appeared inside the source tree, and a
  // checkout missed where it should have hit (review). Unused, and said.
  if (IsRelativeCacheDir(dir_)) {
    lookup.note = absl::StrCat(
        "outcome cache unused: '", dir_,
        "' is a relative path, which each compile would resolve against its "
        "own working directory: give ",
        kOutcomeCacheEnv, " an absolute path");
    return lookup;
  }
  if (!identity_.ok()) {
    lookup.note = absl::StrCat("outcome cache unusable: wrapper identity: ",
                               identity_.status().message());
    return lookup;
  }
  // The object cache's key of everything that decides an object, with the
  // policy and its options where the pipeline goes: the policy's choice is
  // decided by the same inputs. Its own directory, so no key is shared.
  lookup.key = ObjectCacheKey(
      {*identity_, module_hash, opt_level,
       absl::StrCat("outcome-format ", kOutcomeCacheFormat, " ", policy_spec),
       codegen, false});
  const std::string path = EntryPath(lookup.key);
  std::string bytes;
  absl::Status read = files::ReadWholeFile(path, &bytes);
  if (absl::IsNotFound(read)) return lookup;
  if (!read.ok()) {
    lookup.note = absl::StrCat("outcome cache: ", read.message());
    return lookup;
  }
  absl::StatusOr<PolicyDecision> entry = ParseOutcome(lookup.key, bytes);
  if (entry.ok()) {
    // An entry may have come from another machine (outcome_bundle.h): it
    // runs only a pipeline a policy may run.
    absl::Status allowed = passes::CheckWholePolicyPipeline(entry->pipeline);
    if (!allowed.ok()) entry = allowed;
  }
  if (!entry.ok()) {
    lookup.note = absl::StrCat("outcome cache: bad entry ", path, " (",
                               entry.status().message(), "): measured again");
    return lookup;
  }
  utime(path.c_str(), nullptr);  // recently used: trimmed last
  lookup.outcome = "hit";
  lookup.hit = *std::move(entry);
  return lookup;
}

std::string OutcomeCache::Store(const OutcomeLookup& miss,
                                const PolicyDecision& computed) const {
  if (miss.key.empty()) return "";
  const std::string path = EntryPath(miss.key);
  const std::string subdir = path.substr(0, path.rfind('/'));
  absl::Status stored = files::MakeDirectories(subdir);
  if (stored.ok()) {
    stored =
        files::WriteFileAtomically(path, SerializeOutcome(miss.key, computed));
  }
  if (!stored.ok()) {
    return absl::StrCat("outcome cache: not stored: ", stored.message());
  }
  TrimSubdirectory(subdir, std::max<int64_t>(1, max_bytes_ / 256), path);
  return "";
}

absl::StatusOr<OutcomeCacheStats> ReadOutcomeCacheStats(
    const std::string& dir) {
  OutcomeCacheStats stats;
  std::error_code ec;
  const fs::path root = fs::path(dir) / "outcomes";
  if (!fs::exists(root, ec)) return stats;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec) ||
        !IsEntryName(it->path().parent_path().filename().string(),
                     it->path().filename().string())) {
      continue;  // a write under way, or not the cache's
    }
    ++stats.entries;
    stats.bytes += static_cast<int64_t>(it->file_size(ec));
  }
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot read ", root.string(), ": ", ec.message()));
  }
  return stats;
}

absl::Status ClearOutcomeCache(const std::string& dir) {
  const fs::path root = fs::path(dir) / "outcomes";
  std::error_code ec;
  if (!fs::exists(root, ec)) return absl::OkStatus();
  // A --dir naming the wrong directory lost whatever its outcomes/ held.
  if (std::vector<std::string> foreign = ForeignFiles(root, 3);
      !foreign.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        root.string(), " holds files that are not outcome-cache entries (",
        absl::StrJoin(foreign, ", "),
        "): nothing cleared; give --dir the outcome cache's own directory"));
  }
  // Entry by entry: compiles storing meanwhile keep their subdirectories.
  // A write left by a crashed compile goes once it is 10 minutes old.
  const fs::file_time_type stale =
      fs::file_time_type::clock::now() - std::chrono::minutes(10);
  for (const fs::directory_entry& sub : fs::directory_iterator(root, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(sub, ec)) {
      std::error_code time_error;
      if (IsEntryName(sub.path().filename().string(),
                      e.path().filename().string()) ||
          e.last_write_time(time_error) < stale) {
        std::error_code removed;
        fs::remove(e.path(), removed);
        if (removed && removed != std::errc::no_such_file_or_directory) {
          return absl::InternalError(absl::StrCat(
              "cannot remove ", e.path().string(), ": ", removed.message()));
        }
      }
    }
    std::error_code not_empty;  // a store under way: left for it
    fs::remove(sub.path(), not_empty);
  }
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot clear ", root.string(), ": ", ec.message()));
  }
  return absl::OkStatus();
}

PolicyDecision OutcomeCachingPolicy::DecideWithNote(
    const PolicyInput& input) const {
  const std::string spec = inner_.OutcomeSpec();
  if (spec.empty() || input.module_hash.empty()) {
    return inner_.DecideWithNote(input);
  }
  // The module's hash without source_filename's directory: checkouts at
  // other paths (CMake compiles by absolute path) share their choices.
  // Without a directory it is module_hash itself (FrontendModuleHash: the
  // same bitcode, use lists included), not hashed a second time.
  const std::string module_key =
      input.module != nullptr &&
              input.module->getSourceFileName().find('/') != std::string::npos
          ? ir::ModuleStateHashIgnoringSourceDirectory(*input.module)
          : input.module_hash;
  OutcomeLookup lookup =
      cache_.Lookup(module_key, input.opt_level, codegen_, spec);
  // An entry consistent in itself may still keep a pipeline this policy
  // never chooses (an entry edited together with its measurements, or
  // moved from another policy's key): the policy's choice, not the entry,
  // says what may run (review: such an entry was a hit).
  if (lookup.hit && !inner_.MayChoose(lookup.hit->pipeline)) {
    lookup.note =
        absl::StrCat("outcome cache: bad entry ", cache_.EntryPath(lookup.key),
                     " (keeps a pipeline the policy never "
                     "chooses): measured again");
    lookup.hit.reset();
    lookup.outcome = "miss";
  }
  if (lookup.hit) {
    PolicyDecision decision = *std::move(lookup.hit);
    decision.note = absl::StrCat(decision.note, "; outcome cache hit");
    // Measured once, shipped once: a hit's record carries no measurements.
    decision.measured_pipelines.clear();
    decision.outcome_cache = "hit";
    return decision;
  }
  PolicyDecision decision = inner_.DecideWithNote(input);
  // Only what topk measured is worth keeping (not a baseline fallback).
  if (decision.not_applied.empty() && !decision.measured_pipelines.empty()) {
    decision.outcome_cache = "miss";
    if (!lookup.note.empty())
      absl::StrAppend(&decision.note, "; ", lookup.note);
    pending_.emplace(std::move(lookup), decision);
  }
  return decision;
}

std::string OutcomeCachingPolicy::StorePending() const {
  if (!pending_) return "";
  const std::string note = cache_.Store(pending_->first, pending_->second);
  pending_.reset();
  return note;
}

}  // namespace phaseloop::cc_wrapper
