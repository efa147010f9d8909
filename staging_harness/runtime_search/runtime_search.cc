#include "staging_harness/runtime_search/runtime_search.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files/atomic_file.h"
#include "common/timing/elapsed.h"
#include "compiler_driver/cc_wrapper/policy.h"
#include "staging_harness/runtime_search/pipeline_vocabulary.h"
#include "staging_harness/runtime_search/search_records.h"

namespace phaseloop::runtime_search {
namespace {

namespace fs = std::filesystem;
using staging::StageResult;
using staging::Verdict;

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
  e->short_runs = result.short_runs;
  if (result.timing) {
    e->speedup = result.timing->wall.median;
    e->low = result.timing->wall.low;
    e->high = result.timing->wall.high;
    e->pairs = int(result.timing->baseline.size());
  }
}

// One search, its steps in the order they run (runtime_search.h): the state
// they share is the stager, the reference build (the baseline, or the
// build flags alone), the pairs blocked and the pipelines refused so far.
class RuntimeSearch {
 public:
  RuntimeSearch(const workloads::Workload& workload,
                const staging::StageOptions& stage,
                const RuntimeSearchOptions& options,
                replay_buffer::ReplayStore* store, std::ostream& progress)
      : workload_(workload),
        stage_(stage),
        options_(options),
        store_(store),
        progress_(progress),
        start_(std::chrono::steady_clock::now()),
        policies_dir_(stage.work_dir + "/policies") {
    out_.workload = workload.name;
    out_.candidate_cflags = stage.candidate_cflags;
    out_.link_flags = stage.link_flags;
    out_.object_cache_dir = stage.object_cache_dir;
  }
  // reference_ may point into profiled_: never copied or moved.
  RuntimeSearch(const RuntimeSearch&) = delete;
  RuntimeSearch& operator=(const RuntimeSearch&) = delete;

  absl::StatusOr<RuntimeSearchResult> Run() {
    if (absl::Status s = Prepare(); !s.ok()) return s;
    if (!stage_.candidate_cflags.empty()) {
      if (absl::Status s = StageTheBuildFlagsAlone(); !s.ok()) return s;
    }
    // What a module's pipeline must beat: -O3 (1), or in a profile-guided
    // search the profile alone's screened median, which every evaluation's
    // includes.
    floor_ = out_.profiled ? std::max(1.0, out_.profiled->speedup) : 1.0;
    if (absl::Status s = Screen(); !s.ok()) return s;
    out_.search_s = timing::SecondsSince(start_);
    if (absl::Status s = Runoff(); !s.ok()) return s;
    out_.winners =
        ChooseWinners(out_.hot, out_.evaluations, out_.runoff, floor_);
    if (absl::Status s = Confirm(); !s.ok()) return s;
    if (options_.bolt) Bolt();
    // The profiled build served as the reference until here.
    if (profiled_) Cleanup(*profiled_, "profiled");
    out_.elapsed_s = timing::SecondsSince(start_);
    return std::move(out_);
  }

 private:
  absl::Status Write(const replay_buffer::WriteBatch& batch) {
    return store_ == nullptr ? absl::OkStatus() : store_->Write(batch);
  }

  void Cleanup(const StageResult& result, const std::string& label) {
    if (options_.keep_builds) return;
    std::error_code ignored;
    fs::remove_all(result.candidate.build_dir, ignored);
    fs::remove_all(stage_.work_dir + "/run-" + label, ignored);
    fs::remove_all(stage_.work_dir + "/check/" + label, ignored);
  }

