#include "staging_harness/runtime_search/runtime_search.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files/atomic_file.h"
#include "compiler_driver/cc_wrapper/policy.h"
#include "staging_harness/runtime_search/pipeline_vocabulary.h"
#include "staging_harness/runtime_search/search_records.h"

namespace phaseloop::runtime_search {
namespace {

namespace fs = std::filesystem;
using staging::StageResult;
using staging::Verdict;

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

void Fill(const StageResult& result, Evaluation* e) {
  e->verdict = staging::VerdictName(result.verdict);
  e->detail = result.detail;
  e->seconds = result.elapsed_s;
  e->build_id = result.candidate.build_id;
  e->build_s = result.candidate.build_s;
  e->objects_reused = result.candidate.objects_reused;
  e->objects_compiled = result.candidate.objects_compiled;
  e->executed_ir_ratio = result.executed_ir_ratio;
  e->machine_warnings = result.machine_warnings;
  if (result.timing) {
    e->speedup = result.timing->wall.median;
    e->low = result.timing->wall.low;
    e->high = result.timing->wall.high;
    e->pairs = int(result.timing->baseline.size());
  }
}

}  // namespace

staging::TimingOptions DefaultSearchTiming() {
  staging::TimingOptions timing;
  timing.warmup_passes = 1;
  timing.min_pairs = 3;
  timing.max_pairs = 6;
  timing.budget_s = 20;
  timing.half_width = 0.02;
  // A screen, confirmed later at the full 99 %: five pairs reach 90 %.
  timing.confidence = 0.90;
  return timing;
}

staging::TimingOptions DefaultRunoffTiming() {
  staging::TimingOptions timing;
  timing.warmup_passes = 1;
  timing.min_pairs = 6;
  timing.max_pairs = 20;
  timing.budget_s = 40;
  timing.half_width = 0.01;
  timing.confidence = 0.95;
  return timing;
}

std::vector<const Evaluation*> Contenders(
    const std::vector<Evaluation>& evaluations, const std::string& module_hash,
    int n, double floor) {
  std::vector<const Evaluation*> contenders;
  for (const Evaluation& e : evaluations) {
    if (e.module_hash == module_hash && e.verdict == "measured" &&
        e.speedup > floor) {
      contenders.push_back(&e);
    }
  }
  std::stable_sort(contenders.begin(), contenders.end(),
                   [](const Evaluation* a, const Evaluation* b) {
                     return a->speedup > b->speedup;
                   });
  if (int(contenders.size()) > n) contenders.resize(std::max(n, 0));
  return contenders;
}

std::vector<std::pair<std::string, std::string>> ChooseWinners(
    const std::vector<HotModule>& hot,
    const std::vector<Evaluation>& evaluations,
    const std::vector<Evaluation>& runoff, double floor) {
  std::vector<std::pair<std::string, std::string>> winners;
  for (const HotModule& module : hot) {
    const bool ran_off =
        std::any_of(runoff.begin(), runoff.end(), [&](const Evaluation& e) {
          return e.module_hash == module.module_hash;
        });
    const std::vector<const Evaluation*> best = Contenders(
        ran_off ? runoff : evaluations, module.module_hash, 1, floor);
    if (!best.empty())
      winners.emplace_back(module.module_hash, best[0]->pipeline);
  }
  return winners;
}

double BoltReference(const RuntimeSearchResult& r) {
  if (!r.confirmation) return 1;
  if (!r.policy_table.empty() || r.profile_confirmed) {
    return r.confirmation->speedup;
  }
  // The build flags' own confirmation, not confirmed above 1: BOLT's row is
  // those flags rewritten, so it must beat their figure as well as 1.
  if (!r.candidate_cflags.empty() && r.confirmation->pairs > 0 &&
      r.confirmation->pipeline == "(build flags alone)") {
    return std::max(1.0, r.confirmation->speedup);
  }
  return 1;
}

std::string TablePolicyText(
    const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string text = absl::StrCat(cc_wrapper::kTableHeader, "\n");
  for (const auto& [module_hash, pipeline] : rows) {
    absl::StrAppend(&text, module_hash, "\t", pipeline, "\n");
  }
  return text;
}

absl::StatusOr<RuntimeSearchResult> RunRuntimeSearch(
    const workloads::Workload& workload,
    const staging::StageOptions& stage_options,
    const RuntimeSearchOptions& options, replay_buffer::ReplayStore* store,
    std::ostream& progress) {
  if (stage_options.bolt) {
    return absl::InvalidArgumentError(
        "RunRuntimeSearch: stage.bolt would rewrite every evaluation with "
        "BOLT; give RuntimeSearchOptions::bolt (the pick only)");
  }
  const auto start = std::chrono::steady_clock::now();
  RuntimeSearchResult out;
  out.workload = workload.name;
  staging::StageOptions stage = stage_options;
  if (options.bolt &&
      std::find(stage.link_flags.begin(), stage.link_flags.end(),
                profiling::kBoltLinkFlag) == stage.link_flags.end()) {
    stage.link_flags.push_back(profiling::kBoltLinkFlag);  // every build
  }
  out.candidate_cflags = stage.candidate_cflags;
  out.link_flags = stage.link_flags;
  if (!options.object_cache) {
    stage.object_cache_dir.clear();
  } else if (stage.object_cache_dir.empty()) {
    stage.object_cache_dir = stage.work_dir + "/object-cache";
  }
  out.object_cache_dir = stage.object_cache_dir;
  const std::string policies_dir = stage.work_dir + "/policies";
  if (absl::Status made = files::MakeDirectories(policies_dir); !made.ok()) {
    return made;
  }
  absl::StatusOr<std::unique_ptr<staging::WorkloadStager>> stager =
      staging::WorkloadStager::Prepare(workload, stage, progress);
  if (!stager.ok()) return stager.status();
  out.baseline_build_s = (*stager)->baseline().build_s;

  ProfileOptions profile_options = options.profile;
  profile_options.work_dir = stage.work_dir + "/profile";
  absl::StatusOr<Profile> profile =
      ProfileBaseline(workload, (*stager)->baseline(), (*stager)->inputs(),
                      profile_options, progress);
  if (!profile.ok()) return profile.status();
  out.profile = *std::move(profile);
  out.hot = HotSet(out.profile, options.coverage, options.max_modules);
  for (const HotModule& m : out.hot) {
    progress << absl::StrFormat("  hot: %s %s %.1f %% of the samples\n",
                                m.module_hash.substr(0, 12), m.source,
                                100 * m.share);
  }
  if (out.hot.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(workload.path,
                     ": no sample of the baseline's runs landed in a unit "
                     "the wrapper optimised (",
                     out.profile.total, " samples, ", out.profile.program,
                     " in the program): nothing to search; is the "
                     "workload's time spent in libraries or in a one-step "
                     "compile-and-link the wrapper passes through?"));
  }

