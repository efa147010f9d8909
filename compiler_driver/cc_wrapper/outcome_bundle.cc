#include "compiler_driver/cc_wrapper/outcome_bundle.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/files/atomic_file.h"
#include "compiler_driver/cc_wrapper/outcome_cache.h"
#include "compiler_driver/passes/pipeline_check.h"

namespace phaseloop::cc_wrapper {
namespace {

namespace fs = std::filesystem;

bool IsKey(const std::string& key) {
  return key.size() == 32 && std::all_of(key.begin(), key.end(), [](char c) {
           return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f');
         });
}

// The entry's choice when `bytes` is a good entry for `key`, else why not.
absl::StatusOr<PolicyDecision> VerifiedEntry(const std::string& key,
                                             const std::string& bytes) {
  if (!IsKey(key)) {
    return absl::InvalidArgumentError("the key is not 32 hex digits");
  }
  absl::StatusOr<PolicyDecision> entry = ParseOutcome(key, bytes);
  if (!entry.ok()) return entry.status();
  absl::Status allowed = passes::CheckWholePolicyPipeline(entry->pipeline);
  if (!allowed.ok()) return allowed;
  return entry;
}

}  // namespace

absl::StatusOr<OutcomeExport> ExportOutcomeBundle(
    const std::string& dir, const std::string& bundle_path) {
  const fs::path root = fs::path(dir) / "outcomes";
  std::vector<std::pair<std::string, fs::path>> files;
  std::error_code ec;
  if (fs::exists(root, ec)) {
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const std::string name = it->path().filename().string();
      if (name.rfind(files::kTempFilePrefix, 0) == 0) continue;
      files.emplace_back(name, it->path());
    }
  }
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot read ", root.string(), ": ", ec.message()));
  }
  std::sort(files.begin(), files.end());
  OutcomeExport out;
  std::string bundle = kOutcomeBundleMagic;
  for (const auto& [key, path] : files) {
    std::string bytes;
    absl::Status read = files::ReadWholeFile(path.string(), &bytes);
    if (!read.ok()) {
      return absl::InternalError(
          absl::StrCat("cannot read ", path.string(), ": ", read.message()));
    }
    absl::StatusOr<PolicyDecision> entry = VerifiedEntry(key, bytes);
    if (!entry.ok()) {
      out.skipped.push_back(
          absl::StrCat(path.string(), ": ", entry.status().message()));
      continue;
    }
    absl::StrAppend(&bundle, key, " ", bytes.size(), "\n", bytes);
    ++out.entries;
  }
  if (out.entries == 0) {
    return absl::NotFoundError(absl::StrCat(
        "the outcome cache ", dir,
        " holds no entry to export: build with a topk policy first (or "
        "name the cache with --dir)"));
  }
  absl::Status written = files::WriteFileAtomically(bundle_path, bundle);
  if (!written.ok()) return written;
  return out;
}

absl::StatusOr<OutcomeImport> ImportOutcomeBundle(
    const std::string& bundle_path, const std::string& dir, int64_t max_bytes) {
  std::string bundle;
  absl::Status read = files::ReadWholeFile(bundle_path, &bundle);
  if (absl::IsNotFound(read)) {
    return absl::NotFoundError(absl::StrCat(
        "cannot read the bundle ", bundle_path,
        ": write one with `phaseloop cache export --out FILE` or fix the "
        "path"));
  }
  if (!read.ok()) return read;
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat(bundle_path, " is not an outcome bundle: ", what,
                     " (export it again with `phaseloop cache export`)"));
  };
  const std::string magic = kOutcomeBundleMagic;
  if (bundle.compare(0, magic.size(), magic) != 0) {
    return bad("it does not start with \"phaseloop-outcome-bundle 1\"");
  }
  // Every entry is read and checked before any is stored.
  struct Entry {
    std::string key;
    PolicyDecision decision;
  };
  std::vector<Entry> good;
  OutcomeImport out;
  size_t pos = magic.size();
  while (pos < bundle.size()) {
    const size_t eol = bundle.find('\n', pos);
    if (eol == std::string::npos) return bad("an entry header is cut short");
    const std::string header = bundle.substr(pos, eol - pos);
    const size_t space = header.find(' ');
    uint64_t length = 0;
    if (space == std::string::npos ||
        !absl::SimpleAtoi(header.substr(space + 1), &length)) {
      return bad(absl::StrCat("entry ", out.entries + 1,
                              " has no \"<key> <length>\" line"));
    }
    pos = eol + 1;
    if (length > bundle.size() - pos) {
      return bad(absl::StrCat("entry ", out.entries + 1, " is cut short"));
    }
    const std::string key = header.substr(0, space);
    const std::string bytes = bundle.substr(pos, length);
    pos += length;
    ++out.entries;
    absl::StatusOr<PolicyDecision> entry = VerifiedEntry(key, bytes);
    if (!entry.ok()) {
      out.refused.push_back(
          absl::StrCat(key.substr(0, 64), ": ", entry.status().message()));
      continue;
    }
    good.push_back({key, *std::move(entry)});
  }
  // Store writes and trims; the identity is not part of a stored entry.
  OutcomeCache cache(dir, std::string("import"), max_bytes);
  for (const Entry& e : good) {
    if (fs::exists(cache.EntryPath(e.key))) {
      ++out.present;
      continue;
    }
    OutcomeLookup miss;
    miss.key = e.key;
    const std::string note = cache.Store(miss, e.decision);
    if (!note.empty()) {
      return absl::InternalError(
          absl::StrCat("importing into ", dir, ": ", note));
    }
    ++out.imported;
  }
  return out;
}

}  // namespace phaseloop::cc_wrapper