  // Step 1: the stager (inputs, the baseline), the baseline's profile and
  // the hot set.
  absl::Status Prepare() {
    if (absl::Status made = files::MakeDirectories(policies_dir_); !made.ok()) {
      return made;
    }
    absl::StatusOr<std::unique_ptr<staging::WorkloadStager>> stager =
        staging::WorkloadStager::Prepare(workload_, stage_, progress_);
    if (!stager.ok()) return stager.status();
    stager_ = *std::move(stager);
    reference_ = &stager_->baseline();
    out_.baseline_build_s = stager_->baseline().build_s;

    ProfileOptions profile_options = options_.profile;
    profile_options.work_dir = stage_.work_dir + "/profile";
    absl::StatusOr<Profile> profile =
        ProfileBaseline(workload_, stager_->baseline(), stager_->inputs(),
                        profile_options, progress_);
    if (!profile.ok()) return profile.status();
    out_.profile = *std::move(profile);
    out_.hot = HotSet(out_.profile, options_.coverage, options_.max_modules);
    for (const HotModule& m : out_.hot) {
      progress_ << absl::StrFormat("  hot: %s %s %.1f %% of the samples\n",
                                   m.module_hash.substr(0, 12), m.source,
                                   100 * m.share);
    }
    if (out_.hot.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(workload_.path,
                       ": no sample of the baseline's runs landed in a unit "
                       "the wrapper optimised (",
                       out_.profile.total, " samples, ", out_.profile.program,
                       " in the program): nothing to search; is the "
                       "workload's time spent in libraries or in a one-step "
                       "compile-and-link the wrapper passes through?"));
    }
    return absl::OkStatus();
  }

  // A profile-guided search: the profile alone first; its build is the
  // reference for module hashes and features from here on.
  absl::Status StageTheBuildFlagsAlone() {
    progress_ << "[profiled] the baseline's pipelines with "
              << stage_.candidate_cflags << "\n";
    absl::StatusOr<StageResult> result =
        stager_->Evaluate("baseline", "profiled", options_.search_timing);
    if (!result.ok()) return result.status();
    if (result->verdict != Verdict::kMeasured &&
        result->verdict != Verdict::kIdentical) {
      return absl::FailedPreconditionError(
          absl::StrCat(workload_.path, ": the build with ",
                       stage_.candidate_cflags, " cannot be searched (",
                       VerdictName(result->verdict), "): ", result->detail));
    }
    Evaluation e;
    e.pipeline = "(build flags alone)";
    Fill(*result, &e);
    progress_ << absl::StrFormat("  -> %s %.4f [%.4f, %.4f] %d pairs\n",
                                 e.verdict, e.speedup, e.low, e.high, e.pairs);
    out_.profiled = e;
    profiled_ = *std::move(result);
    reference_ = &profiled_->candidate;
    for (HotModule& m : out_.hot) {
      absl::StatusOr<std::string> hash =
          ModuleHashOfSource(*reference_, m.source);
      if (!hash.ok()) return hash.status();
      m.module_hash = *hash;
    }
    // Every evaluation's reward below includes the profile's own gain, so
    // the profile alone is each hot module's baseline cell: recorded as the
    // profiled module's own pipeline (-O3's), the learner values a
    // pipeline by what it adds to the profile, not by the profile's gain.
    for (const HotModule& m : out_.hot) {
      const v1::Decision* d = BaselineDecision(*reference_, m.module_hash);
      if (d == nullptr || d->outcome() != v1::OPTIMIZED) continue;
      std::string episode_id;
      if (absl::Status w = Write(RecordsOf(
              *profiled_, m.module_hash, d->pipeline(), kSearchBehaviour,
              options_.seed, workload_, d, &episode_id));
          !w.ok()) {
        return w;
      }
      out_.profiled->episode_ids.push_back(episode_id);
    }
    return absl::OkStatus();
  }

