// phaseloop-cc-opt: the launcher hands it compile-only C/C++ command lines
// (argv unchanged, argv[0] the launcher's name). Per source: the frontend
// (plain clang with LLVM passes disabled, writing bitcode and the user's
// dependency file), then policy, passes and codegen in a forked child with a
// time limit, then the object renamed into place. Any failure before every
// object is in place falls back to plain clang with the original argv,
// which rewrites every output; either way one decision record per source
// goes to the spool. LLVM is linked statically here: ~5 ms to start instead
// of ~20 ms with the shared library.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler_driver/cc_wrapper/argument_processing.h"
#include "compiler_driver/cc_wrapper/child_process.h"
#include "compiler_driver/cc_wrapper/clang_exec.h"
#include "compiler_driver/cc_wrapper/frontend.h"
#include "compiler_driver/cc_wrapper/policy.h"
#include "compiler_driver/cc_wrapper/response_file.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"
#include "compiler_driver/cc_wrapper/stage_trace.h"
#include "compiler_driver/cc_wrapper/tu_optimizer.h"
#include "compiler_driver/cc_wrapper/wrapper_config.h"
#include "proto/phaseloop/v1/decision.pb.h"

namespace phaseloop::cc_wrapper {
namespace {

using Clock = std::chrono::steady_clock;

std::string HostName() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "";
}

// First word of "reason: detail".
std::string ReasonOf(const std::string& message) {
  size_t colon = message.find(':');
  return colon == std::string::npos ? "optimizer_failed"
                                    : message.substr(0, colon);
}

class Optimizer {
 public:
  Optimizer(const char* argv0, std::vector<std::string> original)
      : start_(Clock::now()),
        kind_(DriverKindOf(argv0)),
        original_(std::move(original)),
        stripped_(StripPhaseloopFlags(original_)) {}

  int Run() {
    started_ = TakeStartedFrontend();
    std::string error;
    if (!LoadWrapperConfig(stripped_.policy, ProcessEnvironment(),
                           &config_, &error)) {
      return FailOpen("config_invalid", error, nullptr);
    }
    std::optional<std::vector<std::string>> expanded =
        ExpandResponseFiles(original_, &error);
    if (!expanded) return FailOpen("bad_response_file", error, nullptr);
    ProcessedArgs processed = ProcessArguments(original_, *expanded, kind_);
    const auto* compilation = std::get_if<Compilation>(&processed.result);
    if (compilation == nullptr) {
      return FailOpen("not_optimizable", "the launcher and optimizer disagree",
                      nullptr);
    }
    absl::StatusOr<std::unique_ptr<PolicyRunner>> policy =
        LoadPolicy(config_.policy);
    if (!policy.ok()) {
      return FailOpen("policy_unavailable",
                      std::string(policy.status().message()), nullptr);
    }
    codegen::CodegenSettings codegen;
    codegen.function_sections = compilation->codegen.function_sections;
    codegen.data_sections = compilation->codegen.data_sections;
    codegen.unique_section_names = compilation->codegen.unique_section_names;
    codegen.addrsig = compilation->codegen.addrsig;

    std::string diagnostics;  // the frontends' stderr, shown on success
    const std::string& clang =
        kind_ == DriverKind::kCxx ? config_.clangxx : config_.clang;
    for (size_t i = 0; i < compilation->jobs.size(); ++i) {
      const CompileJob& job = compilation->jobs[i];
      trace_.Mark("setup");
      // The launcher started the only job's frontend before exec'ing us.
      StartedFrontend started = i == 0 && started_.pid > 0
                                    ? started_
                                    : StartFrontend(clang, job.frontend_args);
      started_ = StartedFrontend();
      FrontendRun frontend = FinishFrontend(started, clang);
      trace_.Mark("frontend");
      if (!frontend.ok) {
        return FailOpen("frontend_failed", frontend.error, &job);
      }
      diagnostics += frontend.diagnostics;
      int status = OptimizeJob(job, compilation->opt_level, codegen, **policy,
                               frontend.bitcode);
      if (status != 0) return status;
    }
    std::fwrite(diagnostics.data(), 1, diagnostics.size(), stderr);
    WriteBatch();
    trace_.Mark("finish");
    return 0;
  }


