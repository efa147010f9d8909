// The directory-backed PolicyStore (OpenPolicyStore in policy_store.h).
//
// Durability order: an artifact file is written (temp + fsync + rename)
// before the index that names it, and the index is replaced whole. A kill
// between the two leaves an unindexed artifact file, which the next push of
// that artifact simply rewrites; stale temp files are removed on open.
#include "offline_rl/policy_store/directory_policy_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files/atomic_file.h"
#include "common/signing/signature.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "offline_rl/policy_store/policy_store.h"
#include "offline_rl/policy_store/store_index.h"

namespace phaseloop::policy_store {
namespace {

namespace fs = std::filesystem;
using internal::IsPolicyVersion;
using internal::StoreIndex;

constexpr char kIndexFile[] = "index.json";
constexpr char kArtifactsDir[] = "artifacts";

bool IsHex(absl::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

StoredPolicy Summarise(const v1::PolicyArtifact& artifact,
                       const std::string& version, int64_t size_bytes,
                       absl::string_view note, int64_t now_ms) {
  StoredPolicy policy;
  policy.policy_version = version;
  policy.objective = artifact.objective();
  policy.formulation = artifact.formulation();
  policy.algorithm = artifact.metadata().algorithm();
  for (const auto& [name, value] : artifact.metadata().metrics()) {
    policy.metrics[name] = value;
  }
  policy.parent_version = artifact.metadata().parent_version();
  policy.note = std::string(note);
  policy.pushed_unix_ms = now_ms;
  policy.size_bytes = size_bytes;
  return policy;
}

// Points `channel` at `version` in `index`, keeping the old pointer in its
// history (unless it already pointed there).
ChannelChange PointChannel(StoreIndex& index, absl::string_view channel,
                           const std::string& version, int64_t now_ms) {
  ChannelState& state = index.channels[std::string(channel)];
  state.name = std::string(channel);
  ChannelChange change{state.name, state.policy_version, version};
  if (state.policy_version == version) return change;
  if (!state.policy_version.empty()) {
    state.previous_versions.insert(state.previous_versions.begin(),
                                   state.policy_version);
    if (state.previous_versions.size() > kMaxChannelHistory) {
      state.previous_versions.resize(kMaxChannelHistory);
    }
  }
  state.policy_version = version;
  state.updated_unix_ms = now_ms;
  return change;
}

class DirectoryPolicyStore final : public PolicyStore {
 public:
  DirectoryPolicyStore(std::string dir, int lock_fd, StoreIndex index,
                       StoreOptions options)
      : dir_(std::move(dir)),
        lock_fd_(lock_fd),
        options_(std::move(options)),
        index_(std::move(index)) {}
  ~DirectoryPolicyStore() override { close(lock_fd_); }

  using PolicyStore::Push;
  absl::StatusOr<PushResult> Push(absl::string_view artifact_file,
                                  absl::string_view signature,
                                  absl::string_view channel,
                                  absl::string_view note) override;
  absl::StatusOr<PolicyListing> List() override;
  absl::StatusOr<FetchedPolicy> GetVersion(
      absl::string_view policy_version) override;
  absl::StatusOr<FetchedPolicy> GetChannel(absl::string_view channel) override;
  using PolicyStore::Promote;
  absl::StatusOr<ChannelChange> Promote(absl::string_view policy_version,
                                        absl::string_view channel,
                                        bool force) override;
  absl::StatusOr<ChannelChange> Rollback(absl::string_view channel) override;
  absl::StatusOr<VersionMark> MarkVersion(absl::string_view policy_version,
                                          absl::string_view verdict,
                                          absl::string_view reason) override;

 private:
  std::string ArtifactPath(const std::string& version) const {
    return absl::StrCat(dir_, "/", kArtifactsDir, "/", version,
                        policy_runtime::kPolicyFileExtension);
  }
  std::string SignaturePath(const std::string& version) const {
    return signing::SignaturePathFor(ArtifactPath(version));
  }
  // OK when `signature` over `artifact_file` is acceptable here: by a
  // trusted key when the store has a trust file, well-formed (or absent)
  // otherwise.
  absl::Status CheckSignature(absl::string_view artifact_file,
                              absl::string_view signature,
                              absl::string_view name) const;
  const StoredPolicy* FindLocked(const std::string& version) const;
  // FailedPrecondition when `version` is marked failed and `channel` is
  // stable (without force).
  absl::Status CheckVerdictLocked(const std::string& version,
                                  absl::string_view channel, bool force) const;
  absl::StatusOr<std::string> ResolveLocked(absl::string_view text) const;
  absl::StatusOr<FetchedPolicy> ReadVerified(const std::string& version) const;
  // Writes `next` as the index and makes it current.
  absl::Status CommitLocked(StoreIndex next);

  const std::string dir_;
  const int lock_fd_;
  const StoreOptions options_;
  std::mutex mu_;
  StoreIndex index_;  // guarded by mu_
};

const StoredPolicy* DirectoryPolicyStore::FindLocked(
    const std::string& version) const {
  for (const StoredPolicy& policy : index_.policies) {
    if (policy.policy_version == version) return &policy;
  }
  return nullptr;
}

absl::Status DirectoryPolicyStore::CheckVerdictLocked(
    const std::string& version, absl::string_view channel, bool force) const {
  const StoredPolicy* policy = FindLocked(version);
  if (force || channel != kStableChannel || policy == nullptr ||
      policy->verdict.verdict != kVerdictFailed) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "policy version ", version, " was marked failed (",
      policy->verdict.reason,
      ") and is not promoted to stable; promote it anyway with `phaseloop "
      "policy promote ",
      version,
      " --channel stable --force`, or withdraw the mark with "
      "`phaseloop policy mark ",
      version, " --verdict cleared --reason TEXT`"));
}

absl::StatusOr<std::string> DirectoryPolicyStore::ResolveLocked(
    absl::string_view text) const {
  if (text.size() < 6 || text.size() > 32 || !IsHex(text)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text,
        "' is not a policy version: give its 32 lowercase hex "
        "digits (or a unique prefix of at least 6), as `phaseloop policy "
        "list` shows"));
  }
  std::vector<std::string> matches;
  for (const StoredPolicy& policy : index_.policies) {
    if (absl::StartsWith(policy.policy_version, text)) {
      matches.push_back(policy.policy_version);
    }
  }
  if (matches.empty()) {
    return absl::NotFoundError(
        absl::StrCat("policy version ", text,
                     " is not in the store (see `phaseloop "
                     "policy list`)"));
  }
  if (matches.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "policy version prefix ", text, " matches ", matches.size(),
        " versions (", matches[0], ", ", matches[1],
        ", ...): give more "
        "digits"));
  }
  return matches[0];
}

