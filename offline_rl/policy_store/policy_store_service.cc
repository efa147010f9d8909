#include "offline_rl/policy_store/policy_store_service.h"

#include <chrono>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/net/listen_address.h"
#include "common/signing/service_token.h"

namespace phaseloop::policy_store {
namespace {

// absl and gRPC number their canonical codes the same way.
grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

void FillChange(const ChannelChange& change, v1::ChannelChangeReply* reply) {
  reply->set_channel(change.channel);
  reply->set_previous_version(change.previous_version);
  reply->set_policy_version(change.policy_version);
}

void FillVerdict(const VersionVerdict& verdict, v1::VersionVerdictInfo* info) {
  info->set_verdict(verdict.verdict);
  info->set_reason(verdict.reason);
  info->set_marked_unix_ms(verdict.marked_unix_ms);
}

}  // namespace

grpc::Status PolicyStoreService::CheckToken(const grpc::ServerContext* context,
                                            const char* call) const {
  if (token_.empty()) return grpc::Status::OK;
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(signing::kAuthorizationMetadata);
  if (it == metadata.end()) {
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        absl::StrCat("this policy store asks a token for ", call,
                     " (push, promote, rollback and mark): pass --token-file "
                     "FILE or set $PHASELOOP_POLICY_STORE_TOKEN_FILE to the "
                     "file the server was started with"));
  }
  const std::string sent(it->second.data(), it->second.size());
  const std::string expected = absl::StrCat(signing::kBearerPrefix, token_);
  if (!signing::TokensEqual(sent, expected)) {
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        absl::StrCat("the policy store refused the token sent with ", call,
                     ": it is not the server's; check --token-file or "
                     "$PHASELOOP_POLICY_STORE_TOKEN_FILE"));
  }
  return grpc::Status::OK;
}

grpc::Status PolicyStoreService::Push(grpc::ServerContext* context,
                                      const v1::PushPolicyRequest* request,
                                      v1::PushPolicyReply* reply) {
  if (grpc::Status allowed = CheckToken(context, "push"); !allowed.ok()) {
    return allowed;
  }
  absl::StatusOr<PushResult> pushed =
      store_->Push(request->artifact_file(), request->signature(),
                   request->channel(), request->note());
  if (!pushed.ok()) return ToGrpcStatus(pushed.status());
  reply->set_policy_version(pushed->policy_version);
  reply->set_already_stored(pushed->already_stored);
  return grpc::Status::OK;
}

grpc::Status PolicyStoreService::List(grpc::ServerContext*,
                                      const v1::ListPoliciesRequest*,
                                      v1::ListPoliciesReply* reply) {
  absl::StatusOr<PolicyListing> listing = store_->List();
  if (!listing.ok()) return ToGrpcStatus(listing.status());
  for (const StoredPolicy& policy : listing->policies) {
    v1::StoredPolicyInfo* info = reply->add_policies();
    info->set_policy_version(policy.policy_version);
    info->set_objective(policy.objective);
    info->set_formulation(policy.formulation);
    info->set_algorithm(policy.algorithm);
    for (const auto& [name, value] : policy.metrics) {
      (*info->mutable_metrics())[name] = value;
    }
    info->set_pushed_unix_ms(policy.pushed_unix_ms);
    info->set_note(policy.note);
    info->set_size_bytes(policy.size_bytes);
    info->set_parent_version(policy.parent_version);
    info->set_signed_by(policy.signed_by);
    for (const std::string& channel : policy.channels) {
      info->add_channels(channel);
    }
    if (!policy.verdict.verdict.empty()) {
      FillVerdict(policy.verdict, info->mutable_verdict());
    }
  }
  for (const ChannelState& channel : listing->channels) {
    v1::ChannelInfo* info = reply->add_channels();
    info->set_name(channel.name);
    info->set_policy_version(channel.policy_version);
    info->set_updated_unix_ms(channel.updated_unix_ms);
    for (const std::string& version : channel.previous_versions) {
      info->add_previous_versions(version);
    }
  }
  return grpc::Status::OK;
}