 private:
  // Optimizes one job in a child; 0, or falls back (exec, does not return
  // unless exec failed).
  int OptimizeJob(const CompileJob& job, const std::string& opt_level,
                  const codegen::CodegenSettings& codegen,
                  const PolicyRunner& policy, const std::string& bitcode) {
    const std::string temp =
        absl::StrCat(job.object_path, ".phaseloop-", NewDecisionId().substr(0, 8));
    temps_.push_back(temp);
    auto job_start = Clock::now();
    ChildOutcome outcome = RunInChild(
        [&]() -> absl::StatusOr<std::string> {
          absl::StatusOr<TuResult> result =
              OptimizeTranslationUnit(bitcode, opt_level, codegen, policy);
          if (!result.ok()) return result.status();
          std::string error;
          if (!WriteNewFile(temp, result->object, &error)) {
            return absl::InternalError(absl::StrCat("write_failed: ", error));
          }
          v1::Decision d;
          d.set_module_hash(result->module_hash);
          for (int64_t v : result->autophase) d.add_autophase(v);
          d.set_pipeline(result->pipeline);
          d.set_ir_count_before(result->ir_count_before);
          d.set_ir_count_after(result->ir_count_after);
          d.set_text_size(result->text_size);
          d.set_policy_time_us(result->policy_time_us);
          return d.SerializeAsString();
        },
        config_.timeout_ms);
    if (outcome.kind != ChildOutcome::kOk) {
      return FailOpen(ReasonOf(outcome.message), outcome.message, &job);
    }
    v1::Decision* d = batch_.add_decisions();
    if (!d->ParseFromString(outcome.report)) {
      return FailOpen("optimizer_failed", "unreadable report", &job);
    }
    trace_.Mark("optimize");
    if (rename(temp.c_str(), job.object_path.c_str()) != 0) {
      return FailOpen("write_failed",
                      absl::StrCat("cannot rename to ", job.object_path), &job);
    }
    temps_.pop_back();
    Fill(d, Outcome::kOptimized, "", "", &job);
    d->set_opt_level(opt_level);
    d->set_policy_version(policy.version());
    d->set_optimize_time_us(MicrosSince(job_start));
    return 0;
  }

  void Fill(v1::Decision* d, Outcome outcome, const std::string& reason,
            const std::string& detail, const CompileJob* job) {
    d->set_decision_id(NewDecisionId());
    d->set_outcome(static_cast<v1::DecisionOutcome>(outcome));
    d->set_reason(reason);
    d->set_detail(detail.substr(0, 2000));
    if (job != nullptr) {
      d->set_source(job->source);
      d->set_object_path(job->object_path);
    }
    d->set_build_id(config_.build_id);
    d->set_unix_time_ms(UnixTimeMs());
    d->set_host(HostName());
  }

  void WriteBatch() {
    for (v1::Decision& d : *batch_.mutable_decisions()) {
      d.set_compile_time_us(MicrosSince(start_));
    }
    std::string error;
    WriteSpoolFile(config_.spool_dir, batch_.SerializeAsString(), &error);
  }

  // Records why, removes partial outputs, runs plain clang.
  int FailOpen(const std::string& reason, const std::string& detail,
               const CompileJob* job) {
    for (const std::string& temp : temps_) unlink(temp.c_str());
    if (started_.pid > 0) {  // a frontend the launcher started, unused
      kill(started_.pid, SIGKILL);
      (void)FinishFrontend(started_, "clang");
    }
    // Objects already renamed into place are rewritten by clang; their
    // records stay, marked as the fallback they became.
    for (v1::Decision& d : *batch_.mutable_decisions()) {
      d.set_outcome(v1::FAIL_OPEN);
      d.set_reason("sibling_failed");
    }
    Fill(batch_.add_decisions(), Outcome::kFailOpen, reason, detail, job);
    WriteBatch();
    if (std::getenv("PHASELOOP_VERBOSE") != nullptr) {
      std::fprintf(stderr, "phaseloop-cc: falling back to clang: %s: %s\n",
                   reason.c_str(), detail.c_str());
    }
    return ExecClang(config_, kind_, stripped_.args);
  }

  Clock::time_point start_;
  StageTrace trace_{start_};
  DriverKind kind_;
  std::vector<std::string> original_;
  StrippedArgs stripped_;  // clang_args: the fallback's command line
  WrapperConfig config_;
  v1::DecisionBatch batch_;
  std::vector<std::string> temps_;
  StartedFrontend started_;
};

}  // namespace
}  // namespace phaseloop::cc_wrapper

int main(int argc, char** argv) {
  phaseloop::cc_wrapper::Optimizer optimizer(
      argv[0], std::vector<std::string>(argv + 1, argv + argc));
  return optimizer.Run();
}
