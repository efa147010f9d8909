#include "offline_rl/candidates/candidate_mining.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files/atomic_file.h"
#include "common/timing/elapsed.h"
#include "compiler_driver/codegen/codegen_options.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/observation/features.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/passes/pass_runner.h"
#include "compiler_driver/passes/pipeline_check.h"
#include "compiler_driver/policy_runtime/pipeline_measurement.h"
#include "compiler_driver/session/pass_target.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "nlohmann/json.hpp"
#include "offline_rl/learner/dataset.h"
#include "replay_buffer/objective_values.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/search/best_sequences.h"
#include "staging_harness/variants/corpus_variants.h"

namespace phaseloop::candidates {
namespace {

namespace fs = std::filesystem;
constexpr char kFormat[] = "phaseloop.candidates.v1";
constexpr char kOzPipeline[] = "default<Oz>";

// Runs `pipeline` ("" = none) on a clone of `module` and measures it; with
// `memo`, a pipeline that leaves the IR as an earlier one did is not
// emitted again (the same figures).
absl::StatusOr<policy_runtime::PipelineMeasurement> Measure(
    const llvm::Module& module, const std::string& pipeline,
    passes::PassRunner& runner, codegen::ObjectEmitter& emitter,
    policy_runtime::MeasurementMemo* memo = nullptr) {
  policy_runtime::MeasureOptions options;
  options.memo = memo;
  return policy_runtime::MeasurePipeline(llvm::CloneModule(module), pipeline,
                                         runner, &emitter, options);
}

// The measurement's value of `objective` (a measured one).
int64_t ValueOf(const policy_runtime::PipelineMeasurement& m,
                const std::string& objective) {
  if (objective == replay_buffer::kObjectiveIrCount) return m.ir_count;
  if (objective == replay_buffer::kObjectiveTextSize) return m.text_size;
  return m.alloc_size;
}

// A fixed candidate: a name, and a pipeline a policy may carry (a
// well-formed codegen<...> element, an IR part pipeline_check allows).
absl::Status CheckFixedCandidate(const MineOptions::FixedCandidate& f) {
  if (f.name.empty() || f.pipeline.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fixed candidate '", f.name, "=", f.pipeline,
        "': give NAME=PIPELINE, e.g. ozmf=tuned<Oz;merge-functions>"));
  }
  return passes::CheckWholePolicyPipeline(
      f.pipeline, absl::StrCat("fixed candidate '", f.name, "'"));
}

}  // namespace

// The learner's own (offline_rl/learner/dataset.h), which reads only this
// set's episodes by it.
std::string CandidateSetVersion(const std::vector<Candidate>& candidates) {
  std::vector<offline_rl::Candidate> as_read;
  for (const Candidate& c : candidates) {
    as_read.push_back({c.name, c.actions, c.pipeline});
  }
  return offline_rl::CandidateSetVersion(as_read);
}

