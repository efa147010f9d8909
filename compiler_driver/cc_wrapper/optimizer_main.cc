// phaseloop-cc-opt: the launcher hands it compile-only C/C++ command lines
// (argv unchanged, argv[0] the launcher's name). An input that does not
// exist runs plain clang at once (clang then compiles nothing). Per source,
// in a forked child with a time limit: clang's frontend in process (LLVM
// passes disabled; it writes the dependency file to a temporary name),
// policy, passes and codegen to a temporary object. Once every source has
// succeeded, the objects and then the dependency files are renamed into
// place and the frontend's diagnostics shown. Any failure before that falls
// back to plain clang with the original argv, with none of the wrapper's
// files left behind, so clang alone decides which outputs exist (and shows
// its own diagnostics); either way one decision record per source goes to
// the spool. clang and LLVM are linked statically here: a compile
// is one process that starts in ~1 ms, where the clang binary spends ~10 ms
// relocating its shared libraries.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/process/child_process.h"
#include "common/protobuf/protobuf_logs.h"
#include "common/protobuf/utf8_strings.h"
#include "common/signing/signature.h"
#include "compiler_driver/cc_wrapper/argument_processing.h"
#include "compiler_driver/cc_wrapper/clang_exec.h"
#include "compiler_driver/cc_wrapper/in_process_frontend.h"
#include "compiler_driver/cc_wrapper/interrupt_cleanup.h"
#include "compiler_driver/cc_wrapper/new_file.h"
#include "compiler_driver/cc_wrapper/object_cache.h"
#include "compiler_driver/cc_wrapper/outcome_cache.h"
#include "compiler_driver/cc_wrapper/policy.h"
#include "compiler_driver/cc_wrapper/response_file.h"
#include "compiler_driver/cc_wrapper/spool_space.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"
#include "compiler_driver/cc_wrapper/stage_trace.h"
#include "compiler_driver/cc_wrapper/stderr_capture.h"
#include "compiler_driver/cc_wrapper/tu_optimizer.h"
#include "compiler_driver/cc_wrapper/wrapper_config.h"
#include "compiler_driver/ir/collected_diagnostics.h"
#include "compiler_driver/passes/pipeline_check.h"
#include "compiler_driver/policy_runtime/topk_defaults.h"
#include "llvm/IR/LLVMContext.h"
#include "proto/phaseloop/v1/decision.pb.h"