  auto write = [&](const replay_buffer::WriteBatch& batch) -> absl::Status {
    return store == nullptr ? absl::OkStatus() : store->Write(batch);
  };

  // A profile-guided search: the profile alone first; its build is the
  // reference for module hashes and features from here on.
  const runner::BuiltVariant* reference = &(*stager)->baseline();
  std::optional<StageResult> profiled;
  if (!stage.candidate_cflags.empty()) {
    progress << "[profiled] the baseline's pipelines with "
             << stage.candidate_cflags << "\n";
    absl::StatusOr<StageResult> result =
        (*stager)->Evaluate("baseline", "profiled", options.search_timing);
    if (!result.ok()) return result.status();
    if (result->verdict != Verdict::kMeasured &&
        result->verdict != Verdict::kIdentical) {
      return absl::FailedPreconditionError(
          absl::StrCat(workload.path, ": the build with ",
                       stage.candidate_cflags, " cannot be searched (",
                       VerdictName(result->verdict), "): ", result->detail));
    }
    Evaluation e;
    e.pipeline = "(build flags alone)";
    Fill(*result, &e);
    progress << absl::StrFormat("  -> %s %.4f [%.4f, %.4f] %d pairs\n",
                                e.verdict, e.speedup, e.low, e.high, e.pairs);
    out.profiled = e;
    profiled = *std::move(result);
    reference = &profiled->candidate;
    for (HotModule& m : out.hot) {
      absl::StatusOr<std::string> hash =
          ModuleHashOfSource(*reference, m.source);
      if (!hash.ok()) return hash.status();
      m.module_hash = *hash;
    }
    // Every evaluation's reward below includes the profile's own gain, so
    // the profile alone is each hot module's baseline cell: recorded as the
    // profiled module's own pipeline (-O3's), the learner values a
    // pipeline by what it adds to the profile, not by the profile's gain.
    for (const HotModule& m : out.hot) {
      const v1::Decision* d = BaselineDecision(*reference, m.module_hash);
      if (d == nullptr || d->outcome() != v1::OPTIMIZED) continue;
      std::string episode_id;
      if (absl::Status w = write(RecordsOf(
              *profiled, m.module_hash, d->pipeline(), kSearchBehaviour,
              options.seed, workload, d, &episode_id));
          !w.ok()) {
        return w;
      }
      out.profiled->episode_ids.push_back(episode_id);
    }
  }