absl::StatusOr<std::vector<Candidate>> CollectCandidates(
    const MineOptions& options, int* refused_sequences) {
  if (!replay_buffer::IsMeasuredObjective(options.objective)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown objective '", options.objective,
                     "'; use alloc_size, text_size or ir_count"));
  }
  if (options.buffer.empty() && options.best_files.empty()) {
    return absl::InvalidArgumentError(
        "no source of sequences: give --buffer and/or --best FILE");
  }
  const passes::ActionSpace& space = passes::ActionSpace::Llvm16();
  std::vector<v1::BestSequence> sequences;
  // (module_hash, pipeline) pairs a miscompile blamed (the buffer's block
  // list): a sequence is not counted best for a module it miscompiled.
  std::set<std::pair<std::string, std::string>> blocked;
  for (const std::string& path : options.best_files) {
    absl::StatusOr<std::vector<search::KnownBest>> known =
        search::ReadBestSequences(path);
    if (!known.ok()) return known.status();
    for (const search::KnownBest& k : *known) sequences.push_back(k.best);
  }
  if (!options.buffer.empty()) {
    replay_buffer::OpenOptions open;
    open.create = false;
    open.read_only = true;
    absl::StatusOr<std::unique_ptr<replay_buffer::ReplayStore>> store =
        replay_buffer::OpenReplayStore(options.buffer, open);
    if (!store.ok()) return store.status();
    absl::Status scanned =
        (*store)->Scan(1000, [&](const replay_buffer::WriteBatch& batch) {
          for (const v1::BestSequence& b : batch.best_sequences) {
            sequences.push_back(b);
          }
          return absl::OkStatus();
        });
    if (!scanned.ok()) return scanned;
    absl::StatusOr<std::vector<replay_buffer::BlockedPipeline>> listed =
        (*store)->BlockedPipelines("");
    if (!listed.ok()) return listed.status();
    for (const replay_buffer::BlockedPipeline& b : *listed) {
      blocked.emplace(b.module_hash, b.pipeline);
    }
  }
  // Only the split's own modules choose candidates: a sequence best on a
  // test module would carry the test split into training.
  std::set<std::string> split_modules;
  if (!options.split.empty()) {
    absl::StatusOr<std::vector<v1::ModuleRecord>> records =
        staging::ReadCorpusRecords(options.corpus_dir, options.split);
    if (!records.ok()) return records.status();
    for (const v1::ModuleRecord& r : *records) {
      split_modules.insert(r.module_hash());
    }
  }
  // actions -> modules it is best for (one count per module).
  std::map<std::vector<int32_t>, std::set<std::string>> modules_of;
  for (const v1::BestSequence& b : sequences) {
    if (!options.split.empty() && split_modules.count(b.module_hash()) == 0) {
      continue;
    }
    if (b.objective() != options.objective ||
        b.action_space_version() != space.version() || b.actions().empty()) {
      continue;
    }
    std::vector<int32_t> actions(b.actions().begin(), b.actions().end());
    bool in_range = true;
    for (int32_t a : actions) in_range &= a >= 0 && a < space.size();
    if (!in_range) continue;
    std::vector<const passes::Action*> chosen;
    for (int32_t a : actions) chosen.push_back(&space.at(a));
    const std::string pipeline = passes::ActionSpace::JoinPipelines(chosen);
    if (blocked.count({b.module_hash(), pipeline}) > 0) continue;
    // Search explores every action, the few no policy may run too: such a
    // sequence would make a candidate the exported artifact is refused for.
    if (!passes::CheckWholePolicyPipeline(pipeline).ok()) {
      if (refused_sequences != nullptr) ++*refused_sequences;
      continue;
    }
    modules_of[actions].insert(b.module_hash());
  }
  std::vector<std::pair<std::vector<int32_t>, int>> ranked;
  for (const auto& [actions, modules] : modules_of) {
    ranked.emplace_back(actions, static_cast<int>(modules.size()));
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) {
                     if (a.second != b.second) return a.second > b.second;
                     return a.first.size() < b.first.size();
                   });
  if (static_cast<int>(ranked.size()) > options.max_candidates) {
    ranked.resize(std::max(0, options.max_candidates));
  }
  // Nothing to mine and nothing fixed: -Oz alone is no candidate set (the
  // command "succeeded" with one candidate).
  if (ranked.empty() && options.max_candidates > 0 &&
      options.fixed_candidates.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no best sequence of objective ", options.objective, " (action space ",
        space.version(), ")",
        options.split.empty() ? ""
                              : absl::StrCat(" on split '", options.split, "'"),
        " in ",
        options.buffer.empty() ? "the --best files" : "--buffer and --best",
        ": run `phaseloop search --objective ", options.objective,
        "` into the buffer first, or give --fixed-candidate"));
  }
  std::vector<Candidate> out;
  out.push_back({"oz", {}, kOzPipeline});
  for (const MineOptions::FixedCandidate& f : options.fixed_candidates) {
    absl::Status checked = CheckFixedCandidate(f);
    if (!checked.ok()) return checked;
    out.push_back({f.name, {}, f.pipeline});
  }
  for (size_t i = 0; i < ranked.size(); ++i) {
    Candidate c;
    c.name = absl::StrFormat("c%03d", i);
    c.actions = ranked[i].first;
    std::vector<const passes::Action*> actions;
    for (int32_t a : c.actions) actions.push_back(&space.at(a));
    c.pipeline = passes::ActionSpace::JoinPipelines(actions);
    c.best_for_modules = ranked[i].second;
    out.push_back(c);
    if (options.oz_prefix_variants) {
      Candidate v = c;
      v.name += "+oz";
      v.pipeline = absl::StrCat(kOzPipeline, ",", c.pipeline);
      v.best_for_modules = 0;
      out.push_back(v);
    }
  }
  // Names are unique; only a fixed candidate can repeat one ("oz", another
  // fixed one's, a mined one's: "c000", "c000+oz").
  std::set<std::string> names;
  for (const Candidate& c : out) {
    if (!names.insert(c.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("fixed candidate '", c.name,
                       "' has the name of another candidate: rename it"));
    }
  }
  if (options.codegen_variants.any()) {
    // Every candidate again with the code generator options: "<name>+mo"
    // (machine outliner), "+njt" (no jump tables), "+sf" (split functions),
    // combined in that order.
    std::string suffix;
    if (options.codegen_variants.machine_outliner) suffix += "+mo";
    if (options.codegen_variants.no_jump_tables) suffix += "+njt";
    if (options.codegen_variants.split_functions) suffix += "+sf";
    const size_t ir_only = out.size();
    for (size_t i = 0; i < ir_only; ++i) {
      Candidate v = out[i];
      v.name += suffix;
      v.pipeline =
          codegen::JoinPipeline(out[i].pipeline, options.codegen_variants);
      v.best_for_modules = 0;
      out.push_back(v);
    }
  }
  return out;
}