  // Stages the table policy {module: pipeline} as `label` with `timing`
  // and records it (behaviour `behaviour`); a pipeline the wrapper did not
  // run is "refused" (no episode) and never proposed again.
  absl::StatusOr<Evaluation> Evaluate(const HotModule& module,
                                      const std::string& pipeline, int index,
                                      const std::string& label,
                                      const staging::TimingOptions& timing,
                                      const char* behaviour) {
    Evaluation e;
    e.index = index;
    e.module_hash = module.module_hash;
    e.source = module.source;
    e.pipeline = pipeline;
    const std::string table = absl::StrCat(policies_dir_, "/", label, ".table");
    if (absl::Status written = files::WriteFileAtomically(
            table, TablePolicyText({{module.module_hash, pipeline}}));
        !written.ok()) {
      return written;
    }
    progress_ << "[" << label << "] " << module.source << " ("
              << module.module_hash.substr(0, 12) << "): " << pipeline << "\n";
    absl::StatusOr<StageResult> result =
        stager_->Evaluate(absl::StrCat("table:", table), label, timing);
    if (!result.ok()) return result.status();
    if (result->verdict == Verdict::kUnusable && !result->unconfirmed) {
      return absl::FailedPreconditionError(absl::StrCat(
          workload_.path, ": the workload cannot be staged: ", result->detail));
    }
    if (result->unconfirmed) {
      // A difference seen once: this candidate is left out (no episode,
      // not blocked); the search goes on.
      e.verdict = "unconfirmed";
      e.detail = result->detail;
      progress_ << "  unconfirmed: " << result->detail << "; dropped\n";
      Cleanup(*result, label);
      return e;
    }
    Fill(*result, &e);
    std::string why;
    if (!RanPipeline(result->candidate, module.module_hash, pipeline, &why)) {
      // Not this pipeline's result: no episode, and never again.
      e.verdict = "refused";
      e.detail = why;
      refused_.insert(pipeline);
      progress_ << "  refused: " << why << "; dropped\n";
    } else {
      if (result->verdict == Verdict::kMiscompile) {
        out_.miscompile_found = true;
      }
      // A pipeline past the run's time limit is blocked as well (recorded
      // with cause timed_out): never proposed again.
      if (result->verdict == Verdict::kMiscompile ||
          result->verdict == Verdict::kTimedOut) {
        blocked_.insert({module.module_hash, pipeline});
      }
      std::string episode_id;
      if (absl::Status w = Write(RecordsOf(
              *result, module.module_hash, pipeline, behaviour, options_.seed,
              workload_, BaselineDecision(*reference_, module.module_hash),
              &episode_id));
          !w.ok()) {
        return w;
      }
      e.episode_ids.push_back(episode_id);
    }
    progress_ << absl::StrFormat("  -> %s %.4f [%.4f, %.4f] %d pairs, %.1f s",
                                 e.verdict, e.speedup, e.low, e.high, e.pairs,
                                 e.seconds);
    if (e.executed_ir_ratio > 0) {
      progress_ << absl::StrFormat(", executed IR ratio %.5f",
                                   e.executed_ir_ratio);
    }
    progress_ << "\n";
    Cleanup(*result, label);
    return e;
  }

  // Whether `pipeline` is blocked for the module, by this search's
  // miscompiles or the buffer's.
  absl::StatusOr<bool> IsBlocked(const HotModule& module,
                                 const std::string& pipeline) {
    if (blocked_.count({module.module_hash, pipeline}) > 0) return true;
    if (store_ == nullptr) return false;
    return store_->IsBlocked(module.module_hash, pipeline);
  }

  // Step 2: rounds over the hot modules, one pipeline of each module's
  // seeded order per round, until the vocabulary, the budget or
  // max_evaluations runs out.
  absl::Status Screen() {
    const std::vector<Candidate> vocabulary = CheckedVocabulary(
        CandidateBuildOf(stage_.candidate_cflags), &out_.refused_vocabulary);
    for (const std::string& r : out_.refused_vocabulary) {
      progress_ << "  vocabulary: dropped " << r << "\n";
    }
    std::vector<std::vector<Candidate>> orders;
    for (const HotModule& m : out_.hot) {
      orders.push_back(SeededOrder(vocabulary, options_.seed, m.module_hash));
    }
    out_.stop_reason = "vocabulary";
    int made = 0;
    for (size_t round = 0; round < vocabulary.size(); ++round) {
      for (size_t m = 0; m < out_.hot.size(); ++m) {
        const HotModule& module = out_.hot[m];
        const std::string& pipeline = orders[m][round].pipeline;
        if (options_.max_evaluations > 0 && made >= options_.max_evaluations) {
          out_.stop_reason = "max_evaluations";
          break;
        }
        // The first evaluation runs even when the baseline build and the
        // profile used the whole budget (a loaded machine): a search that
        // measured nothing would leave the learner nothing to learn from.
        if (made > 0 && timing::SecondsSince(start_) >= options_.budget_s) {
          out_.stop_reason = "budget";
          break;
        }
        if (refused_.count(pipeline)) continue;
        absl::StatusOr<bool> blocked = IsBlocked(module, pipeline);
        if (!blocked.ok()) return blocked.status();
        if (*blocked) {
          ++out_.blocked_skipped;
          progress_ << "  skip " << pipeline << " for "
                    << module.module_hash.substr(0, 12)
                    << ": blocked by a recorded miscompile\n";
          continue;
        }
        ++made;
        absl::StatusOr<Evaluation> e =
            Evaluate(module, pipeline, made, absl::StrCat("eval-", made),
                     options_.search_timing, kSearchBehaviour);
        if (!e.ok()) return e.status();
        out_.evaluations.push_back(*std::move(e));
      }
      if (out_.stop_reason != "vocabulary") break;
    }
    return absl::OkStatus();
  }