absl::StatusOr<FetchedPolicy> DirectoryPolicyStore::ReadVerified(
    const std::string& version) const {
  const std::string path = ArtifactPath(version);
  FetchedPolicy fetched;
  absl::Status read = files::ReadWholeFile(path, &fetched.artifact_file);
  if (!read.ok()) {
    return absl::DataLossError(absl::StrCat(
        "stored artifact of version ", version,
        " is unreadable: ", read.message(), "; push that artifact again"));
  }
  absl::StatusOr<v1::PolicyArtifact> parsed =
      policy_runtime::ParsePolicyArtifactFile(fetched.artifact_file, path);
  if (!parsed.ok()) {
    return absl::DataLossError(absl::StrCat(
        "stored artifact of version ", version, " no longer verifies: ",
        parsed.status().message(), "; push that artifact again"));
  }
  fetched.policy_version = policy_runtime::PolicyVersionOf(*parsed);
  if (fetched.policy_version != version) {
    return absl::DataLossError(
        absl::StrCat(path, " holds version ", fetched.policy_version, ", not ",
                     version, "; push the artifact of ", version, " again"));
  }
  absl::Status signature_read =
      files::ReadWholeFile(SignaturePath(version), &fetched.signature);
  if (!signature_read.ok() && !absl::IsNotFound(signature_read)) {
    return absl::DataLossError(
        absl::StrCat("the stored signature of version ", version,
                     " is unreadable: ", signature_read.message()));
  }
  absl::Status trusted =
      CheckSignature(fetched.artifact_file, fetched.signature,
                     absl::StrCat("stored policy version ", version));
  if (!trusted.ok()) return trusted;
  return fetched;
}