absl::Status WriteCandidatesFile(const std::string& path,
                                 const std::string& objective,
                                 const std::vector<Candidate>& candidates) {
  nlohmann::json j;
  j["format"] = kFormat;
  j["objective"] = objective;
  j["action_space_version"] = passes::ActionSpace::Llvm16().version();
  j["candidate_set_version"] = CandidateSetVersion(candidates);
  nlohmann::json list = nlohmann::json::array();
  for (const Candidate& c : candidates) {
    list.push_back({{"name", c.name},
                    {"actions", c.actions},
                    {"pipeline", c.pipeline},
                    {"best_for_modules", c.best_for_modules},
                    {"mean_reward", c.mean_reward},
                    {"better_than_oz", c.better_than_oz},
                    {"worse_than_oz", c.worse_than_oz}});
  }
  j["candidates"] = std::move(list);
  absl::Status written = files::WriteFileAtomically(
      path, absl::StrCat(
                j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace),
                "\n"));
  if (!written.ok() && written.code() == absl::StatusCode::kInvalidArgument) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write the candidates file: ", written.message()));
  }
  return written;
}

absl::StatusOr<std::vector<Candidate>> ReadCandidatesFile(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read the candidates file ", path,
                     "; write it with phaseloop candidates mine"));
  }
  nlohmann::json j =
      nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("format", "") != kFormat ||
      !j.contains("candidates") || !j["candidates"].is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "candidates file ", path, " is not a ", kFormat,
        " JSON file; regenerate it with phaseloop candidates mine"));
  }
  std::vector<Candidate> out;
  for (const nlohmann::json& e : j["candidates"]) {
    if (!e.is_object() || !e.contains("pipeline") ||
        !e["pipeline"].is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("candidates file ", path, ": an entry has no pipeline"));
    }
    Candidate c;
    c.name = e.value("name", "");
    c.pipeline = e["pipeline"].get<std::string>();
    if (e.contains("actions") && e["actions"].is_array()) {
      for (const auto& a : e["actions"]) {
        if (a.is_number_integer()) c.actions.push_back(a.get<int32_t>());
      }
    }
    c.best_for_modules = e.value("best_for_modules", 0);
    c.mean_reward = e.value("mean_reward", 0.0);
    c.better_than_oz = e.value("better_than_oz", 0);
    c.worse_than_oz = e.value("worse_than_oz", 0);
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// What a child reports for one module (see the proto): candidate values,
// rewards and episodes, or why it was skipped.
using ModuleMeasurement = v1::CandidateMeasurements;