  // What a module's pipeline must beat: -O3 (1), or in a profile-guided
  // search the profile alone's screened median, which every evaluation's
  // includes.
  const double floor =
      out.profiled ? std::max(1.0, out.profiled->speedup) : 1.0;

  const std::vector<Candidate> vocabulary = CheckedVocabulary(
      CandidateBuildOf(stage.candidate_cflags), &out.refused_vocabulary);
  for (const std::string& r : out.refused_vocabulary) {
    progress << "  vocabulary: dropped " << r << "\n";
  }
  std::vector<std::vector<Candidate>> orders;
  for (const HotModule& m : out.hot) {
    orders.push_back(SeededOrder(vocabulary, options.seed, m.module_hash));
  }
  std::set<std::pair<std::string, std::string>> blocked;  // this search's
  std::set<std::string> refused;                          // pipelines
  auto cleanup = [&](const StageResult& result, const std::string& label) {
    if (options.keep_builds) return;
    std::error_code ignored;
    fs::remove_all(result.candidate.build_dir, ignored);
    fs::remove_all(stage.work_dir + "/run-" + label, ignored);
    fs::remove_all(stage.work_dir + "/check/" + label, ignored);
  };

  // Stages the table policy {module: pipeline} as `label` with `timing`
  // and records it (behaviour `behaviour`); a pipeline the wrapper did not
  // run is "refused" (no episode) and never proposed again.
  auto evaluate = [&](const HotModule& module, const std::string& pipeline,
                      int index, const std::string& label,
                      const staging::TimingOptions& timing,
                      const char* behaviour) -> absl::StatusOr<Evaluation> {
    Evaluation e;
    e.index = index;
    e.module_hash = module.module_hash;
    e.source = module.source;
    e.pipeline = pipeline;
    const std::string table = absl::StrCat(policies_dir, "/", label, ".table");
    if (absl::Status written = files::WriteFileAtomically(
            table, TablePolicyText({{module.module_hash, pipeline}}));
        !written.ok()) {
      return written;
    }
    progress << "[" << label << "] " << module.source << " ("
             << module.module_hash.substr(0, 12) << "): " << pipeline << "\n";
    absl::StatusOr<StageResult> result =
        (*stager)->Evaluate(absl::StrCat("table:", table), label, timing);
    if (!result.ok()) return result.status();
    if (result->verdict == Verdict::kUnusable) {
      return absl::FailedPreconditionError(absl::StrCat(
          workload.path, ": the workload cannot be staged: ", result->detail));
    }
    Fill(*result, &e);
    std::string why;
    if (!RanPipeline(result->candidate, module.module_hash, pipeline, &why)) {
      // Not this pipeline's result: no episode, and never again.
      e.verdict = "refused";
      e.detail = why;
      refused.insert(pipeline);
      progress << "  refused: " << why << "; dropped\n";
    } else {
      if (result->verdict == Verdict::kMiscompile) {
        out.miscompile_found = true;
        blocked.insert({module.module_hash, pipeline});
      }
      std::string episode_id;
      if (absl::Status w = write(RecordsOf(
              *result, module.module_hash, pipeline, behaviour, options.seed,
              workload, BaselineDecision(*reference, module.module_hash),
              &episode_id));
          !w.ok()) {
        return w;
      }
      e.episode_ids.push_back(episode_id);
    }
    progress << absl::StrFormat("  -> %s %.4f [%.4f, %.4f] %d pairs, %.1f s",
                                e.verdict, e.speedup, e.low, e.high, e.pairs,
                                e.seconds);
    if (e.executed_ir_ratio > 0) {
      progress << absl::StrFormat(", executed IR ratio %.5f",
                                  e.executed_ir_ratio);
    }
    progress << "\n";
    cleanup(*result, label);
    return e;
  };

