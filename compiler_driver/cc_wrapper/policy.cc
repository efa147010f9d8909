#include "compiler_driver/cc_wrapper/policy.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/process/self_executable.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/passes/pipeline_check.h"
#include "compiler_driver/policy_runtime/artifact_policy.h"
#include "compiler_driver/policy_runtime/artifact_trust.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"

namespace phaseloop::cc_wrapper {
namespace {

namespace pr = policy_runtime;

// A learned policy artifact. Size policies apply at Oz, runtime policies at
// O2/O3; elsewhere, or when the artifact cannot decide (e.g. a stepwise
// policy without a pass runner), the baseline runs and the note says why.
// Not at Os: a size policy is trained and measured against -Oz, and topk
// never makes an object larger than -Oz's; at -Os it ran -Oz's pipeline on
// -Os's IR (even unmeasured), 11 of 138 real units came out larger than
// clang -Os (up to 7.8 %), and -Os's balance of speed and size is the
// user's choice, not the policy's (review, 2026-11-30).
class ArtifactPolicyRunner : public PolicyRunner {
 public:
  explicit ArtifactPolicyRunner(std::unique_ptr<pr::ArtifactPolicy> policy)
      : policy_(std::move(policy)) {}
  const char* kind() const override { return "artifact"; }
  const std::string& version() const override { return policy_->version(); }
  std::string OutcomeSpec() const override {
    const pr::InferenceOptions& o = policy_->options();
    if (o.mode != pr::InferenceMode::kTopK) return "";
    return absl::StrCat("artifact ", policy_->version(),
                        " mode=topk k=", policy_->top_k(),
                        " budget=", o.budget);
  }
  bool MayChoose(const std::string& pipeline) const override {
    return policy_->MayChoose(pipeline);
  }
  std::string Decide(const PolicyInput& input) const override {
    return DecideWithNote(input).pipeline;
  }
  PolicyDecision DecideWithNote(const PolicyInput& input) const override {
    const std::string& objective = policy_->artifact().objective();
    const bool size_level = input.opt_level == "Oz";
    const bool speed_level = input.opt_level == "O2" || input.opt_level == "O3";
    if (policy_->is_size_policy() ? !size_level : !speed_level) {
      return NotApplied(
          input, "not_applicable_at_level",
          absl::StrCat("a ", objective, " policy does not apply at -",
                       input.opt_level,
                       policy_->is_size_policy() ? " (size policies act at -Oz)"
                                                 : " (speed policies act at "
                                                   "-O2/-O3)"));
    }
    if (input.autophase == nullptr || input.inst_count == nullptr) {
      return NotApplied(input, "policy_needs_features",
                        "the policy needs Autophase and InstCount features");
    }
    if (!policy_->NeedsModule()) {
      pr::PolicyChoice choice =
          policy_->ChooseFromFeatures(*input.autophase, *input.inst_count);
      return {choice.pipeline, choice.note};
    }
    if (input.module == nullptr) {
      return NotApplied(input, "policy_needs_module",
                        "the policy needs the module");
    }
    absl::StatusOr<pr::PolicyChoice> choice =
        policy_->Choose(*input.module, *input.autophase, *input.inst_count,
                        {input.runner, input.emitter});
    if (!choice.ok()) {
      return NotApplied(
          input, "policy_failed",
          absl::StrCat("policy failed: ", choice.status().message()));
    }
    PolicyDecision decision{choice->pipeline, choice->note};
    // topk measured -Oz's whole object (a text_size policy compares
    // allocated bytes; an ir_count policy measures instructions).
    if (pr::IsObjectSizeObjective(policy_->artifact().objective())) {
      decision.oz_alloc_size = choice->oz_measured;
    }
    decision.measured_pipelines = std::move(choice->measured_pipelines);
    decision.object = std::move(choice->object);
    decision.object_ir_count = choice->object_ir_count;
    return decision;
  }

 private:
  static PolicyDecision NotApplied(const PolicyInput& input, const char* reason,
                                   const std::string& why) {
    PolicyDecision decision;
    decision.pipeline = BaselinePipeline(input.opt_level);
    decision.note = absl::StrCat("baseline: ", why);
    decision.not_applied = reason;
    return decision;
  }

