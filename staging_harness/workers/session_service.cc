#include "staging_harness/workers/session_service.h"

#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "compiler_driver/ir/module_loader.h"
#include "llvm/IR/LLVMContext.h"

namespace phaseloop::service {
namespace {

grpc::Status NotFound(int64_t id) {
  return grpc::Status(grpc::StatusCode::NOT_FOUND,
                      "no session " + std::to_string(id) +
                          " on this worker (ended, or the worker restarted)");
}

}  // namespace

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

session::CompilationSession* SessionService::Find(int64_t id) {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

grpc::Status SessionService::Fill(
    session::CompilationSession& s,
    const google::protobuf::RepeatedField<int>& kinds,
    google::protobuf::RepeatedPtrField<v1::Observation>* out) {
  for (int kind : kinds) {
    v1::Observation* o = out->Add();
    o->set_kind(static_cast<v1::ObservationKind>(kind));
    switch (kind) {
      case v1::IR_COUNT:
        o->set_scalar(s.IrCount());
        break;
      case v1::AUTOPHASE:
        for (int64_t v : s.Autophase()) o->add_vector(v);
        break;
      case v1::INST_COUNT:
        for (int64_t v : s.InstCount()) o->add_vector(v);
        break;
      case v1::TEXT_SIZE: {
        absl::StatusOr<int64_t> text = s.TextSize();
        if (!text.ok()) return ToGrpc(text.status());
        o->set_scalar(*text);
        break;
      }
      case v1::ALLOC_SIZE: {
        absl::StatusOr<int64_t> alloc = s.AllocSize();
        if (!alloc.ok()) return ToGrpc(alloc.status());
        o->set_scalar(*alloc);
        break;
      }
      case v1::IR:
        o->set_text(s.IrText());
        break;
      case v1::MODULE_HASH:
        o->set_text(s.StateHash());
        break;
      default:
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            "unknown observation kind " + std::to_string(kind));
    }
  }
  return grpc::Status::OK;
}

grpc::Status SessionService::StartSession(
    grpc::ServerContext*, const v1::StartSessionRequest* request,
    v1::StartSessionReply* reply) {
  const v1::ModuleSource& source = request->source();
  session::SessionOptions options;
  if (!source.opt_level().empty()) {
    std::optional<ir::OptLevel> level = ir::ParseOptLevel(source.opt_level());
    if (!level) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "opt_level '" + source.opt_level() +
                              "' is not one of O0 O1 O2 O3 Os Oz");
    }
    options.opt_level = *level;
  }
  ir::FrontendOptions frontend;
  frontend.extra_args.assign(source.clang_flags().begin(),
                             source.clang_flags().end());
  if (source.convention() == "research") {
    frontend.convention = ir::ModuleConvention::kResearch;
  } else if (!source.convention().empty() &&
             source.convention() != "real-build") {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "convention '" + source.convention() +
                            "' is not real-build or research");
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<std::unique_ptr<session::CompilationSession>> session;
  if (source.has_bitcode()) {
    auto context = std::make_shared<llvm::LLVMContext>();
    auto module =
        ir::ParseModule(source.bitcode(), "request bitcode", *context);
    if (!module.ok()) return ToGrpc(module.status());
    options.flavor = passes::PipelineFlavor::kOpt;
    session = session::CompilationSession::Start(std::move(context),
                                                 std::move(*module), options);
  } else {
    session = session::CompilationSession::StartFromFile(source.path(),
                                                         frontend, options);
  }
  if (!session.ok()) return ToGrpc(session.status());
  const int64_t id = next_id_++;
  session::CompilationSession& s = **session;
  reply->set_session_id(id);
  reply->set_action_space(s.action_space().version());
  reply->set_action_count(s.action_space().size());
  reply->set_start_hash(s.StartHash());
  sessions_[id] = std::move(*session);
  return Fill(s, request->observe(), reply->mutable_observations());
}

grpc::Status SessionService::Step(grpc::ServerContext*,
                                  const v1::StepRequest* request,
                                  v1::StepReply* reply) {
  std::lock_guard<std::mutex> lock(mu_);
  session::CompilationSession* s = Find(request->session_id());
  if (s == nullptr) return NotFound(request->session_id());
  for (int action : request->actions()) {
    if (action >= 0 && action < s->action_space().size()) {
      const std::string& name = s->action_space().at(action).name;
      if (name == faults_.crash_action) std::abort();
      if (name == faults_.hang_action) {
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(3600));
      }
    }
    absl::Status status = s->Step(action);
    if (!status.ok()) return ToGrpc(status);
    reply->set_actions_applied(reply->actions_applied() + 1);
  }
  return Fill(*s, request->observe(), reply->mutable_observations());
}

grpc::Status SessionService::Observe(grpc::ServerContext*,
                                     const v1::ObserveRequest* request,
                                     v1::ObserveReply* reply) {
  std::lock_guard<std::mutex> lock(mu_);
  session::CompilationSession* s = Find(request->session_id());
  if (s == nullptr) return NotFound(request->session_id());
  return Fill(*s, request->observe(), reply->mutable_observations());
}

grpc::Status SessionService::Fork(grpc::ServerContext*,
                                  const v1::ForkRequest* request,
                                  v1::ForkReply* reply) {
  std::lock_guard<std::mutex> lock(mu_);
  session::CompilationSession* s = Find(request->session_id());
  if (s == nullptr) return NotFound(request->session_id());
  const int64_t id = next_id_++;
  sessions_[id] = s->Fork();
  reply->set_session_id(id);
  return grpc::Status::OK;
}

grpc::Status SessionService::EndSession(grpc::ServerContext*,
                                        const v1::EndSessionRequest* request,
                                        v1::EndSessionReply*) {
  std::lock_guard<std::mutex> lock(mu_);
  // Forks share their parent's context; the shared_ptr keeps it alive.
  if (sessions_.erase(request->session_id()) == 0) {
    return NotFound(request->session_id());
  }
  return grpc::Status::OK;
}

}  // namespace phaseloop::service