  out.stop_reason = "vocabulary";
  int made = 0;
  for (size_t round = 0; round < vocabulary.size(); ++round) {
    for (size_t m = 0; m < out.hot.size(); ++m) {
      const HotModule& module = out.hot[m];
      const std::string& pipeline = orders[m][round].pipeline;
      if (options.max_evaluations > 0 && made >= options.max_evaluations) {
        out.stop_reason = "max_evaluations";
        break;
      }
      // The first evaluation runs even when the baseline build and the
      // profile used the whole budget (a loaded machine): a search that
      // measured nothing would leave the learner nothing to learn from.
      if (made > 0 && Since(start) >= options.budget_s) {
        out.stop_reason = "budget";
        break;
      }
      if (refused.count(pipeline)) continue;
      bool is_blocked = blocked.count({module.module_hash, pipeline}) > 0;
      if (!is_blocked && store != nullptr) {
        absl::StatusOr<bool> in_buffer =
            store->IsBlocked(module.module_hash, pipeline);
        if (!in_buffer.ok()) return in_buffer.status();
        is_blocked = *in_buffer;
      }
      if (is_blocked) {
        ++out.blocked_skipped;
        progress << "  skip " << pipeline << " for "
                 << module.module_hash.substr(0, 12)
                 << ": blocked by a recorded miscompile\n";
        continue;
      }
      ++made;
      absl::StatusOr<Evaluation> e =
          evaluate(module, pipeline, made, absl::StrCat("eval-", made),
                   options.search_timing, kSearchBehaviour);
      if (!e.ok()) return e.status();
      out.evaluations.push_back(*std::move(e));
    }
    if (out.stop_reason != "vocabulary") break;
  }
  out.search_s = Since(start);

  // The runoff: each module's contenders timed again, hottest module first.
  const auto runoff_start = std::chrono::steady_clock::now();
  int index = int(out.evaluations.size());
  for (const HotModule& module : out.hot) {
    if (options.runoff_contenders <= 0) break;
    std::vector<std::string> contenders;
    for (const Evaluation* c : Contenders(out.evaluations, module.module_hash,
                                          options.runoff_contenders, floor)) {
      contenders.push_back(c->pipeline);
    }
    if (contenders.empty()) continue;
    if (Since(runoff_start) >= options.runoff_budget_s) {
      out.runoff_skipped.push_back(module.source);
      progress << "runoff: no budget left for " << module.source
               << "; its search median picks\n";
      continue;
    }
    progress << "runoff: " << module.source << ", " << contenders.size()
             << " contender(s) timed again\n";
    // Each contender's timing gets at most its share of what remains (its
    // minimum pairs always run).
    staging::TimingOptions timing = options.runoff_timing;
    timing.budget_s = std::min(timing.budget_s,
                               (options.runoff_budget_s - Since(runoff_start)) /
                                   double(contenders.size()));
    for (const std::string& pipeline : contenders) {
      ++index;
      absl::StatusOr<Evaluation> e =
          evaluate(module, pipeline, index, absl::StrCat("runoff-", index),
                   timing, kRunoffBehaviour);
      if (!e.ok()) return e.status();
      out.runoff.push_back(*std::move(e));
    }
  }
  out.runoff_s = Since(runoff_start);