grpc::Status PolicyStoreService::Get(grpc::ServerContext*,
                                     const v1::GetPolicyRequest* request,
                                     v1::GetPolicyReply* reply) {
  absl::StatusOr<FetchedPolicy> fetched;
  switch (request->selector_case()) {
    case v1::GetPolicyRequest::kPolicyVersion:
      fetched = store_->GetVersion(request->policy_version());
      break;
    case v1::GetPolicyRequest::kChannel:
      fetched = store_->GetChannel(request->channel());
      break;
    default:
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "Get needs a policy_version or a channel");
  }
  if (!fetched.ok()) return ToGrpcStatus(fetched.status());
  *reply->mutable_artifact_file() = std::move(fetched->artifact_file);
  reply->set_policy_version(fetched->policy_version);
  reply->set_signature(fetched->signature);
  return grpc::Status::OK;
}

grpc::Status PolicyStoreService::Promote(
    grpc::ServerContext* context, const v1::PromotePolicyRequest* request,
    v1::ChannelChangeReply* reply) {
  if (grpc::Status allowed = CheckToken(context, "promote"); !allowed.ok()) {
    return allowed;
  }
  absl::StatusOr<ChannelChange> change = store_->Promote(
      request->policy_version(), request->channel(), request->force());
  if (!change.ok()) return ToGrpcStatus(change.status());
  FillChange(*change, reply);
  return grpc::Status::OK;
}

grpc::Status PolicyStoreService::Rollback(
    grpc::ServerContext* context, const v1::RollbackPolicyRequest* request,
    v1::ChannelChangeReply* reply) {
  if (grpc::Status allowed = CheckToken(context, "rollback"); !allowed.ok()) {
    return allowed;
  }
  absl::StatusOr<ChannelChange> change = store_->Rollback(request->channel());
  if (!change.ok()) return ToGrpcStatus(change.status());
  FillChange(*change, reply);
  return grpc::Status::OK;
}

grpc::Status PolicyStoreService::Mark(grpc::ServerContext* context,
                                      const v1::MarkPolicyRequest* request,
                                      v1::MarkPolicyReply* reply) {
  if (grpc::Status allowed = CheckToken(context, "mark"); !allowed.ok()) {
    return allowed;
  }
  absl::StatusOr<VersionMark> mark = store_->MarkVersion(
      request->policy_version(), request->verdict(), request->reason());
  if (!mark.ok()) return ToGrpcStatus(mark.status());
  reply->set_policy_version(mark->policy_version);
  FillVerdict(mark->verdict, reply->mutable_verdict());
  if (!mark->previous.verdict.empty()) {
    FillVerdict(mark->previous, reply->mutable_previous());
  }
  return grpc::Status::OK;
}

absl::StatusOr<std::unique_ptr<PolicyStoreServer>> PolicyStoreServer::Start(
    PolicyStore* store, const std::string& listen,
    const ServerOptions& options) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen ", listen,
                     " is not HOST:PORT (e.g. 127.0.0.1:7400, or "
                     "port 0 to pick a free one)"));
  }
  if (options.token.empty() && !net::IsLoopbackListenAddress(listen)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing to serve the policy store on ", listen,
        " without a token: beyond loopback anyone who reaches it could "
        "push, promote, roll back or mark policies; pass --token-file FILE "
        "(clients send it with --token-file or "
        "$PHASELOOP_POLICY_STORE_TOKEN_FILE), or listen on loopback "
        "(127.0.0.1:PORT)"));
  }
  auto service = std::make_unique<PolicyStoreService>(store, options.token);
  grpc::ServerBuilder builder;
  // gRPC binds with SO_REUSEPORT by default: a second server on a busy
  // address started, and the kernel split the clients between the two.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  int bound_port = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(),
                           &bound_port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(kMaxArtifactBytes) +
                                   (1 << 20));
  builder.SetMaxSendMessageSize(static_cast<int>(kMaxArtifactBytes) +
                                (1 << 20));
  builder.RegisterService(service.get());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound_port == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot listen on ", listen,
                     " (address in use, or not an address "
                     "of this machine?)"));
  }
  return std::unique_ptr<PolicyStoreServer>(new PolicyStoreServer(
      std::move(service), std::move(server),
      absl::StrCat(listen.substr(0, colon), ":", bound_port)));
}

PolicyStoreServer::~PolicyStoreServer() { Shutdown(absl::Seconds(5)); }

void PolicyStoreServer::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  server_->Shutdown(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(grace));
  server_->Wait();
}

}  // namespace phaseloop::policy_store