absl::Status DirectoryPolicyStore::CheckSignature(
    absl::string_view artifact_file, absl::string_view signature,
    absl::string_view name) const {
  if (options_.trust != nullptr) {
    return signing::VerifyArtifact(artifact_file, signature, *options_.trust,
                                   name)
        .status();
  }
  if (signature.empty()) return absl::OkStatus();
  return signing::SignatureKeyId(signature, name).status();
}

absl::Status DirectoryPolicyStore::CommitLocked(StoreIndex next) {
  absl::Status written = files::WriteFileAtomically(
      absl::StrCat(dir_, "/", kIndexFile), internal::StoreIndexToJson(next));
  if (!written.ok()) return written;
  index_ = std::move(next);
  return absl::OkStatus();
}

absl::StatusOr<PushResult> DirectoryPolicyStore::Push(
    absl::string_view artifact_file, absl::string_view signature,
    absl::string_view channel, absl::string_view note) {
  if (static_cast<int64_t>(artifact_file.size()) > kMaxArtifactBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refused the pushed artifact: ", artifact_file.size(),
        " bytes is more than the store's limit of ", kMaxArtifactBytes));
  }
  if (!channel.empty()) {
    absl::Status known = CheckChannelName(channel);
    if (!known.ok()) return known;
  }
  absl::StatusOr<v1::PolicyArtifact> artifact =
      policy_runtime::ParsePolicyArtifactFile(artifact_file,
                                              "the pushed artifact");
  if (!artifact.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refused the pushed artifact: ", artifact.status().message()));
  }
  const std::string version = policy_runtime::PolicyVersionOf(*artifact);
  // The canonical bytes: what every reader of this version gets.
  const std::string canonical =
      policy_runtime::SerializePolicyArtifactFile(*artifact);
  // Checked before anything is written: a refused push leaves no trace.
  absl::Status trusted =
      CheckSignature(artifact_file, signature, "the pushed artifact");
  if (!trusted.ok()) return trusted;
  if (!signature.empty() && canonical != artifact_file) {
    // A signature covers the bytes it signed; readers get the canonical
    // ones, which it would not verify.
    return absl::InvalidArgumentError(
        "refused the pushed artifact: it is signed but not in its canonical "
        "form (as phaseloop writes it), so its signature would not hold for "
        "the stored copy; sign the file `phaseloop train` or `phaseloop "
        "policy pull` wrote");
  }
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());

  std::lock_guard<std::mutex> lock(mu_);
  PushResult result{version, FindLocked(version) != nullptr};
  if (!channel.empty()) {
    absl::Status allowed = CheckVerdictLocked(version, channel, false);
    if (!allowed.ok()) return allowed;
  }
  // Without a trust file only a signature's form can be checked: one that
  // replaced the stored signature could be anybody's, and every trusting
  // pull of the version would fail. The first one stays.
  if (!signature.empty() && options_.trust == nullptr &&
      result.already_stored) {
    std::string stored;
    if (files::ReadWholeFile(SignaturePath(version), &stored).ok() &&
        stored != signature) {
      return absl::FailedPreconditionError(absl::StrCat(
          "refused the pushed signature: version ", version,
          " already has a signature, and this store has no trust file to "
          "check a replacement against; serve the store with --trust-file "
          "to re-sign versions (a rotated key)"));
    }
  }
  if (!result.already_stored || !ReadVerified(version).ok()) {
    absl::Status written =
        files::WriteFileAtomically(ArtifactPath(version), canonical);
    if (!written.ok()) return written;
  }
  // The signature before the index: a version is never listed with a
  // signature still missing. A new signature the trust file accepts
  // replaces the old one (re-signing with a rotated key); no signature
  // keeps what is stored.
  if (!signature.empty()) {
    absl::Status written =
        files::WriteFileAtomically(SignaturePath(version), signature);
    if (!written.ok()) return written;
  }
  StoreIndex next = index_;
  if (!result.already_stored) {
    next.policies.push_back(Summarise(*artifact, version,
                                      static_cast<int64_t>(canonical.size()),
                                      note, now_ms));
  }
  bool changed = !result.already_stored;
  if (!channel.empty()) {
    changed |= PointChannel(next, channel, version, now_ms).previous_version !=
               version;
  }
  if (changed) {
    absl::Status committed = CommitLocked(std::move(next));
    if (!committed.ok()) return committed;
  }
  return result;
}