namespace phaseloop::cc_wrapper {
namespace {

using Clock = std::chrono::steady_clock;

std::string HostName() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "";
}

// The child's report: the diagnostics (driver before / job / after, then
// the frontend's), each length-prefixed, then the decision.
struct JobDiagnostics {
  std::string driver_before, driver_job, driver_after, frontend;
};
std::string EncodeReport(const JobDiagnostics& d, const std::string& decision) {
  std::string out;
  for (const std::string* field :
       {&d.driver_before, &d.driver_job, &d.driver_after, &d.frontend}) {
    absl::StrAppend(&out, field->size(), ":", *field);
  }
  return out + decision;
}
// Takes one length-prefixed field off the front of `report`.
bool TakeField(std::string* report, std::string* field) {
  size_t colon = report->find(':');
  if (colon == std::string::npos || colon == 0 || colon > 12) return false;
  size_t length = std::strtoull(report->substr(0, colon).c_str(), nullptr, 10);
  if (report->size() - colon - 1 < length) return false;
  *field = report->substr(colon + 1, length);
  report->erase(0, colon + 1 + length);
  return true;
}
bool DecodeReport(std::string report, JobDiagnostics* d,
                  std::string* decision) {
  for (std::string* field :
       {&d->driver_before, &d->driver_job, &d->driver_after, &d->frontend}) {
    if (!TakeField(&report, field)) return false;
  }
  *decision = std::move(report);
  return true;
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
        stripped_(StripPhaseloopFlags(original_)),
        fallback_args_(FallbackClangArgs(original_)) {}

  int Run() {
    std::string error;
    if (!LoadWrapperConfig(stripped_.policy, ProcessEnvironment(), &config_,
                           &error)) {
      return FailOpen("config_invalid", error, nullptr);
    }
    std::optional<std::vector<std::string>> expanded =
        ExpandResponseFiles(original_, &error);
    if (!expanded) return FailOpen("bad_response_file", error, nullptr);
    ProcessedArgs processed = ProcessArguments(original_, *expanded, kind_);
    // A policy flag read from a response file is the command line's too
    // (the config above saw only the flags outside @files).
    if (!processed.phaseloop.policy.empty() &&
        processed.phaseloop.policy != stripped_.policy) {
      config_.policy = processed.phaseloop.policy;
      config_.policy_given = true;
    }
    const auto* compilation = std::get_if<Compilation>(&processed.result);
    if (compilation == nullptr) {
      return FailOpen("not_optimizable", "the launcher and optimizer disagree",
                      nullptr);
    }
    // clang checks every input before it runs any job: one missing, it
    // compiles nothing (not even the sources that exist) and writes no
    // object or dependency file.
    for (const CompileJob& job : compilation->jobs) {
      struct stat info;
      if (stat(job.source.c_str(), &info) != 0) {
        return FailOpen("missing_input", job.source, &job);
      }
    }
    // No policy given anywhere: the product's default policy, if shipped,
    // in topk mode, so that by default no object is larger than -Oz's.
    if (!config_.policy_given) {
      if (std::string shipped = FindDefaultPolicy(); !shipped.empty()) {
        config_.policy = absl::StrCat("artifact:", shipped,
                                      policy_runtime::DefaultTopKQuery());
      }
    }
    absl::StatusOr<std::unique_ptr<PolicyRunner>> policy =
        LoadPolicy(config_.policy, {config_.trust_file});
    if (!policy.ok()) {
      // A pipeline a policy may not run (passes/pipeline_check.h) and an
      // artifact the trust file does not accept (unsigned or untrusted,
      // policy_runtime/artifact_trust.h) are counted apart from a policy
      // that could not be read.
      std::string reason = signing::SignatureRefusalReason(policy.status());
      if (reason.empty()) {
        reason = passes::IsRefusedPipeline(policy.status())
                     ? "policy_refused"
                     : "policy_unavailable";
      }
      return FailOpen(reason, std::string(policy.status().message()), nullptr);
    }
    codegen::CodegenSettings codegen;
    codegen.function_sections = compilation->codegen.function_sections;
    codegen.data_sections = compilation->codegen.data_sections;
    codegen.unique_section_names = compilation->codegen.unique_section_names;
    codegen.addrsig = compilation->codegen.addrsig;
    codegen.split_machine_functions =
        compilation->codegen.split_machine_functions;
    // The lab's object cache (object_cache.h), when asked for.
    if (const char* dir = std::getenv(kObjectCacheEnv); dir && *dir) {
      object_cache_.emplace(ObjectCache::ForRunningBinary(dir));
    }
    // topk's outcome cache (outcome_cache.h; on unless turned off): a
    // policy that measures candidates is consulted through it. Others
    // never touch it (no identity to compute, nothing to store).
    const PolicyRunner* runner = policy->get();
    std::optional<OutcomeCachingPolicy> caching;
    if (const std::string dir = OutcomeCacheDirFromEnv();
        !dir.empty() && !(*policy)->OutcomeSpec().empty()) {
      outcome_cache_.emplace(
          OutcomeCache::ForRunningBinary(dir, OutcomeCacheMaxBytesFromEnv()));
      caching.emplace(**policy, *outcome_cache_, codegen);
      runner = &*caching;
      caching_ = &*caching;
    }

    // Shown once all succeeded, in clang's order for the whole command
    // line: the driver's once-per-command-line warnings before its jobs
    // (the first source's run), each job's own, the once-per-command-line
    // warnings after them, then each source's frontend diagnostics.
    std::vector<JobDiagnostics> shown;
    for (const CompileJob& job : compilation->jobs) {
      trace_.Mark("setup");
      shown.emplace_back();
      int status = OptimizeJob(job, compilation->opt_level, codegen,
                               compilation->lto, *runner, &shown.back());
      if (status != 0) return status;
    }
    // Objects first: a dependency file names an object that exists.
    for (std::vector<Staged>* staged : {&objects_, &dependencies_}) {
      for (Staged& file : *staged) {
        if (rename(file.temp.c_str(), file.target.c_str()) != 0) {
          return FailOpen("write_failed",
                          absl::StrCat("cannot rename to ", file.target),
                          file.job);
        }
        ForgetForInterruptCleanup(file.temp);
        file.temp.clear();
      }
    }
    std::string text = shown.empty() ? "" : shown.front().driver_before;
    for (const JobDiagnostics& d : shown) text += d.driver_job;
    if (!shown.empty()) text += shown.front().driver_after;
    for (const JobDiagnostics& d : shown) text += d.frontend;
    std::fwrite(text.data(), 1, text.size(), stderr);
    WriteBatch();
    trace_.Mark("finish");
    return 0;
  }

 private:
  // A file of the wrapper's under a temporary name, renamed to `target`
  // once every job succeeded; `temp` is cleared once renamed.
  struct Staged {
    std::string temp, target;
    const CompileJob* job;
  };

  // Compiles one job in a child to a staged object (and dependency file);
  // 0, or falls back (exec, does not return unless exec failed).
  int OptimizeJob(const CompileJob& job, const std::string& opt_level,
                  const codegen::CodegenSettings& codegen, LtoMode lto,
                  const PolicyRunner& policy, JobDiagnostics* diagnostics) {
    const std::string suffix =
        absl::StrCat(".phaseloop-", NewDecisionId().substr(0, 8));
    const std::string temp = job.object_path + suffix;
    objects_.push_back({temp, job.object_path, &job});
    StageForInterruptCleanup(temp);
    std::vector<std::string> frontend_args = job.frontend_args;
    if (!job.dependency_file.empty()) {
      dependencies_.push_back(
          {job.dependency_file + suffix, job.dependency_file, &job});
      StageForInterruptCleanup(dependencies_.back().temp);
      for (std::string& arg : frontend_args) {
        if (arg == kDependencyPlaceholder) arg = dependencies_.back().temp;
      }
    }
    auto job_start = Clock::now();
    const std::string& clang =
        kind_ == DriverKind::kCxx ? config_.clangxx : config_.clang;
    // Clang's driver colours and wraps diagnostics for the stderr it finds;
    // the child's is a capture file, so it is described first.
    const StderrTerminal terminal = StderrTerminal::Now();
    process::ChildOutcome outcome = process::RunInChild(
        [&]() -> absl::StatusOr<std::string> {
          // What LLVM prints by itself goes to a file (stderr_capture.h).
          StderrCapture backend_output;
          if (!backend_output.active()) {
            return absl::FailedPreconditionError(
                "backend_diagnostics: stderr cannot be captured (no memfd "
                "or temporary file), so what LLVM might print could not be "
                "left to clang");
          }
          // Outlives the module (OptimizeModule destroys it).
          llvm::LLVMContext context;
          StageTrace trace;
          InProcessFrontendRun frontend =
              RunFrontendInProcess(clang, kind_ == DriverKind::kCxx,
                                   frontend_args, context, terminal);
          trace.Mark("frontend");
          if (frontend.module == nullptr) {
            return absl::InvalidArgumentError(frontend.error);
          }
          std::string module_hash = FrontendModuleHash(*frontend.module);
          trace.Mark("hash");
          // The CPU and features clang's own backend would be given.
          codegen::CodegenSettings job_codegen = codegen;
          job_codegen.target_cpu = frontend.target_cpu;
          job_codegen.target_features = frontend.target_features;
          // An error LLVM reports in the backend (invalid inline asm, a
          // call to an `error` function) is the program's, not a crash:
          // without a handler LLVM exits 1 and it read as
          // optimizer_crashed. Warnings are printed as without it, but
          // for those clang would not show (-w, -Wno-pass-failed, ...),
          // which would send the compile to clang for nothing.
          ir::CollectedDiagnostics backend_errors(
              context, ir::CollectedDiagnostics::Others::kPrint,
              &frontend.shown_warnings);
          absl::StatusOr<TuResult> result =
              OptimizeModule(std::move(frontend.module), module_hash, opt_level,
                             job_codegen, policy, config_.count_executed,
                             object_cache_ ? &*object_cache_ : nullptr, lto);
          if (backend_errors.errors() > 0) {
            return absl::FailedPreconditionError(absl::StrCat(
                "backend_failed: LLVM reported an error clang would report "
                "its own way: ",
                backend_errors.messages().substr(0, 300)));
          }
          if (!result.ok()) return result.status();
          if (const std::string printed = backend_output.Captured();
              !printed.empty()) {
            return absl::FailedPreconditionError(absl::StrCat(
                "backend_diagnostics: LLVM printed a diagnostic clang would "
                "report its own way: ",
                printed.substr(0, printed.find('\n'))));
          }
          std::string error;
          if (!WriteNewFile(temp, result->object, &error)) {
            return absl::InternalError(absl::StrCat("write_failed: ", error));
          }
          // Nothing made this compile fall back: topk's choice may be kept
          // (a choice stored before a fallback was a hit next time that
          // printed nothing and wrote another object).
          std::string policy_note = result->policy_note;
          if (caching_ != nullptr) {
            if (const std::string stored = caching_->StorePending();
                !stored.empty()) {
              absl::StrAppend(&policy_note, "; ", stored);
            }
          }
          v1::Decision d;
          d.set_module_hash(result->module_hash);
          for (int64_t v : result->autophase) d.add_autophase(v);
          for (int64_t v : result->inst_count) d.add_inst_count(v);
          d.set_pipeline(result->pipeline);
          d.set_detail(result->object_cache_note.empty()
                           ? policy_note
                           : absl::StrCat(policy_note,
                                          policy_note.empty() ? "" : "; ",
                                          result->object_cache_note));
          d.set_object_cache(result->object_cache);
          d.set_outcome_cache(result->outcome_cache);
          d.set_ir_count_before(result->ir_count_before);
          d.set_ir_count_after(result->ir_count_after);
          d.set_text_size(result->text_size);
          if (result->alloc_size >= 0) d.set_alloc_size(result->alloc_size);
          if (result->oz_alloc_size >= 0) {
            d.set_oz_alloc_size(result->oz_alloc_size);
          }
          for (const auto& [pipeline, value] : result->measured_pipelines) {
            v1::MeasuredPipeline* m = d.add_topk_measured();
            m->set_pipeline(pipeline);
            m->set_value(value);
          }
          d.set_reason(result->not_applied);
          d.set_policy_time_us(result->policy_time_us);
          return EncodeReport(
              {frontend.driver_diagnostics_before, frontend.driver_diagnostics,
               frontend.driver_diagnostics_after, frontend.diagnostics},
              protobuf::SerializeAsValidUtf8(d));
        },
        config_.timeout_ms);
    if (outcome.kind != process::ChildOutcome::kOk) {
      return FailOpen(ReasonOf(outcome.message), outcome.message, &job);
    }
    JobDiagnostics job_diagnostics;
    std::string decision;
    v1::Decision* d = batch_.add_decisions();
    if (!DecodeReport(outcome.report, &job_diagnostics, &decision) ||
        !d->ParseFromString(decision)) {
      return FailOpen("optimizer_failed", "unreadable report", &job);
    }
    trace_.Mark("optimize");
    *diagnostics = std::move(job_diagnostics);
    // The policy's own choice ran, or (reason set) the baseline did.
    const std::string not_applied = d->reason();
    Fill(d,
         not_applied.empty() ? Outcome::kOptimized : Outcome::kPolicyNotApplied,
         not_applied, std::string(d->detail()), &job);
    d->set_opt_level(opt_level);
    if (lto != LtoMode::kNone) d->set_lto(LtoModeName(lto));
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
    // Paths and diagnostics need not be UTF-8: made valid (\xNN), or the
    // record could be written but never read.
    protobuf::MakeStringsValidUtf8(&batch_);
    if (!WriteSpoolFile(config_.spool_dir, batch_.SerializeAsString(), &error,
                        {batch_.decisions_size(), config_.spool_max_size}) &&
        Verbose()) {
      // Counted in the spool (phaseloop stats) where it can be; said here.
      std::fprintf(stderr, "phaseloop-cc: decision records not logged: %s\n",
                   error.c_str());
    }
  }

  // Records why, removes the staged files, runs plain clang.
  int FailOpen(const std::string& reason, const std::string& detail,
               const CompileJob* job) {
    for (const std::vector<Staged>* staged : {&objects_, &dependencies_}) {
      for (const Staged& file : *staged) {
        if (file.temp.empty()) continue;
        unlink(file.temp.c_str());
        ForgetForInterruptCleanup(file.temp);
      }
    }
    // Files already renamed into place (only when a later rename failed)
    // are rewritten by clang; the records stay, marked as the fallback they
    // became.
    for (v1::Decision& d : *batch_.mutable_decisions()) {
      d.set_outcome(v1::FAIL_OPEN);
      d.set_reason("sibling_failed");
    }
    Fill(batch_.add_decisions(), Outcome::kFailOpen, reason, detail, job);
    WriteBatch();
    if (Verbose()) {
      // A child's message already starts with its reason.
      const bool prefixed = absl::StartsWith(detail, reason + ":");
      std::fprintf(stderr, "phaseloop-cc: falling back to clang: %s%s%s\n",
                   prefixed ? "" : reason.c_str(), prefixed ? "" : ": ",
                   detail.c_str());
    }
    return ExecClang(config_, kind_, fallback_args_);
  }

  Clock::time_point start_;
  StageTrace trace_{start_};
  DriverKind kind_;
  std::vector<std::string> original_;
  StrippedArgs stripped_;  // the policy flag given on the command line
  // The fallback's command line (FallbackClangArgs: expanded when a
  // response file holds a --phaseloop-* flag).
  std::vector<std::string> fallback_args_;
  WrapperConfig config_;
  v1::DecisionBatch batch_;
  std::vector<Staged> objects_, dependencies_;
  std::optional<ObjectCache> object_cache_;
  std::optional<OutcomeCache> outcome_cache_;
  // The outcome cache's policy, when topk consults it: its choice is stored
  // by the child once the compile writes its object.
  const OutcomeCachingPolicy* caching_ = nullptr;
};

}  // namespace
}  // namespace phaseloop::cc_wrapper

int main(int argc, char** argv) {
  // Its stderr is the compile's: libprotobuf's own lines stay off it.
  phaseloop::protobuf::DropProtobufLogs();
  // Before any child is forked: an interrupted compile leaves no child
  // running and none of the wrapper's files behind (interrupt_cleanup.h).
  phaseloop::cc_wrapper::InstallInterruptCleanup();
  phaseloop::cc_wrapper::Optimizer optimizer(
      argv[0], std::vector<std::string>(argv + 1, argv + argc));
  return optimizer.Run();
}
