// `phaseloop policy push|list|promote|rollback|mark|pull`: the store's clients
// (declared in policy_command.h).
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/command/exit_code.h"
#include "common/files/atomic_file.h"
#include "common/signing/service_token.h"
#include "common/signing/signature.h"
#include "common/signing/trust_file.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "nlohmann/json.hpp"
#include "offline_rl/policy_store/policy_command.h"
#include "offline_rl/policy_store/policy_store_client.h"

namespace phaseloop::policy_store {
namespace {

using nlohmann::json;

// Input the user can fix exits 2; an unreachable or damaged store exits 1.
int Fail(absl::string_view command, const absl::Status& status,
         std::ostream& err) {
  err << "phaseloop policy " << command << ": " << status.message() << "\n";
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kPermissionDenied:  // a refused signature
    case absl::StatusCode::kUnauthenticated:   // a missing or wrong token
      return command::kExitBadInput;
    default:
      return command::kExitInternal;
  }
}

// The store at --store, with the token of --token-file (CLI11 fills it from
// $PHASELOOP_POLICY_STORE_TOKEN_FILE too).
absl::StatusOr<std::unique_ptr<PolicyStore>> Connect(const PolicyFlags& flags) {
  ClientOptions options;
  if (!flags.token_file.empty()) {
    absl::StatusOr<std::string> token =
        signing::ReadTokenFile(flags.token_file);
    if (!token.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--token-file: ", token.status().message()));
    }
    options.token = *std::move(token);
  }
  return ConnectPolicyStore(flags.store, options);
}

std::string FormatTime(int64_t unix_ms) {
  if (unix_ms == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

json VerdictJson(const VersionVerdict& verdict) {
  if (verdict.verdict.empty()) return nullptr;
  return {{"verdict", verdict.verdict},
          {"reason", verdict.reason},
          {"marked_unix_ms", verdict.marked_unix_ms}};
}

json ChangeJson(const ChannelChange& change) {
  return {{"channel", change.channel},
          {"previous_version", change.previous_version},
          {"policy_version", change.policy_version}};
}

}  // namespace

int RunPolicyPush(const PolicyFlags& flags, std::ostream& out,
                  std::ostream& err) {
  std::string bytes;
  absl::Status read = files::ReadWholeFile(flags.file, &bytes);
  if (!read.ok())
    return Fail("push", absl::InvalidArgumentError(read.message()), err);
  // Checked here too, so a bad file is named before any network traffic.
  absl::StatusOr<v1::PolicyArtifact> artifact =
      policy_runtime::ParsePolicyArtifactFile(bytes, flags.file);
  if (!artifact.ok()) {
    return Fail("push", absl::InvalidArgumentError(artifact.status().message()),
                err);
  }
  // The signature travels with it: --signature, else FILE.sig if present.
  std::string signature;
  const std::string signature_path = flags.signature_file.empty()
                                         ? signing::SignaturePathFor(flags.file)
                                         : flags.signature_file;
  absl::Status signature_read =
      files::ReadWholeFile(signature_path, &signature);
  if (!signature_read.ok() &&
      (!flags.signature_file.empty() || !absl::IsNotFound(signature_read))) {
    return Fail("push",
                absl::InvalidArgumentError(
                    absl::StrCat("cannot read the signature ", signature_path,
                                 ": ", signature_read.message())),
                err);
  }
  absl::StatusOr<std::unique_ptr<PolicyStore>> store = Connect(flags);
  if (!store.ok()) return Fail("push", store.status(), err);
  absl::StatusOr<PushResult> pushed =
      (*store)->Push(bytes, signature, flags.channel, flags.note);
  if (!pushed.ok()) return Fail("push", pushed.status(), err);
  if (flags.json) {
    out << json{{"policy_version", pushed->policy_version},
                {"already_stored", pushed->already_stored},
                {"channel", flags.channel},
                {"signed", !signature.empty()}}
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return command::kExitOk;
  }
  out << (pushed->already_stored ? "already stored " : "pushed ")
      << pushed->policy_version;
  if (!flags.channel.empty()) out << "; " << flags.channel << " -> it";
  if (!signature.empty()) {
    absl::StatusOr<std::string> key_id =
        signing::SignatureKeyId(signature, flags.file);
    if (key_id.ok()) out << "; signed by " << *key_id;
  }
  out << "\n";
  return command::kExitOk;
}

int RunPolicyList(const PolicyFlags& flags, std::ostream& out,
                  std::ostream& err) {
  absl::StatusOr<std::unique_ptr<PolicyStore>> store = Connect(flags);
  if (!store.ok()) return Fail("list", store.status(), err);
  absl::StatusOr<PolicyListing> listing = (*store)->List();
  if (!listing.ok()) return Fail("list", listing.status(), err);
  if (flags.json) {
    json policies = json::array();
    for (const StoredPolicy& p : listing->policies) {
      policies.push_back({{"policy_version", p.policy_version},
                          {"objective", p.objective},
                          {"formulation", p.formulation},
                          {"algorithm", p.algorithm},
                          {"metrics", p.metrics},
                          {"parent_version", p.parent_version},
                          {"note", p.note},
                          {"pushed_unix_ms", p.pushed_unix_ms},
                          {"size_bytes", p.size_bytes},
                          {"channels", p.channels},
                          {"verdict", VerdictJson(p.verdict)},
                          {"signed_by", p.signed_by}});
    }
    json channels = json::array();
    for (const ChannelState& c : listing->channels) {
      channels.push_back({{"name", c.name},
                          {"policy_version", c.policy_version},
                          {"updated_unix_ms", c.updated_unix_ms},
                          {"previous_versions", c.previous_versions}});
    }
    out << json{{"policies", policies}, {"channels", channels}}.dump(
               2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return command::kExitOk;
  }
  out << std::left << std::setw(34) << "VERSION" << std::setw(18) << "CHANNELS"
      << std::setw(11) << "OBJECTIVE" << std::setw(11) << "FORM" << std::setw(6)
      << "ALGO" << std::setw(21) << "PUSHED (UTC)" << std::setw(9) << "VERDICT"
      << std::setw(18) << "SIGNED BY"
      << "METRICS\n";
  std::vector<const StoredPolicy*> marked;
  for (const StoredPolicy& p : listing->policies) {
    std::vector<std::string> metrics;
    for (const auto& [name, value] : p.metrics) {
      metrics.push_back(absl::StrCat(name, "=", value));
    }
    out << std::setw(34) << p.policy_version << std::setw(18)
        << (p.channels.empty() ? "-" : absl::StrJoin(p.channels, ","))
        << std::setw(11) << p.objective << std::setw(11) << p.formulation
        << std::setw(6) << p.algorithm << std::setw(21)
        << FormatTime(p.pushed_unix_ms) << std::setw(9)
        << (p.verdict.verdict.empty() ? "-" : p.verdict.verdict)
        << std::setw(18) << (p.signed_by.empty() ? "unsigned" : p.signed_by)
        << absl::StrJoin(metrics, " ") << "\n";
    if (!p.verdict.verdict.empty()) marked.push_back(&p);
  }
  if (listing->policies.empty()) out << "(no versions stored)\n";
  for (const StoredPolicy* p : marked) {
    out << p->policy_version << " " << p->verdict.verdict << " at "
        << FormatTime(p->verdict.marked_unix_ms) << ": " << p->verdict.reason
        << "\n";
  }
  out << "\n";
  for (const ChannelState& c : listing->channels) {
    out << std::setw(10) << c.name
        << (c.policy_version.empty() ? "(nothing)" : c.policy_version) << "  "
        << c.previous_versions.size() << " earlier, updated "
        << FormatTime(c.updated_unix_ms) << "\n";
  }
  return command::kExitOk;
}

int RunPolicyPromote(const PolicyFlags& flags, std::ostream& out,
                     std::ostream& err) {
  absl::StatusOr<std::unique_ptr<PolicyStore>> store = Connect(flags);
  if (!store.ok()) return Fail("promote", store.status(), err);
  absl::StatusOr<ChannelChange> change =
      (*store)->Promote(flags.version, flags.channel, flags.force);
  if (!change.ok()) return Fail("promote", change.status(), err);
  if (flags.json) {
    out << ChangeJson(*change).dump(-1, ' ', false,
                                    nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << change->channel << ": "
        << (change->previous_version.empty() ? "(nothing)"
                                             : change->previous_version)
        << " -> " << change->policy_version << "\n";
  }
  return command::kExitOk;
}

int RunPolicyMark(const PolicyFlags& flags, std::ostream& out,
                  std::ostream& err) {
  absl::StatusOr<std::unique_ptr<PolicyStore>> store = Connect(flags);
  if (!store.ok()) return Fail("mark", store.status(), err);
  absl::StatusOr<VersionMark> mark =
      (*store)->MarkVersion(flags.version, flags.verdict, flags.reason);
  if (!mark.ok()) return Fail("mark", mark.status(), err);
  if (flags.json) {
    out << json{{"policy_version", mark->policy_version},
                {"verdict", VerdictJson(mark->verdict)},
                {"previous", VerdictJson(mark->previous)}}
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << mark->policy_version << ": "
        << (mark->previous.verdict.empty() ? "(no verdict)"
                                           : mark->previous.verdict)
        << " -> " << mark->verdict.verdict << " (" << mark->verdict.reason
        << ")\n";
  }
  return command::kExitOk;
}

int RunPolicyRollback(const PolicyFlags& flags, std::ostream& out,
                      std::ostream& err) {
  absl::StatusOr<std::unique_ptr<PolicyStore>> store = Connect(flags);
  if (!store.ok()) return Fail("rollback", store.status(), err);
  absl::StatusOr<ChannelChange> change = (*store)->Rollback(flags.channel);
  if (!change.ok()) return Fail("rollback", change.status(), err);
  if (flags.json) {
    out << ChangeJson(*change).dump(-1, ' ', false,
                                    nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << change->channel << ": rolled back " << change->previous_version
        << " -> " << change->policy_version << "\n";
  }
  return command::kExitOk;
}

int RunPolicyPull(const PolicyFlags& flags, std::ostream& out,
                  std::ostream& err) {
  if (flags.channel.empty() == flags.version.empty()) {
    return Fail("pull",
                absl::InvalidArgumentError(
                    "give exactly one of --channel NAME or --version V"),
                err);
  }
  // Before the download: an --out that can never be written is the
  // user's to fix (exit 2), not a failed pull (exit 1).
  if (std::error_code error;
      flags.out.empty() || std::filesystem::is_directory(flags.out, error)) {
    return Fail("pull",
                absl::InvalidArgumentError(absl::StrCat(
                    "--out '", flags.out,
                    flags.out.empty() ? "' is empty" : "' is a directory",
                    ": give the artifact file to write, e.g. "
                    "policies/current.plpolicy")),
                err);
  }
  absl::StatusOr<std::unique_ptr<PolicyStore>> store = Connect(flags);
  if (!store.ok()) return Fail("pull", store.status(), err);
  // The client verifies the download (checksum, structure, content hash).
  absl::StatusOr<FetchedPolicy> fetched =
      flags.channel.empty() ? (*store)->GetVersion(flags.version)
                            : (*store)->GetChannel(flags.channel);
  if (!fetched.ok()) return Fail("pull", fetched.status(), err);
  std::string signed_by;
  if (!flags.trust_file.empty()) {
    // Checked before anything is written: a refused pull leaves the old
    // files as they were.
    absl::StatusOr<signing::TrustedKeys> trust =
        signing::TrustedKeys::Read(flags.trust_file);
    if (!trust.ok()) return Fail("pull", trust.status(), err);
    absl::StatusOr<std::string> key_id = signing::VerifyArtifact(
        fetched->artifact_file, fetched->signature, *trust,
        absl::StrCat("policy version ", fetched->policy_version, " from ",
                     flags.store));
    if (!key_id.ok()) return Fail("pull", key_id.status(), err);
    signed_by = *key_id;
  }
  // The directory of --out, as CI's first pull into a fresh checkout needs
  // it (`--out policies/current.plpolicy`).
  if (const std::string dir =
          std::filesystem::path(flags.out).parent_path().string();
      !dir.empty()) {
    if (absl::Status made = files::MakeDirectories(dir); !made.ok()) {
      return Fail("pull", made, err);
    }
  }
  // The signature first: a crash between the two leaves a .sig that does
  // not match the old artifact (refused, fails open), never a new artifact
  // beside an old signature that a reader might take for its own.
  const std::string signature_path = signing::SignaturePathFor(flags.out);
  if (!fetched->signature.empty()) {
    absl::Status written =
        files::WriteFileAtomically(signature_path, fetched->signature);
    if (!written.ok()) return Fail("pull", written, err);
  } else if (unlink(signature_path.c_str()) != 0 && errno != ENOENT) {
    return Fail("pull",
                absl::InternalError(absl::StrCat(
                    "cannot remove the stale signature ", signature_path)),
                err);
  }
  absl::Status written =
      files::WriteFileAtomically(flags.out, fetched->artifact_file);
  if (!written.ok()) return Fail("pull", written, err);
  if (flags.json) {
    out << json{{"policy_version", fetched->policy_version},
                {"out", flags.out},
                {"bytes", fetched->artifact_file.size()},
                {"signed", !fetched->signature.empty()},
                {"signed_by", signed_by}}
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << "pulled " << fetched->policy_version << " ("
        << fetched->artifact_file.size() << " bytes, verified"
        << (signed_by.empty() ? "" : absl::StrCat(", signed by ", signed_by))
        << ") to " << flags.out
        << (fetched->signature.empty() ? " (unsigned)"
                                       : absl::StrCat(" and ", signature_path))
        << "\n";
  }
  return command::kExitOk;
}

}  // namespace phaseloop::policy_store