absl::StatusOr<ModuleMeasurement> MeasureModule(
    const v1::ModuleRecord& record, const MineOptions& options,
    const std::vector<Candidate>& candidates,
    const std::string& space_version) {
  // Test hook (candidate_mining_test): a module whose measurement hangs.
  if (const char* fault = std::getenv("PHASELOOP_TEST_INJECT_FAULT");
      fault != nullptr && std::string(fault) == "hang") {
    for (;;) pause();
  }
  ModuleMeasurement out;
  const std::string path =
      fs::path(record.bitcode_path()).is_absolute()
          ? record.bitcode_path()
          : (fs::path(options.corpus_dir) / record.bitcode_path()).string();
  const ir::OptLevel level =
      ir::ParseOptLevel(record.opt_level()).value_or(ir::OptLevel::kOz);
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      ir::LoadModule(path, ir::FrontendOptions(), context);
  if (!module.ok()) return module.status();
  absl::StatusOr<std::unique_ptr<codegen::ObjectEmitter>> emitter =
      codegen::ObjectEmitter::ForModule(**module, ir::CodegenLevel(level));
  if (!emitter.ok()) return emitter.status();
  passes::PassRunner runner(
      session::PassTargetMachine(**emitter, passes::PipelineFlavor::kOpt),
      passes::TuningFor(level, passes::PipelineFlavor::kOpt));
  absl::StatusOr<policy_runtime::PipelineMeasurement> start_state =
      Measure(**module, "", runner, **emitter);
  if (!start_state.ok()) return start_state.status();
  if (start_state->ir_count == 0) {
    out.set_skipped("skipped: no function bodies");
    return out;
  }
  const auto autophase = observation::ComputeAutophase(**module);
  const auto inst_count = observation::ComputeInstCount(**module);
  replay_buffer::WriteBatch batch;
  std::vector<int64_t> values(candidates.size(), -1);
  policy_runtime::MeasurementMemo memo;
  for (size_t c = 0; c < candidates.size(); ++c) {
    const auto one_start = std::chrono::steady_clock::now();
    absl::StatusOr<policy_runtime::PipelineMeasurement> m =
        Measure(**module, candidates[c].pipeline, runner, **emitter, &memo);
    if (!m.ok()) continue;  // a failing candidate: no episode
    values[c] = ValueOf(*m, options.objective);
    v1::Episode episode;
    episode.set_episode_id(ir::ContentHash(
        absl::StrCat("candidate|", candidates[c].pipeline, "|",
                     record.module_hash(), "|", options.objective)));
    episode.set_module_hash(record.module_hash());
    episode.set_action_space_version(space_version);
    episode.set_objective(options.objective);
    episode.set_behaviour_policy(
        absl::StrCat("candidate:", candidates[c].name));
    episode.set_final_ir_count(m->ir_count);
    episode.set_final_text_size(m->text_size);
    episode.set_final_alloc_size(m->alloc_size);
    episode.set_unix_time_ms(
        std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count());
    episode.set_seconds(timing::SecondsSince(one_start));
    v1::Step* step = episode.add_steps();
    step->set_index(0);
    for (int64_t v : autophase) step->add_autophase(v);
    for (int64_t v : inst_count) step->add_inst_count(v);
    step->set_action(static_cast<int32_t>(c));
    step->set_action_name(absl::StrCat("candidate:", candidates[c].name));
    step->set_action_probability(1.0);
    step->set_ir_count_after(m->ir_count);
    step->set_text_size_after(m->text_size);
    step->set_alloc_size_after(m->alloc_size);
    batch.episodes.push_back(std::move(episode));
  }
  if (values[0] < 0) {
    return absl::InternalError("-Oz failed on the module");
  }
  const int64_t start_value = ValueOf(*start_state, options.objective);
  const int64_t oz = values[0];
  const int64_t scale = start_value - oz > 0
                            ? start_value - oz
                            : std::max<int64_t>(start_value, 1);
  std::vector<double> rewards(candidates.size(), 0);
  size_t e = 0;
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (values[c] < 0) continue;
    rewards[c] = static_cast<double>(start_value - values[c]) / scale;
    batch.episodes[e++].mutable_steps(0)->set_reward(rewards[c]);
  }
  out.mutable_values()->Assign(values.begin(), values.end());
  out.mutable_rewards()->Assign(rewards.begin(), rewards.end());
  for (v1::Episode& e : batch.episodes) *out.add_episodes() = std::move(e);
  return out;
}

}  // namespace