  std::unique_ptr<pr::ArtifactPolicy> policy_;
};

// "mode=topk&k=4&budget=10000" -> options. budget_ms=M, the clock budget of
// earlier releases, is a deprecated alias read as M * 20 instructions.
absl::Status ParseArtifactQuery(absl::string_view query,
                                pr::InferenceOptions* options,
                                const std::string& spec) {
  for (absl::string_view item : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(
          "policy '", spec, "': ", why,
          "; use artifact:<file>?mode=single|topk&k=N&budget=INSTRUCTIONS"));
    };
    if (kv.first == "mode") {
      absl::StatusOr<pr::InferenceMode> mode =
          pr::ParseInferenceMode(kv.second);
      if (!mode.ok()) return bad(mode.status().message());
      options->mode = *mode;
    } else if (kv.first == "k") {
      if (!absl::SimpleAtoi(kv.second, &options->top_k) || options->top_k < 0) {
        return bad(
            absl::StrCat("k must be a number >= 0, got '", kv.second, "'"));
      }
    } else if (kv.first == "budget" || kv.first == "budget_ms") {
      int64_t value = 0;
      if (!absl::SimpleAtoi(kv.second, &value) || value < 0) {
        return bad(absl::StrCat(kv.first, " must be a number >= 0, got '",
                                kv.second, "'"));
      }
      options->budget =
          kv.first == "budget" ? value : value * pr::kBudgetInstructionsPerMs;
    } else {
      return bad(absl::StrCat("unknown option '", kv.first, "'"));
    }
  }
  return absl::OkStatus();
}

// `status` with `prefix` before its message, payloads kept (a refused
// pipeline stays recognisable: passes::IsRefusedPipeline).
absl::Status WithContext(const absl::Status& status, absl::string_view prefix,
                         const absl::Status& payloads_of) {
  absl::Status out(status.code(), absl::StrCat(prefix, status.message()));
  payloads_of.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) {
        out.SetPayload(url, payload);
      });
  return out;
}
absl::Status WithContext(const absl::Status& status, absl::string_view prefix) {
  return WithContext(status, prefix, status);
}

absl::StatusOr<std::unique_ptr<PolicyRunner>> FromArtifactBytes(
    const std::string& bytes, const std::string& path,
    const pr::InferenceOptions& options, const LoadPolicyOptions& load) {
  // Who made it, before anything else is made of it.
  if (absl::Status trusted =
          pr::CheckArtifactTrust(bytes, path, load.trust_file);
      !trusted.ok()) {
    return trusted;
  }
  absl::StatusOr<v1::PolicyArtifact> artifact =
      pr::ParsePolicyArtifactFile(bytes, path);
  if (!artifact.ok()) return artifact.status();
  absl::StatusOr<std::unique_ptr<pr::ArtifactPolicy>> policy =
      pr::ArtifactPolicy::Create(*std::move(artifact), options);
  if (!policy.ok()) {
    return WithContext(absl::InvalidArgumentError(policy.status().message()),
                       absl::StrCat("policy artifact ", path, ": "),
                       policy.status());
  }
  return std::unique_ptr<PolicyRunner>(
      new ArtifactPolicyRunner(std::move(*policy)));
}

class BaselinePolicy : public PolicyRunner {
 public:
  const char* kind() const override { return "baseline"; }
  const std::string& version() const override { return version_; }
  std::string Decide(const PolicyInput& input) const override {
    return BaselinePipeline(input.opt_level);
  }

 private:
  std::string version_ = "baseline";
};

class FixedPolicy : public PolicyRunner {
 public:
  explicit FixedPolicy(std::string pipeline)
      : pipeline_(std::move(pipeline)),
        version_(ir::ContentHash("fixed:" + pipeline_)) {}
  const char* kind() const override { return "fixed"; }
  const std::string& version() const override { return version_; }
  std::string Decide(const PolicyInput&) const override { return pipeline_; }

 private:
  std::string pipeline_;
  std::string version_;
};

class TablePolicy : public PolicyRunner {
 public:
  TablePolicy(std::unordered_map<std::string, std::string> rows,
              std::string version)
      : rows_(std::move(rows)), version_(std::move(version)) {}
  const char* kind() const override { return "table"; }
  const std::string& version() const override { return version_; }
  std::string Decide(const PolicyInput& input) const override {
    return DecideWithNote(input).pipeline;
  }
  PolicyDecision DecideWithNote(const PolicyInput& input) const override {
    auto it = rows_.find(input.module_hash);
    if (it != rows_.end()) return {it->second, ""};
    PolicyDecision decision;
    decision.pipeline = BaselinePipeline(input.opt_level);
    decision.note = "baseline: the module is not in the table";
    decision.not_applied = "module_not_in_table";
    return decision;
  }