absl::StatusOr<PolicyListing> DirectoryPolicyStore::List() {
  std::lock_guard<std::mutex> lock(mu_);
  PolicyListing listing;
  listing.policies = index_.policies;
  for (const char* name : kPolicyChannels) {
    ChannelState state;
    auto it = index_.channels.find(name);
    if (it != index_.channels.end()) state = it->second;
    state.name = name;
    for (StoredPolicy& policy : listing.policies) {
      if (policy.policy_version == state.policy_version) {
        policy.channels.push_back(name);
      }
    }
    listing.channels.push_back(std::move(state));
  }
  // Who signed each version: the key id its stored .sig names (the store
  // checked the signature when it was pushed; a .sig that cannot be read
  // now is listed as such rather than hidden).
  for (StoredPolicy& policy : listing.policies) {
    std::string signature;
    absl::Status read =
        files::ReadWholeFile(SignaturePath(policy.policy_version), &signature);
    if (absl::IsNotFound(read)) continue;
    absl::StatusOr<std::string> key_id =
        read.ok() ? signing::SignatureKeyId(signature, policy.policy_version)
                  : absl::StatusOr<std::string>(read);
    policy.signed_by = key_id.ok() ? *key_id : "unreadable";
  }
  return listing;
}

absl::StatusOr<FetchedPolicy> DirectoryPolicyStore::GetVersion(
    absl::string_view policy_version) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<std::string> version = ResolveLocked(policy_version);
  if (!version.ok()) return version.status();
  return ReadVerified(*version);
}

absl::StatusOr<FetchedPolicy> DirectoryPolicyStore::GetChannel(
    absl::string_view channel) {
  absl::Status known = CheckChannelName(channel);
  if (!known.ok()) return known;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.channels.find(std::string(channel));
  if (it == index_.channels.end() || it->second.policy_version.empty()) {
    return absl::NotFoundError(
        absl::StrCat("channel ", channel,
                     " points at no version yet: promote one with "
                     "`phaseloop policy promote VERSION --channel ",
                     channel, "`"));
  }
  return ReadVerified(it->second.policy_version);
}

absl::StatusOr<ChannelChange> DirectoryPolicyStore::Promote(
    absl::string_view policy_version, absl::string_view channel, bool force) {
  absl::Status known = CheckChannelName(channel);
  if (!known.ok()) return known;
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<std::string> version = ResolveLocked(policy_version);
  if (!version.ok()) return version.status();
  absl::Status allowed = CheckVerdictLocked(*version, channel, force);
  if (!allowed.ok()) return allowed;
  StoreIndex next = index_;
  ChannelChange change =
      PointChannel(next, channel, *version, absl::ToUnixMillis(absl::Now()));
  if (change.previous_version != change.policy_version) {
    absl::Status committed = CommitLocked(std::move(next));
    if (!committed.ok()) return committed;
  }
  return change;
}

