#ifndef PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_STORE_SERVICE_H_
#define PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_STORE_SERVICE_H_

// The gRPC edge of a PolicyStore (service phaseloop.v1.PolicyStore in
// proto/phaseloop/v1/policy_store.proto). absl statuses become gRPC codes
// here and nowhere else (same numbering: NOT_FOUND, INVALID_ARGUMENT,
// FAILED_PRECONDITION, DATA_LOSS, ...).
//
// Callers that change the store (Push, Promote, Rollback, Mark) must send
// the server's token, when it has one, as metadata `authorization: Bearer
// <token>` (UNAUTHENTICATED otherwise); reads (List, Get) need none. A
// server listening beyond loopback must have a token: Start refuses
// otherwise. The token travels in clear (no TLS here): beyond loopback,
// serve on a network you trust or behind a TLS-terminating proxy.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "offline_rl/policy_store/policy_store.h"
#include "phaseloop/v1/policy_store.grpc.pb.h"

namespace phaseloop::policy_store {

// The RPC handlers; thread-safe because the store is. `store` is not owned
// and must outlive the service.
class PolicyStoreService final : public v1::PolicyStore::Service {
 public:
  // `token` "" = no token asked.
  PolicyStoreService(PolicyStore* store, std::string token)
      : store_(store), token_(std::move(token)) {}

  grpc::Status Push(grpc::ServerContext*, const v1::PushPolicyRequest* request,
                    v1::PushPolicyReply* reply) override;
  grpc::Status List(grpc::ServerContext*, const v1::ListPoliciesRequest*,
                    v1::ListPoliciesReply* reply) override;
  grpc::Status Get(grpc::ServerContext*, const v1::GetPolicyRequest* request,
                   v1::GetPolicyReply* reply) override;
  grpc::Status Promote(grpc::ServerContext*,
                       const v1::PromotePolicyRequest* request,
                       v1::ChannelChangeReply* reply) override;
  grpc::Status Rollback(grpc::ServerContext*,
                        const v1::RollbackPolicyRequest* request,
                        v1::ChannelChangeReply* reply) override;
  grpc::Status Mark(grpc::ServerContext*, const v1::MarkPolicyRequest* request,
                    v1::MarkPolicyReply* reply) override;

 private:
  // OK when no token is asked or `context` carries it.
  grpc::Status CheckToken(const grpc::ServerContext* context,
                          const char* call) const;

  PolicyStore* store_;
  const std::string token_;
};

struct ServerOptions {
  // Asked of Push, Promote, Rollback and Mark; "" = none (loopback only).
  std::string token;
};

// A running gRPC server for one store. Destroying it shuts it down.
class PolicyStoreServer {
 public:
  // Serves `store` (not owned; must outlive the server) on `listen`
  // ("host:port"; port 0 picks a free one). InvalidArgument when the
  // address is malformed or cannot be bound; FailedPrecondition when it is
  // not a loopback address and `options` has no token.
  static absl::StatusOr<std::unique_ptr<PolicyStoreServer>> Start(
      PolicyStore* store, const std::string& listen,
      const ServerOptions& options = {});
  ~PolicyStoreServer();

  // "host:port" with the port actually bound.
  const std::string& address() const { return address_; }

  // Stops accepting calls, lets running ones finish for up to `grace`,
  // then cancels the rest. Idempotent.
  void Shutdown(absl::Duration grace);

 private:
  PolicyStoreServer(std::unique_ptr<PolicyStoreService> service,
                    std::unique_ptr<grpc::Server> server, std::string address)
      : service_(std::move(service)),
        server_(std::move(server)),
        address_(std::move(address)) {}

  std::unique_ptr<PolicyStoreService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  bool shut_down_ = false;
};

}  // namespace phaseloop::policy_store

#endif  // PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_STORE_SERVICE_H_
