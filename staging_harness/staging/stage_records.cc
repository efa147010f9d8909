// What a staging result leaves in the replay buffer (RecordsOf), and the
// decisions that show the wrapper could not use a policy (PolicyFallback)
// or never had the program in its hands (WrapperNotReached).
#include <algorithm>
#include <chrono>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler_driver/ir/module_hash.h"
#include "staging_harness/staging/build_probes.h"
#include "staging_harness/staging/stage_workload.h"  // declares both

namespace phaseloop::staging {

const v1::Decision* PolicyFallback(const runner::BuiltVariant& built) {
  for (const v1::Decision& d : built.decisions) {
    if (d.outcome() == v1::FAIL_OPEN &&
        absl::StartsWith(d.reason(), "policy_")) {
      return &d;
    }
  }
  return nullptr;
}

std::string WrapperNotReached(const runner::BuiltVariant& built,
                              const std::string& opt_level) {
  const std::string pass_compilers =
      "let the build take the compilers and flags staging sets (e.g. `make "
      "CC=\"$CC\" CXX=\"$CXX\" CFLAGS=\"$CFLAGS\" CXXFLAGS=\"$CXXFLAGS\"`; "
      "staging_harness/workloads/README.md)";
  if (built.decisions.empty()) {
    return absl::StrCat(
        "the build ran no compiler command through phaseloop-cc (its spool "
        "holds no record): its build system does not use $CC/$CXX (a "
        "Makefile that sets CC itself, or calls gcc by name?); ",
        pass_compilers);
  }
  // A policy the wrapper could not use is the policy's fault, named as
  // such by PolicyFallback.
  if (PolicyFallback(built) != nullptr) return "";
  std::map<std::string, int> others;  // why units were not compiled in process
  std::map<std::string, int> levels;  // of the units compiled in process
  int probes = 0;  // configure's probes and queries: not the program
  for (const v1::Decision& d : built.decisions) {
    if (d.outcome() == v1::DISABLED ||
        (d.outcome() == v1::FAIL_OPEN && (d.reason() == "config_invalid" ||
                                          d.reason() == "optimizer_missing"))) {
      return absl::StrCat(
          "phaseloop-cc compiled ",
          d.source().empty() ? std::string("its units") : d.source(),
          " with plain clang (", v1::DecisionOutcome_Name(d.outcome()), " ",
          d.reason(), d.detail().empty() ? "" : ": ", d.detail(),
          "): fix the wrapper's setup (PHASELOOP_DISABLE or PHASELOOP_CONFIG "
          "in the environment, the wrapper's config file, an installation "
          "without phaseloop-cc-opt)");
    }
    if (IsProbeOrQuery(d)) {
      ++probes;
    } else if (d.outcome() == v1::OPTIMIZED ||
               d.outcome() == v1::POLICY_NOT_APPLIED) {
      ++levels[d.opt_level().empty() ? "O0" : d.opt_level()];
    } else {
      ++others[absl::StrCat(v1::DecisionOutcome_Name(d.outcome()), " ",
                            d.reason())];
    }
  }
  auto list = [](const std::map<std::string, int>& counts) {
    std::string text;
    for (const auto& [what, n] : counts) {
      absl::StrAppend(&text, text.empty() ? "" : ", ", what, " ", n);
    }
    return text;
  };
  // "; N configure probe(s) ... not counted" after `what` ("" without).
  auto with_probes = [&](const std::string& what) {
    if (probes == 0) return what;
    return absl::StrCat(what, what.empty() ? "" : "; ", probes,
                        " configure probe(s) and compiler queries (conftest.c, "
                        "CMake's try_compile, --version) not counted");
  };
  if (static_cast<size_t>(probes) == built.decisions.size()) {
    return absl::StrCat(
        "the build ran only its configure probes and queries through "
        "phaseloop-cc (",
        probes,
        " commands: conftest.c, CMake's try_compile, --version), none of the "
        "program's: "
        "its Makefile does not use $CC/$CXX (sets CC itself, or calls gcc "
        "by name?); ",
        pass_compilers);
  }
  if (levels.empty()) {
    // One-step compile-and-link is the usual cause; name it only when it is.
    const bool one_step = std::all_of(
        built.decisions.begin(), built.decisions.end(),
        [](const v1::Decision& d) {
          return IsProbeOrQuery(d) || (d.outcome() == v1::PASS_THROUGH &&
                                       d.reason() == "not_compile_only");
        });
    return absl::StrCat(
        "phaseloop-cc compiled none of the build's ",
        built.decisions.size() - probes, " compiler commands itself (",
        with_probes(list(others)), "), so no policy could act",
        one_step
            ? ": it optimises commands that compile without linking (-c); a "
              "build that compiles and links in one command (make's built-in "
              "`prog: prog.c` rule) gets plain clang. Compile with -c and "
              "link apart"
            : "; each reason is the wrapper's for leaving a command to clang "
              "(compiler_driver/README.md): `phaseloop decisions show "
              "--spool` on the build's spool shows every command");
  }
  if (!opt_level.empty() && levels.count(opt_level) == 0) {
    return absl::StrCat(
        "the build compiled at ", list(levels), " (",
        with_probes("level and units"), "), none at -", opt_level,
        " as asked: its build system sets the level itself (CFLAGS = -O2 "
        "in a Makefile?); ",
        pass_compilers);
  }
  return "";
}

StageRecords RecordsOf(const StageResult& result) {
  StageRecords records;
  if (result.bolt) return records;
  const runner::BuiltVariant& candidate = result.candidate;
  std::string policy_version;
  for (const v1::Decision& d : candidate.decisions) {
    if (!d.policy_version().empty()) {
      policy_version = d.policy_version();
      break;
    }
  }
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  // Undefined behaviour UBSan showed is kept as the program's (verdict
  // undefined_behaviour: it blocks nothing), though the workload is
  // unusable.
  if (result.verdict == Verdict::kMiscompile ||
      result.verdict == Verdict::kTimedOut ||
      (result.verdict == Verdict::kUnusable &&
       result.cause == "undefined_behaviour")) {
    v1::Miscompile miscompile;
    miscompile.set_miscompile_id(ir::ContentHash(absl::StrCat(
        "miscompile\n", result.workload, "\n", candidate.build_id)));
    miscompile.set_workload(result.workload);
    miscompile.set_build_id(candidate.build_id);
    miscompile.set_policy_version(policy_version);
    miscompile.set_candidate(candidate.variant.policy);
    miscompile.set_run(result.mismatch_run);
    if (result.mismatch) {
      miscompile.set_what(result.mismatch->what);
      miscompile.set_detail(result.mismatch->detail);
    }
    miscompile.set_verdict(result.cause);
    for (const auto& [module_hash, pipeline] : result.blamed) {
      v1::BlamedPipeline* blamed = miscompile.add_blamed();
      blamed->set_module_hash(module_hash);
      blamed->set_pipeline(pipeline);
    }
    miscompile.set_unix_time_ms(now_ms);
    records.miscompile = miscompile;
    return records;
  }
  if (result.verdict != Verdict::kMeasured &&
      result.verdict != Verdict::kIdentical) {
    return records;
  }
  records.decisions = candidate.decisions;
  v1::FinalReward reward;
  reward.set_reward_id(ir::ContentHash(
      absl::StrCat("staging\n", result.workload, "\n", candidate.build_id)));
  reward.set_source("staging");
  reward.set_policy_version(policy_version);
  reward.set_build_id(candidate.build_id);
  reward.set_value(result.reward);
  reward.set_value_low(result.reward_low);
  reward.set_value_high(result.reward_high);
  reward.set_workload(result.workload);
  reward.set_pairs(result.timing ? int(result.timing->baseline.size()) : 0);
  if (result.executed_ir_ratio > 0) {
    reward.set_executed_ir_ratio(result.executed_ir_ratio);
  }
  reward.set_unix_time_ms(now_ms);
  records.rewards.push_back(reward);
  return records;
}

}  // namespace phaseloop::staging
