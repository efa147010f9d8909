#ifndef PHASELOOP_STAGING_HARNESS_WORKERS_SESSION_SERVICE_H_
#define PHASELOOP_STAGING_HARNESS_WORKERS_SESSION_SERVICE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "compiler_driver/session/compilation_session.h"
#include "phaseloop/v1/compilation_session.grpc.pb.h"

namespace phaseloop::service {

// Test-only faults a worker can be started with, to prove isolation: applying
// the named action aborts the process, or sleeps forever.
struct FaultInjection {
  std::string crash_action;
  std::string hang_action;
};

// Serves CompilationSessions over gRPC. All LLVM work is serialised by one
// mutex: sessions and their forks share LLVM contexts, which are not
// thread-safe. Scale by running more workers, not more threads.
class SessionService final
    : public phaseloop::v1::CompilationSessionService::Service {
 public:
  explicit SessionService(FaultInjection faults = {})
      : faults_(std::move(faults)) {}

  grpc::Status StartSession(grpc::ServerContext*,
                            const v1::StartSessionRequest* request,
                            v1::StartSessionReply* reply) override;
  grpc::Status Step(grpc::ServerContext*, const v1::StepRequest* request,
                    v1::StepReply* reply) override;
  grpc::Status Observe(grpc::ServerContext*, const v1::ObserveRequest* request,
                       v1::ObserveReply* reply) override;
  grpc::Status Fork(grpc::ServerContext*, const v1::ForkRequest* request,
                    v1::ForkReply* reply) override;
  grpc::Status EndSession(grpc::ServerContext*,
                          const v1::EndSessionRequest* request,
                          v1::EndSessionReply* reply) override;

 private:
  session::CompilationSession* Find(int64_t id);
  grpc::Status Fill(session::CompilationSession& s,
                    const google::protobuf::RepeatedField<int>& kinds,
                    google::protobuf::RepeatedPtrField<v1::Observation>* out);

  FaultInjection faults_;
  std::mutex mu_;
  int64_t next_id_ = 1;
  std::map<int64_t, std::unique_ptr<session::CompilationSession>> sessions_;
};

// absl::Status -> grpc::Status at the RPC edge.
grpc::Status ToGrpc(const absl::Status& status);

}  // namespace phaseloop::service

#endif  // PHASELOOP_STAGING_HARNESS_WORKERS_SESSION_SERVICE_H_