absl::StatusOr<MineReport> MineCandidates(const MineOptions& options) {
  if (options.out.empty()) {
    return absl::InvalidArgumentError(
        "--out FILE (the candidates file) is required");
  }
  if (options.write_episodes && options.buffer.empty()) {
    return absl::InvalidArgumentError(
        "episodes go into the replay buffer: give --buffer, or --no-episodes");
  }
  MineReport report;
  absl::StatusOr<std::vector<Candidate>> collected =
      CollectCandidates(options, &report.refused_sequences);
  if (!collected.ok()) return collected.status();
  std::vector<Candidate>& candidates = *collected;
  absl::StatusOr<std::vector<v1::ModuleRecord>> records =
      staging::ReadCorpusRecords(options.corpus_dir, options.split);
  if (!records.ok()) return records.status();
  std::vector<v1::ModuleRecord> modules;
  for (const v1::ModuleRecord& r : *records) {
    if (options.max_ir_count > 0 && r.ir_count_o0() > options.max_ir_count) {
      continue;
    }
    if (std::find(options.exclude.begin(), options.exclude.end(), r.name()) !=
        options.exclude.end()) {
      continue;
    }
    modules.push_back(r);
  }
  if (options.max_modules > 0 &&
      static_cast<int>(modules.size()) > options.max_modules) {
    modules.resize(options.max_modules);
  }
  if (modules.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("corpus ", options.corpus_dir, " has no module in split '",
                     options.split, "'"));
  }
  std::unique_ptr<replay_buffer::ReplayStore> store;
  if (options.write_episodes) {
    absl::StatusOr<std::unique_ptr<replay_buffer::ReplayStore>> opened =
        replay_buffer::OpenReplayStore(options.buffer);
    if (!opened.ok()) return opened.status();
    store = std::move(*opened);
  }
  // The episodes' "action space" is the candidate set: Step.action indexes
  // it. (Under the pass action space's version the buffer would take the
  // candidate index for a pass and derive bogus best pass sequences.)
  const std::string space_version = CandidateSetVersion(candidates);
  std::vector<double> reward_sum(candidates.size(), 0);
  std::vector<int> reward_n(candidates.size(), 0);
  absl::Status write_error;
  int done = 0;
  staging::ChildMeasureOptions measure_options;
  measure_options.threads = options.threads;
  measure_options.timeout_ms = options.module_timeout_s * 1000;
  // Candidates run in a child with a time limit: a pipeline that crashes or
  // hangs LLVM costs this module, not the run. `done` runs one at a time.
  staging::MeasureEachInChild(
      modules.size(), measure_options,
      [&](size_t i) -> absl::StatusOr<std::string> {
        absl::StatusOr<ModuleMeasurement> measured =
            MeasureModule(modules[i], options, candidates, space_version);
        if (!measured.ok()) return measured.status();
        return measured->SerializeAsString();
      },
      [&](size_t i, const staging::MeasureOutcome& outcome, double elapsed_ms) {
        const v1::ModuleRecord& record = modules[i];
        auto finish = [&](absl::string_view error,
                          replay_buffer::WriteBatch* batch) {
          ++done;
          if (!error.empty()) {
            ++report.failed_modules;
          } else {
            ++report.modules;
            if (store != nullptr && batch != nullptr && write_error.ok()) {
              write_error = store->Write(*batch);
              if (write_error.ok())
                report.episodes_written += batch->episodes.size();
            }
          }
          if (options.progress != nullptr) {
            *options.progress << absl::StrFormat(
                "[%d/%d] %s: %s (%.1f s)\n", done, modules.size(),
                record.name(), error.empty() ? "ok" : error,
                elapsed_ms / 1000.0);
          }
        };
        if (outcome.kind != staging::MeasureOutcome::kOk) {
          return finish(outcome.message, nullptr);
        }
        ModuleMeasurement measured;
        if (!measured.ParseFromString(outcome.report)) {
          return finish("unreadable measurement from the child process",
                        nullptr);
        }
        if (!measured.skipped().empty()) {
          return finish(measured.skipped(), nullptr);
        }
        if (measured.values_size() != static_cast<int>(candidates.size()) ||
            measured.rewards_size() != measured.values_size()) {
          return finish("the child measured another candidate set", nullptr);
        }
        const auto& values = measured.values();
        const auto& rewards = measured.rewards();
        const int64_t oz = values[0];
        replay_buffer::WriteBatch batch;
        batch.modules.push_back(record);
        batch.episodes.assign(
            std::make_move_iterator(measured.mutable_episodes()->begin()),
            std::make_move_iterator(measured.mutable_episodes()->end()));
        for (size_t c = 0; c < candidates.size(); ++c) {
          if (values[c] < 0) continue;
          reward_sum[c] += rewards[c];
          ++reward_n[c];
          if (values[c] < oz) ++candidates[c].better_than_oz;
          if (values[c] > oz) ++candidates[c].worse_than_oz;
        }
        finish("", &batch);
      });
  if (!write_error.ok()) return write_error;
  for (size_t c = 0; c < candidates.size(); ++c) {
    candidates[c].mean_reward =
        reward_n[c] > 0 ? reward_sum[c] / reward_n[c] : 0;
  }
  absl::Status written =
      WriteCandidatesFile(options.out, options.objective, candidates);
  if (!written.ok()) return written;
  report.candidates = candidates;
  return report;
}

}  // namespace phaseloop::candidates