  // Step 3: each module's contenders timed again, hottest module first.
  absl::Status Runoff() {
    const auto runoff_start = std::chrono::steady_clock::now();
    int index = int(out_.evaluations.size());
    for (const HotModule& module : out_.hot) {
      if (options_.runoff_contenders <= 0) break;
      std::vector<std::string> contenders;
      for (const Evaluation* c :
           Contenders(out_.evaluations, module.module_hash,
                      options_.runoff_contenders, floor_)) {
        contenders.push_back(c->pipeline);
      }
      if (contenders.empty()) continue;
      if (phaseloop::timing::SecondsSince(runoff_start) >=
          options_.runoff_budget_s) {
        out_.runoff_skipped.push_back(module.source);
        progress_ << "runoff: no budget left for " << module.source
                  << "; its search median picks\n";
        continue;
      }
      progress_ << "runoff: " << module.source << ", " << contenders.size()
                << " contender(s) timed again\n";
      // Each contender's timing gets at most its share of what remains (its
      // minimum pairs always run).
      staging::TimingOptions timing = options_.runoff_timing;
      timing.budget_s = std::min(
          timing.budget_s, (options_.runoff_budget_s -
                            phaseloop::timing::SecondsSince(runoff_start)) /
                               double(contenders.size()));
      for (const std::string& pipeline : contenders) {
        ++index;
        absl::StatusOr<Evaluation> e =
            Evaluate(module, pipeline, index, absl::StrCat("runoff-", index),
                     timing, kRunoffBehaviour);
        if (!e.ok()) return e.status();
        out_.runoff.push_back(*std::move(e));
      }
    }
    out_.runoff_s = phaseloop::timing::SecondsSince(runoff_start);
    return absl::OkStatus();
  }

  // The index the next full timing gets: after the evaluations and the
  // runoff's, and the confirmation's when there was one.
  int NextIndex() const {
    return int(out_.evaluations.size() + out_.runoff.size()) +
           (out_.confirmation ? 2 : 1);
  }

  // A full timing's row (confirmation or BOLT): the next index, `pipeline`
  // as its name, "confirmed" when measured.
  Evaluation FullTimingRow(const StageResult& result,
                           const std::string& pipeline) const {
    Evaluation e;
    e.index = NextIndex();
    e.pipeline = pipeline;
    Fill(result, &e);
    if (result.verdict == Verdict::kMeasured) e.verdict = "confirmed";
    return e;
  }

  // Step 4: the winners combined and timed in full; with no winner on top
  // of a profile that screened above 1, the profile alone.
  absl::Status Confirm() {
    if (!out_.winners.empty()) {
      const std::string table = policies_dir_ + "/winner.table";
      const std::string text = TablePolicyText(out_.winners);
      if (absl::Status w = files::WriteFileAtomically(table, text); !w.ok()) {
        return w;
      }
      progress_ << "confirmation: " << out_.winners.size()
                << " module pipelines combined, timed in full\n";
      absl::StatusOr<StageResult> result = stager_->Evaluate(
          absl::StrCat("table:", table), "confirm", options_.confirm_timing);
      if (!result.ok()) return result.status();
      Evaluation e = FullTimingRow(*result, "(winners combined)");
      if (result->verdict == Verdict::kMiscompile) out_.miscompile_found = true;
      for (const auto& [module_hash, pipeline] : out_.winners) {
        std::string episode_id;
        replay_buffer::WriteBatch batch = RecordsOf(
            *result, module_hash, pipeline, kConfirmBehaviour, options_.seed,
            workload_, BaselineDecision(*reference_, module_hash), &episode_id);
        if (absl::Status w = Write(batch); !w.ok()) return w;
        e.episode_ids.push_back(episode_id);
      }
      // Only a gain the full run's interval shows (its low end above 1).
      if (result->verdict == Verdict::kMeasured && e.low > 1) {
        out_.policy_table = text;
      }
      out_.confirmation = e;
    } else if (out_.profiled && out_.profiled->verdict == "measured" &&
               out_.profiled->speedup > 1) {
      // No module pipeline won on top of the profile: confirm the profile.
      // Its outputs were checked before its screen; a mismatch now is no
      // pipeline's (the row's verdict says it; not miscompile_found).
      progress_ << "confirmation: the profile alone, timed in full\n";
      absl::StatusOr<StageResult> result =
          stager_->Evaluate("baseline", "confirm", options_.confirm_timing);
      if (!result.ok()) return result.status();
      const Evaluation e = FullTimingRow(*result, "(build flags alone)");
      out_.profile_confirmed =
          result->verdict == Verdict::kMeasured && e.low > 1;
      out_.confirmation = e;
    }
    return absl::OkStatus();
  }