 private:
  std::unordered_map<std::string, std::string> rows_;
  std::string version_;
};

bool IsHash(absl::string_view text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::string_view TrimView(absl::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// A policy's pipeline: a well-formed codegen<...> element, and an IR part
// that holds only what a policy may run (passes/pipeline_check.h).
absl::Status CheckPipeline(absl::string_view pipeline) {
  return passes::CheckWholePolicyPipeline(pipeline);
}

absl::StatusOr<std::unique_ptr<PolicyRunner>> ParseTable(
    const std::string& bytes, const std::string& path) {
  std::unordered_map<std::string, std::string> rows;
  std::istringstream in(bytes);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    absl::string_view text = TrimView(line);
    if (text.empty() || text.front() == '#') continue;
    size_t tab = text.find('\t');
    absl::string_view hash =
        tab == absl::string_view::npos ? text : TrimView(text.substr(0, tab));
    absl::string_view pipeline = tab == absl::string_view::npos
                                     ? absl::string_view()
                                     : TrimView(text.substr(tab + 1));
    if (!IsHash(hash) || pipeline.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "policy table '", path, "' line ", number,
          ": expected '<module_hash: 32 hex digits><TAB><pipeline>', got '",
          text.substr(0, 80), "'"));
    }
    if (absl::Status checked = CheckPipeline(pipeline); !checked.ok()) {
      return WithContext(checked, absl::StrCat("policy table '", path,
                                               "' line ", number, ": "));
    }
    rows[std::string(hash)] = std::string(pipeline);
  }
  return std::unique_ptr<PolicyRunner>(
      new TablePolicy(std::move(rows), ir::ContentHash(bytes)));
}

absl::StatusOr<std::unique_ptr<PolicyRunner>> FromSpecLine(
    absl::string_view spec, const std::string& origin) {
  if (spec == "baseline") {
    return std::unique_ptr<PolicyRunner>(new BaselinePolicy());
  }
  if (absl::ConsumePrefix(&spec, "fixed:")) {
    absl::string_view pipeline = TrimView(spec);
    if (pipeline.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          origin, ": 'fixed:' needs a pipeline, e.g. fixed:default<Oz>"));
    }
    if (absl::Status checked = CheckPipeline(pipeline); !checked.ok()) {
      return WithContext(checked, absl::StrCat(origin, ": "));
    }
    return std::unique_ptr<PolicyRunner>(
        new FixedPolicy(std::string(pipeline)));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      origin, ": unknown policy '", spec.substr(0, 80),
      "' (expected baseline, fixed:<pipeline>, table:<file> or a policy "
      "file)"));
}

absl::StatusOr<std::unique_ptr<PolicyRunner>> LoadArtifactSpec(
    absl::string_view text, const std::string& spec,
    const std::string& relative_to, const LoadPolicyOptions& load);

absl::StatusOr<std::unique_ptr<PolicyRunner>> FromFile(
    const std::string& path, const LoadPolicyOptions& load) {
  absl::StatusOr<std::string> bytes = ir::ReadFile(path);
  if (!bytes.ok()) {
    return absl::NotFoundError(absl::StrCat(
        "cannot read the policy file '", path, "': ", bytes.status().message(),
        "; pass an existing file or a built-in policy (baseline, "
        "fixed:<pipeline>)"));
  }
  if (pr::LooksLikePolicyArtifactFile(*bytes)) {
    return FromArtifactBytes(*bytes, path, pr::InferenceOptions(), load);
  }
  if (absl::StartsWith(*bytes, "# phaseloop policy table")) {
    absl::string_view first(*bytes);
    first = first.substr(0, first.find('\n'));
    if (TrimView(first) != kTableHeader) {
      return absl::FailedPreconditionError(
          absl::StrCat("policy file '", path, "' has format '", TrimView(first),
                       "'; this phaseloop reads '", kTableHeader,
                       "' — regenerate the table with this version"));
    }
    return ParseTable(*bytes, path);
  }
  // One spec line, comments and blank lines aside.
  std::string spec;
  std::istringstream in(*bytes);
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view text = TrimView(line);
    if (text.empty() || text.front() == '#') continue;
    if (!spec.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "policy file '", path,
          "' holds more than one policy line; it "
          "must hold one (baseline, fixed:<pipeline> or artifact:<file>) or "
          "be a table "
          "starting with '",
          kTableHeader, "'"));
    }
    spec = std::string(text);
  }
  if (spec.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("policy file '", path,
                     "' is empty; write a policy line such as "
                     "'baseline' into it"));
  }
  if (absl::StartsWith(spec, "table:")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "policy file '", path, "' refers to another file (", spec,
        "); put the table itself in the policy file so that build systems "
        "see its content"));
  }
  if (absl::string_view text = spec; absl::ConsumePrefix(&text, "artifact:")) {
    // The artifact's path is relative to the policy file (a Bazel toolchain
    // package keeps both, and declares both as compile inputs).
    return LoadArtifactSpec(
        text, absl::StrCat(spec, " (in policy file '", path, "')"),
        std::filesystem::path(path).parent_path().string(), load);
  }
  return FromSpecLine(spec, absl::StrCat("policy file '", path, "'"));
}

