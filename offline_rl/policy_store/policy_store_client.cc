#include "offline_rl/policy_store/policy_store_client.h"

#include <chrono>
#include <cstdlib>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/signing/service_token.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "grpcpp/grpcpp.h"
#include "phaseloop/v1/policy_store.grpc.pb.h"

namespace phaseloop::policy_store {
namespace {

class RemotePolicyStore final : public PolicyStore {
 public:
  RemotePolicyStore(std::string address, ClientOptions options,
                    std::unique_ptr<v1::PolicyStore::Stub> stub)
      : address_(std::move(address)),
        options_(std::move(options)),
        stub_(std::move(stub)) {}

  using PolicyStore::Push;
  absl::StatusOr<PushResult> Push(absl::string_view artifact_file,
                                  absl::string_view signature,
                                  absl::string_view channel,
                                  absl::string_view note) override {
    v1::PushPolicyRequest request;
    request.set_artifact_file(std::string(artifact_file));
    request.set_signature(std::string(signature));
    request.set_channel(std::string(channel));
    request.set_note(std::string(note));
    v1::PushPolicyReply reply;
    grpc::ClientContext context;
    absl::Status status = Call(stub_->Push(Prepare(context), request, &reply));
    if (!status.ok()) return status;
    return PushResult{reply.policy_version(), reply.already_stored()};
  }

  absl::StatusOr<PolicyListing> List() override;

  absl::StatusOr<FetchedPolicy> GetVersion(
      absl::string_view policy_version) override {
    v1::GetPolicyRequest request;
    request.set_policy_version(std::string(policy_version));
    return Get(request, absl::StrCat("version ", policy_version));
  }

  absl::StatusOr<FetchedPolicy> GetChannel(absl::string_view channel) override {
    v1::GetPolicyRequest request;
    request.set_channel(std::string(channel));
    return Get(request, absl::StrCat("channel ", channel));
  }

  using PolicyStore::Promote;
  absl::StatusOr<ChannelChange> Promote(absl::string_view policy_version,
                                        absl::string_view channel,
                                        bool force) override {
    v1::PromotePolicyRequest request;
    request.set_policy_version(std::string(policy_version));
    request.set_channel(std::string(channel));
    request.set_force(force);
    v1::ChannelChangeReply reply;
    grpc::ClientContext context;
    absl::Status status =
        Call(stub_->Promote(Prepare(context), request, &reply));
    if (!status.ok()) return status;
    return ChannelChange{reply.channel(), reply.previous_version(),
                         reply.policy_version()};
  }

  absl::StatusOr<ChannelChange> Rollback(absl::string_view channel) override {
    v1::RollbackPolicyRequest request;
    request.set_channel(std::string(channel));
    v1::ChannelChangeReply reply;
    grpc::ClientContext context;
    absl::Status status =
        Call(stub_->Rollback(Prepare(context), request, &reply));
    if (!status.ok()) return status;
    return ChannelChange{reply.channel(), reply.previous_version(),
                         reply.policy_version()};
  }

  absl::StatusOr<VersionMark> MarkVersion(absl::string_view policy_version,
                                          absl::string_view verdict,
                                          absl::string_view reason) override {
    v1::MarkPolicyRequest request;
    request.set_policy_version(std::string(policy_version));
    request.set_verdict(std::string(verdict));
    request.set_reason(std::string(reason));
    v1::MarkPolicyReply reply;
    grpc::ClientContext context;
    absl::Status status = Call(stub_->Mark(Prepare(context), request, &reply));
    if (!status.ok()) return status;
    return VersionMark{reply.policy_version(), VerdictOf(reply.verdict()),
                       VerdictOf(reply.previous())};
  }

 private:
  static VersionVerdict VerdictOf(const v1::VersionVerdictInfo& info) {
    return VersionVerdict{info.verdict(), info.reason(), info.marked_unix_ms()};
  }

  grpc::ClientContext* Prepare(grpc::ClientContext& context) const {
    context.set_deadline(std::chrono::system_clock::now() +
                         absl::ToChronoMilliseconds(options_.call_timeout));
    if (!options_.token.empty()) {
      context.AddMetadata(signing::kAuthorizationMetadata,
                          absl::StrCat(signing::kBearerPrefix, options_.token));
    }
    return &context;
  }

  // The absl status of a finished call (the RPC edge, client side).
  absl::Status Call(const grpc::Status& status) const {
    if (status.ok()) return absl::OkStatus();
    const auto code = static_cast<absl::StatusCode>(status.error_code());
    if (code == absl::StatusCode::kUnavailable ||
        code == absl::StatusCode::kDeadlineExceeded) {
      return absl::Status(
          code, absl::StrCat("cannot reach the policy store at ", address_,
                             ": ", status.error_message(),
                             " (is `phaseloop policy serve` running there? "
                             "check --store or $",
                             kPolicyStoreEnv, ")"));
    }
    if (code == absl::StatusCode::kUnimplemented) {
      return absl::Status(
          code,
          absl::StrCat("the policy store at ", address_,
                       " does not serve this call (", status.error_message(),
                       "): it runs an older phaseloop; restart it with "
                       "this one's `phaseloop policy serve`"));
    }
    return absl::Status(code, status.error_message());
  }

