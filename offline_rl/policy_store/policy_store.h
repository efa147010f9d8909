#ifndef PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_STORE_H_
#define PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_STORE_H_

// The policy store role: policy artifacts (compiler_driver/policy_runtime/
// policy_artifact.h) kept by policy_version, and channels ("stable",
// "candidate") that each point at one version and remember the versions
// they pointed at before, so a bad release can be rolled back.
//
// Every artifact is parsed and verified (magic, format version, length,
// checksum, structure) before it is stored; pushing the same artifact again
// is a no-op. Changes are all-or-nothing and durable: a process killed at
// any point leaves the store as it was before or after the change.
//
// A version may carry a detached signature (common/signing/signature.h:
// the .sig text that travels with the artifact file). A store opened with a
// trust file refuses, with PermissionDenied naming the artifact, the key
// and the fix, a push whose artifact is unsigned or not signed by a trusted
// key, and the same on every read (pull): a key removed from its trust file
// stops what it signed from leaving the store. Pushing an artifact stored
// before with a new valid signature replaces its signature (re-signing
// during key rotation).
//
// Every version may carry a verdict: a canary that failed marks its
// candidate "failed" (with the reason), and such a version is refused for
// the stable channel unless the promotion is forced; "cleared" withdraws a
// failed mark and keeps the reason it was cleared. The latest mark wins.
//
// Errors (absl codes; policy_store_service maps them to gRPC at the edge):
// InvalidArgument for a bad artifact or signature or a malformed name,
// PermissionDenied for an artifact the trust file does not accept, NotFound for
// an unknown version or channel or a channel that points at nothing,
// FailedPrecondition for a rollback with no earlier version, a version
// marked failed promoted to stable without force, or a directory in use by
// another store, DataLoss when a stored file no longer verifies.
// Implementations are thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phaseloop::policy_store {

inline constexpr char kStableChannel[] = "stable";
inline constexpr char kCandidateChannel[] = "candidate";
// Every channel of a store, in display order.
inline constexpr const char* kPolicyChannels[] = {kStableChannel,
                                                  kCandidateChannel};
// Verdicts of MarkVersion.
inline constexpr char kVerdictFailed[] = "failed";
inline constexpr char kVerdictCleared[] = "cleared";
// Longest verdict reason the store keeps, in bytes.
inline constexpr int kMaxVerdictReasonBytes = 4096;
// Largest artifact file the store accepts (also the gRPC message limit).
inline constexpr int64_t kMaxArtifactBytes = 64 << 20;
// A channel remembers at most this many earlier versions.
inline constexpr int kMaxChannelHistory = 100;

// The latest verdict recorded on a version; verdict "" = none yet.
struct VersionVerdict {
  std::string verdict;  // "", kVerdictFailed or kVerdictCleared
  std::string reason;
  int64_t marked_unix_ms = 0;
};

// One stored version, summarised from its artifact.
struct StoredPolicy {
  std::string policy_version;
  std::string objective;
  std::string formulation;
  std::string algorithm;
  std::map<std::string, double> metrics;
  std::string parent_version;
  std::string note;  // from its first push
  int64_t pushed_unix_ms = 0;
  int64_t size_bytes = 0;
  std::vector<std::string> channels;  // channels pointing at it now
  VersionVerdict verdict;
  // The key id of the signature stored with it (signing::SignatureKeyId;
  // `policy list` shows it, so a rotation shows which versions still carry
  // the old key); "" when stored unsigned.
  std::string signed_by;
};

struct ChannelState {
  std::string name;
  std::string policy_version;  // "" while it points at nothing
  int64_t updated_unix_ms = 0;
  std::vector<std::string> previous_versions;  // newest first
};

struct PolicyListing {
  std::vector<StoredPolicy> policies;  // oldest push first
  std::vector<ChannelState> channels;  // every channel, kPolicyChannels order
};

struct PushResult {
  std::string policy_version;
  bool already_stored = false;
};

struct FetchedPolicy {
  std::string artifact_file;  // whole file bytes, verified
  std::string policy_version;
  std::string signature;  // its .sig text; "" when stored unsigned
};

struct VersionMark {
  std::string policy_version;  // the full version marked
  VersionVerdict verdict;      // as now recorded
  VersionVerdict previous;     // the verdict it replaced (may be none)
};

struct ChannelChange {
  std::string channel;
  std::string previous_version;  // "" when it pointed at nothing
  std::string policy_version;    // what it points at now
};

class PolicyStore {
 public:
  virtual ~PolicyStore() = default;

  // Verifies and stores `artifact_file` with its `signature` (.sig text;
  // "" = unsigned); when `channel` is not empty, then points it at the new
  // version (as Promote without force) in the same change.
  virtual absl::StatusOr<PushResult> Push(absl::string_view artifact_file,
                                          absl::string_view signature,
                                          absl::string_view channel,
                                          absl::string_view note) = 0;
  // Push without a signature.
  absl::StatusOr<PushResult> Push(absl::string_view artifact_file,
                                  absl::string_view channel,
                                  absl::string_view note) {
    return Push(artifact_file, "", channel, note);
  }
  virtual absl::StatusOr<PolicyListing> List() = 0;
  // `policy_version` may be a unique prefix of at least 6 hex digits.
  virtual absl::StatusOr<FetchedPolicy> GetVersion(
      absl::string_view policy_version) = 0;
  virtual absl::StatusOr<FetchedPolicy> GetChannel(
      absl::string_view channel) = 0;
  // Points `channel` at `policy_version` (a unique prefix is accepted); its
  // old version goes onto its history. Promoting the current version again
  // changes nothing. A version whose verdict is "failed" is refused for the
  // stable channel (FailedPrecondition naming the version, the reason and
  // the fix) unless `force`; its verdict stays recorded either way.
  virtual absl::StatusOr<ChannelChange> Promote(
      absl::string_view policy_version, absl::string_view channel,
      bool force) = 0;
  // Promote without force.
  absl::StatusOr<ChannelChange> Promote(absl::string_view policy_version,
                                        absl::string_view channel) {
    return Promote(policy_version, channel, /*force=*/false);
  }
  // Points `channel` back at the version it had before the last Promote
  // and forgets the current one; repeated rollbacks walk further back.
  virtual absl::StatusOr<ChannelChange> Rollback(absl::string_view channel) = 0;
  // Records `verdict` (kVerdictFailed or kVerdictCleared) with `reason`
  // (required, at most kMaxVerdictReasonBytes) on `policy_version` (a
  // unique prefix is accepted), replacing its earlier verdict. Channels are
  // not moved: rolling a failed version off a channel is Rollback's job.
  virtual absl::StatusOr<VersionMark> MarkVersion(
      absl::string_view policy_version, absl::string_view verdict,
      absl::string_view reason) = 0;
};

// OK for a channel of kPolicyChannels; NotFound naming the known channels
// otherwise (InvalidArgument when empty).
absl::Status CheckChannelName(absl::string_view channel);

// OK for kVerdictFailed or kVerdictCleared; InvalidArgument naming them
// otherwise.
absl::Status CheckVerdictName(absl::string_view verdict);

// The directory-backed store is directory_policy_store.h's OpenPolicyStore;
// the gRPC client, policy_store_client.h's ConnectPolicyStore.

}  // namespace phaseloop::policy_store

#endif  // PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_STORE_H_