  // Step 5: BOLT on top of the pick, a decision for the whole program. A
  // BOLT that fails is the row's verdict; the search's results stand.
  void Bolt() {
    const bool table = !out_.policy_table.empty();
    const std::string pick = table ? "the winning table"
                             : !stage_.candidate_cflags.empty()
                                 ? "the build flags alone"
                                 : "the -O3 build";
    progress_ << "bolt: " << pick << " rewritten by BOLT, timed in full\n";
    absl::StatusOr<StageResult> result = stager_->Evaluate(
        table ? absl::StrCat("table:", policies_dir_, "/winner.table")
              : "baseline",
        "bolt", options_.confirm_timing, options_.bolt);
    const std::string row = absl::StrCat("(", pick, ") + BOLT");
    Evaluation e;
    if (!result.ok()) {
      e.index = NextIndex();
      e.pipeline = row;
      e.verdict = "failed";
      e.detail = std::string(result.status().message());
      progress_ << "bolt: failed: " << e.detail << "\n";
    } else {
      e = FullTimingRow(*result, row);
      out_.bolt = result->bolt;
      if (result->verdict == Verdict::kMiscompile) {
        absl::StrAppend(&e.detail, " (cause: ", result->cause, ")");
      }
      out_.bolt_chosen = result->verdict == Verdict::kMeasured && e.low > 1 &&
                         e.speedup > BoltReference(out_);
      Cleanup(*result, "bolt");
    }
    if (!options_.keep_builds) {
      std::error_code ignored;
      fs::remove_all(stage_.work_dir + "/bolt-bolt", ignored);
      fs::remove_all(stage_.work_dir + "/check/bolt-before-bolt", ignored);
    }
    out_.bolted = e;
  }

  const workloads::Workload& workload_;
  const staging::StageOptions stage_;
  const RuntimeSearchOptions& options_;
  replay_buffer::ReplayStore* const store_;
  std::ostream& progress_;
  const std::chrono::steady_clock::time_point start_;
  const std::string policies_dir_;
  RuntimeSearchResult out_;
  std::unique_ptr<staging::WorkloadStager> stager_;
  // Module hashes and features come from this build: the baseline, or in a
  // profile-guided search the build flags alone (profiled_).
  const runner::BuiltVariant* reference_ = nullptr;
  std::optional<StageResult> profiled_;
  double floor_ = 1;
  std::set<std::pair<std::string, std::string>> blocked_;  // this search's
  std::set<std::string> refused_;                          // pipelines
};

}  // namespace

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
  staging::StageOptions stage = stage_options;
  if (options.bolt &&
      std::find(stage.link_flags.begin(), stage.link_flags.end(),
                profiling::kBoltLinkFlag) == stage.link_flags.end()) {
    stage.link_flags.push_back(profiling::kBoltLinkFlag);  // every build
  }
  if (!options.object_cache) {
    stage.object_cache_dir.clear();
  } else if (stage.object_cache_dir.empty()) {
    stage.object_cache_dir = stage.work_dir + "/object-cache";
  }
  return RuntimeSearch(workload, stage, options, store, progress).Run();
}

}  // namespace phaseloop::runtime_search