absl::StatusOr<ChannelChange> DirectoryPolicyStore::Rollback(
    absl::string_view channel) {
  absl::Status known = CheckChannelName(channel);
  if (!known.ok()) return known;
  std::lock_guard<std::mutex> lock(mu_);
  StoreIndex next = index_;
  ChannelState& state = next.channels[std::string(channel)];
  if (state.previous_versions.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "channel ", channel, " has no earlier version to roll back to (it ",
        state.policy_version.empty()
            ? std::string("points at nothing yet")
            : absl::StrCat("points at ", state.policy_version,
                           "; no version it pointed at before is left to go "
                           "back to"),
        "); promote the version you want with `phaseloop policy promote "
        "VERSION --channel ",
        channel, "`"));
  }
  // A version marked failed does not come back to stable this way either:
  // promote() refuses it without --force, and so does a rollback.
  if (absl::Status allowed = CheckVerdictLocked(state.previous_versions.front(),
                                                channel, /*force=*/false);
      !allowed.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rolling channel ", channel, " back would point it at a version that ",
        "was marked failed: ", allowed.message()));
  }
  ChannelChange change{std::string(channel), state.policy_version,
                       state.previous_versions.front()};
  state.policy_version = state.previous_versions.front();
  state.previous_versions.erase(state.previous_versions.begin());
  state.updated_unix_ms = absl::ToUnixMillis(absl::Now());
  absl::Status committed = CommitLocked(std::move(next));
  if (!committed.ok()) return committed;
  return change;
}

absl::StatusOr<VersionMark> DirectoryPolicyStore::MarkVersion(
    absl::string_view policy_version, absl::string_view verdict,
    absl::string_view reason) {
  absl::Status known = CheckVerdictName(verdict);
  if (!known.ok()) return known;
  if (reason.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("marking a version ", verdict,
                     " needs a reason (--reason TEXT): say why, e.g. the "
                     "canary's judgement"));
  }
  if (reason.size() > kMaxVerdictReasonBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the reason is ", reason.size(),
        " bytes; the store keeps "
        "at most ",
        kMaxVerdictReasonBytes, ": shorten it (link a report instead)"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<std::string> version = ResolveLocked(policy_version);
  if (!version.ok()) return version.status();
  StoreIndex next = index_;
  VersionMark mark;
  mark.policy_version = *version;
  for (StoredPolicy& policy : next.policies) {
    if (policy.policy_version != *version) continue;
    mark.previous = policy.verdict;
    policy.verdict = VersionVerdict{std::string(verdict), std::string(reason),
                                    absl::ToUnixMillis(absl::Now())};
    mark.verdict = policy.verdict;
  }
  absl::Status committed = CommitLocked(std::move(next));
  if (!committed.ok()) return committed;
  return mark;
}

// Removes temp files a killed writer left in `dir` (we hold the lock).
void RemoveStaleTempFiles(const std::string& dir) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (absl::StartsWith(entry.path().filename().string(),
                         files::kTempFilePrefix)) {
      fs::remove(entry.path(), error);
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<PolicyStore>> OpenPolicyStore(
    const std::string& dir, const StoreOptions& options) {
  std::error_code error;
  fs::create_directories(absl::StrCat(dir, "/", kArtifactsDir), error);
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create the policy store directory ", dir, ": ",
                     error.message()));
  }
  const std::string lock_path = absl::StrCat(dir, "/.lock");
  const int lock_fd =
      open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot open ", lock_path, ": ", std::strerror(errno)));
  }
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    close(lock_fd);
    return absl::FailedPreconditionError(absl::StrCat(
        "the policy store ", dir,
        " is in use by another process (another "
        "`phaseloop policy serve`?); stop it or use another --dir"));
  }
  RemoveStaleTempFiles(dir);
  RemoveStaleTempFiles(absl::StrCat(dir, "/", kArtifactsDir));
  StoreIndex index;
  const std::string index_path = absl::StrCat(dir, "/", kIndexFile);
  std::string text;
  absl::Status read = files::ReadWholeFile(index_path, &text);
  if (read.ok()) {
    absl::StatusOr<StoreIndex> parsed =
        internal::StoreIndexFromJson(text, index_path);
    if (!parsed.ok()) {
      close(lock_fd);
      return parsed.status();
    }
    index = std::move(*parsed);
  } else if (!absl::IsNotFound(read)) {
    close(lock_fd);
    return read;
  }
  return std::unique_ptr<PolicyStore>(
      new DirectoryPolicyStore(dir, lock_fd, std::move(index), options));
}

}  // namespace phaseloop::policy_store