// `text`: what follows "artifact:" — <file>[?query]. A relative <file> is
// taken relative to `relative_to` when that is not empty.
absl::StatusOr<std::unique_ptr<PolicyRunner>> LoadArtifactSpec(
    absl::string_view text, const std::string& spec,
    const std::string& relative_to, const LoadPolicyOptions& load) {
  const size_t question = text.find('?');
  std::string path(TrimView(text.substr(0, question)));
  if (!relative_to.empty() && !path.empty() && path.front() != '/') {
    path = (std::filesystem::path(relative_to) / path).string();
  }
  pr::InferenceOptions options;
  if (question != absl::string_view::npos) {
    absl::Status parsed =
        ParseArtifactQuery(text.substr(question + 1), &options, spec);
    if (!parsed.ok()) return parsed;
  }
  absl::StatusOr<std::string> bytes = ir::ReadFile(path);
  if (!bytes.ok()) {
    return absl::NotFoundError(
        absl::StrCat("cannot read the policy artifact '", path, "' of ", spec,
                     ": ", bytes.status().message(),
                     "; pull it with phaseloop policy pull or fix the path"));
  }
  return FromArtifactBytes(*bytes, path, options, load);
}

}  // namespace

std::string BaselinePipeline(const std::string& opt_level) {
  return absl::StrCat("default<", opt_level, ">");
}

absl::StatusOr<std::unique_ptr<PolicyRunner>> LoadPolicy(
    const std::string& spec, const LoadPolicyOptions& options) {
  absl::string_view text = TrimView(spec);
  if (text == "baseline" || absl::StartsWith(text, "fixed:")) {
    return FromSpecLine(text, "policy");
  }
  if (absl::ConsumePrefix(&text, "table:")) {
    std::string path(TrimView(text));
    absl::StatusOr<std::string> bytes = ir::ReadFile(path);
    if (!bytes.ok()) {
      return absl::NotFoundError(absl::StrCat("cannot read the policy table '",
                                              path,
                                              "': ", bytes.status().message()));
    }
    return ParseTable(*bytes, path);
  }
  if (absl::ConsumePrefix(&text, "artifact:")) {
    return LoadArtifactSpec(text, spec, "", options);
  }
  if (text.empty()) {
    return absl::InvalidArgumentError(
        "empty policy; use baseline, fixed:<pipeline>, table:<file>, "
        "artifact:<file> or a policy file");
  }
  return FromFile(std::string(text), options);
}

std::string FindDefaultPolicy(const std::string& exe_dir) {
  namespace fs = std::filesystem;
  fs::path dir = exe_dir;
  if (dir.empty()) {
    const fs::path exe = process::SelfExecutable();
    if (exe.empty()) return "";
    dir = exe.parent_path();
  }
  for (const fs::path& candidate :
       {dir / ".." / "share" / "phaseloop" / "policies" / "default.plpolicy",
        dir / ".." / "configs" / "policies" / "default.plpolicy",
        dir / "configs" / "policies" / "default.plpolicy"}) {
    std::error_code error;
    if (fs::is_regular_file(candidate, error)) {
      return candidate.lexically_normal().string();
    }
  }
  return "";
}

}  // namespace phaseloop::cc_wrapper