  out.winners = ChooseWinners(out.hot, out.evaluations, out.runoff, floor);
  if (!out.winners.empty()) {
    const std::string table = policies_dir + "/winner.table";
    const std::string text = TablePolicyText(out.winners);
    if (absl::Status w = files::WriteFileAtomically(table, text); !w.ok()) {
      return w;
    }
    progress << "confirmation: " << out.winners.size()
             << " module pipelines combined, timed in full\n";
    absl::StatusOr<StageResult> result = (*stager)->Evaluate(
        absl::StrCat("table:", table), "confirm", options.confirm_timing);
    if (!result.ok()) return result.status();
    Evaluation e;
    e.index = index + 1;
    e.pipeline = "(winners combined)";
    Fill(*result, &e);
    if (result->verdict == Verdict::kMeasured) e.verdict = "confirmed";
    if (result->verdict == Verdict::kMiscompile) out.miscompile_found = true;
    for (const auto& [module_hash, pipeline] : out.winners) {
      std::string episode_id;
      replay_buffer::WriteBatch batch = RecordsOf(
          *result, module_hash, pipeline, kConfirmBehaviour, options.seed,
          workload, BaselineDecision(*reference, module_hash), &episode_id);
      if (absl::Status w = write(batch); !w.ok()) return w;
      e.episode_ids.push_back(episode_id);
    }
    // Only a gain the full run's interval shows (its low end above 1).
    if (result->verdict == Verdict::kMeasured && e.low > 1) {
      out.policy_table = text;
    }
    out.confirmation = e;
  } else if (out.profiled && out.profiled->verdict == "measured" &&
             out.profiled->speedup > 1) {
    // No module pipeline won on top of the profile: confirm the profile.
    progress << "confirmation: the profile alone, timed in full\n";
    absl::StatusOr<StageResult> result =
        (*stager)->Evaluate("baseline", "confirm", options.confirm_timing);
    if (!result.ok()) return result.status();
    Evaluation e;
    e.index = index + 1;
    e.pipeline = "(build flags alone)";
    Fill(*result, &e);
    if (result->verdict == Verdict::kMeasured) e.verdict = "confirmed";
    out.profile_confirmed = result->verdict == Verdict::kMeasured && e.low > 1;
    out.confirmation = e;
  }
  // Step 5: BOLT on top of the pick, a decision for the whole program. A
  // BOLT that fails is the row's verdict; the search's results stand.
  if (options.bolt) {
    const bool table = !out.policy_table.empty();
    const std::string pick = table ? "the winning table"
                             : !stage.candidate_cflags.empty()
                                 ? "the build flags alone"
                                 : "the -O3 build";
    progress << "bolt: " << pick << " rewritten by BOLT, timed in full\n";
    absl::StatusOr<StageResult> result = (*stager)->Evaluate(
        table ? absl::StrCat("table:", policies_dir, "/winner.table")
              : "baseline",
        "bolt", options.confirm_timing, options.bolt);
    Evaluation e;
    e.index = index + (out.confirmation ? 2 : 1);
    e.pipeline = absl::StrCat("(", pick, ") + BOLT");
    if (!result.ok()) {
      e.verdict = "failed";
      e.detail = std::string(result.status().message());
      progress << "bolt: failed: " << e.detail << "\n";
    } else {
      Fill(*result, &e);
      out.bolt = result->bolt;
      if (result->verdict == Verdict::kMeasured) e.verdict = "confirmed";
      if (result->verdict == Verdict::kMiscompile) {
        absl::StrAppend(&e.detail, " (cause: ", result->cause, ")");
      }
      out.bolt_chosen = result->verdict == Verdict::kMeasured && e.low > 1 &&
                        e.speedup > BoltReference(out);
      cleanup(*result, "bolt");
    }
    if (!options.keep_builds) {
      std::error_code ignored;
      fs::remove_all(stage.work_dir + "/bolt-bolt", ignored);
      fs::remove_all(stage.work_dir + "/check/bolt-before-bolt", ignored);
    }
    out.bolted = e;
  }
  // The profiled build served as the reference until here.
  if (profiled) cleanup(*profiled, "profiled");
  out.elapsed_s = Since(start);
  return out;
}

}  // namespace phaseloop::runtime_search