  absl::StatusOr<FetchedPolicy> Get(const v1::GetPolicyRequest& request,
                                    const std::string& what);

  const std::string address_;
  const ClientOptions options_;
  std::unique_ptr<v1::PolicyStore::Stub> stub_;
};

absl::StatusOr<PolicyListing> RemotePolicyStore::List() {
  v1::ListPoliciesReply reply;
  grpc::ClientContext context;
  absl::Status status =
      Call(stub_->List(Prepare(context), v1::ListPoliciesRequest(), &reply));
  if (!status.ok()) return status;
  PolicyListing listing;
  for (const v1::StoredPolicyInfo& info : reply.policies()) {
    StoredPolicy policy;
    policy.policy_version = info.policy_version();
    policy.objective = info.objective();
    policy.formulation = info.formulation();
    policy.algorithm = info.algorithm();
    policy.metrics.insert(info.metrics().begin(), info.metrics().end());
    policy.parent_version = info.parent_version();
    policy.note = info.note();
    policy.pushed_unix_ms = info.pushed_unix_ms();
    policy.size_bytes = info.size_bytes();
    policy.channels.assign(info.channels().begin(), info.channels().end());
    policy.verdict = VerdictOf(info.verdict());
    policy.signed_by = info.signed_by();
    listing.policies.push_back(std::move(policy));
  }
  for (const v1::ChannelInfo& info : reply.channels()) {
    ChannelState channel;
    channel.name = info.name();
    channel.policy_version = info.policy_version();
    channel.updated_unix_ms = info.updated_unix_ms();
    channel.previous_versions.assign(info.previous_versions().begin(),
                                     info.previous_versions().end());
    listing.channels.push_back(std::move(channel));
  }
  return listing;
}

absl::StatusOr<FetchedPolicy> RemotePolicyStore::Get(
    const v1::GetPolicyRequest& request, const std::string& what) {
  v1::GetPolicyReply reply;
  grpc::ClientContext context;
  absl::Status status = Call(stub_->Get(Prepare(context), request, &reply));
  if (!status.ok()) return status;
  const std::string source =
      absl::StrCat("downloaded from ", address_, " (", what, ")");
  absl::StatusOr<v1::PolicyArtifact> artifact =
      policy_runtime::ParsePolicyArtifactFile(reply.artifact_file(), source);
  if (!artifact.ok()) {
    return absl::DataLossError(absl::StrCat(artifact.status().message(),
                                            " (the download was damaged or the "
                                            "server's copy is; try again)"));
  }
  const std::string version = policy_runtime::PolicyVersionOf(*artifact);
  const bool asked_version =
      request.selector_case() == v1::GetPolicyRequest::kPolicyVersion;
  if (version != reply.policy_version() ||
      (asked_version && !absl::StartsWith(version, request.policy_version()))) {
    return absl::DataLossError(absl::StrCat(
        "the artifact ", source, " has content hash ", version,
        " but the server called it ", reply.policy_version(),
        asked_version
            ? absl::StrCat(" and ", request.policy_version(), " was asked for")
            : std::string(),
        "; refusing it"));
  }
  return FetchedPolicy{std::move(*reply.mutable_artifact_file()), version,
                       reply.signature()};
}

}  // namespace

absl::StatusOr<std::unique_ptr<PolicyStore>> ConnectPolicyStore(
    const std::string& address, absl::Duration call_timeout) {
  ClientOptions options;
  options.call_timeout = call_timeout;
  if (const char* path = std::getenv(kPolicyStoreTokenFileEnv);
      path != nullptr && *path != '\0') {
    absl::StatusOr<std::string> token = signing::ReadTokenFile(path);
    if (!token.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "$", kPolicyStoreTokenFileEnv, ": ", token.status().message()));
    }
    options.token = *std::move(token);
  }
  return ConnectPolicyStore(address, options);
}

absl::StatusOr<std::unique_ptr<PolicyStore>> ConnectPolicyStore(
    const std::string& address, const ClientOptions& options) {
  if (address.empty() || address.find(':') == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("policy store address '", address,
                     "' is not HOST:PORT: pass --store "
                     "(what `phaseloop policy serve` prints) or set $",
                     kPolicyStoreEnv));
  }
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(static_cast<int>(kMaxArtifactBytes) +
                                     (1 << 20));
  arguments.SetMaxSendMessageSize(static_cast<int>(kMaxArtifactBytes) +
                                  (1 << 20));
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
      address, grpc::InsecureChannelCredentials(), arguments);
  return std::unique_ptr<PolicyStore>(new RemotePolicyStore(
      address, options, v1::PolicyStore::NewStub(channel)));
}

}  // namespace phaseloop::policy_store
