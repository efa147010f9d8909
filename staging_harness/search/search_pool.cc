#include "staging_harness/search/search_pool.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/session/baselines.h"

namespace phaseloop::search {
namespace {

// In-process LLVM work of this process (the -Oz baselines) runs one at a time.
std::mutex baseline_mutex;

absl::StatusOr<session::Baseline> OzBaseline(const ModuleInput& input) {
  std::lock_guard<std::mutex> lock(baseline_mutex);
  absl::StatusOr<std::vector<session::Baseline>> baselines =
      session::FileBaselines(input.path, ir::FrontendOptions{},
                             {ir::OptLevel::kOz});
  if (!baselines.ok()) return baselines.status();
  return baselines->at(0);
}

std::string RandomRunId() {
  std::random_device device;
  return absl::StrFormat("%08x%08x", device(), device());
}

struct Shared {
  const SearchRunOptions& options;
  const std::vector<KnownBest>& known;
  EpisodeSink& sink;
  std::mutex sink_mutex;
};

void SearchModule(service::WorkerProcess& worker, Shared& shared,
                  ModuleResult& result) {
  const SearchRunOptions& options = shared.options;
  // Sessions run with -Oz's codegen and tuning whatever level the module's
  // frontend ran at, so text_size compares with the -Oz baseline.
  v1::ModuleSource source;
  source.set_path(result.input.path);
  v1::StartSessionReply reply;
  absl::StatusOr<std::unique_ptr<service::RemoteSession>> root =
      service::RemoteSession::Start(
          worker, source,
          {v1::IR_COUNT, v1::TEXT_SIZE, v1::ALLOC_SIZE, v1::AUTOPHASE,
           v1::INST_COUNT, v1::MODULE_HASH},
          &reply);
  if (!root.ok()) {
    result.status = root.status();
    return;
  }
  StateObservation start = ModuleSearch::Parse(reply.observations());
  result.module_hash = reply.start_hash();
  result.action_space_version = reply.action_space();
  result.start_autophase = start.autophase;
  absl::StatusOr<session::Baseline> oz = OzBaseline(result.input);
  if (!oz.ok()) {
    result.status = oz.status();
    return;
  }
  result.reference.ir_count_start = start.ir_count;
  result.reference.text_size_start = start.text_size;
  result.reference.alloc_size_start = start.alloc_size;
  result.reference.ir_count_oz = oz->ir_count;
  result.reference.text_size_oz = oz->text_size;
  result.reference.alloc_size_oz = oz->alloc_size;

  ModuleSearchOptions search_options;
  search_options.objective = options.objective;
  search_options.budget_seconds = options.budget_seconds;
  search_options.max_evaluations = options.max_evaluations;
  search_options.seed = options.seed;
  search_options.run_id = options.run_id;
  search_options.observe_hash = options.strategy.strategy == Strategy::kBeam;
  search_options.blocked = options.blocked;
  search_options.stop = options.stop;
  auto log = [&shared](const v1::Episode& episode) {
    std::lock_guard<std::mutex> lock(shared.sink_mutex);
    return shared.sink.Write(episode);
  };
  ModuleSearch search(**root, start, reply, result.reference, search_options,
                      log);
  absl::Status status = RunStrategy(search, options.strategy, shared.known);
  result.seconds = search.Elapsed();
  result.episodes = search.episodes();
  result.evaluations = search.evaluations();
  result.failed_steps = search.failed_steps();
  result.timed_out_steps = search.timed_out_steps();
  result.blocked_skipped = search.blocked_offers();
  result.time_limited = search.time_limited();
  result.stopped = search.stopped();
  {
    std::lock_guard<std::mutex> lock(shared.sink_mutex);
    absl::Status flushed = shared.sink.Flush();
    if (status.ok()) status = flushed;
  }
  if (!status.ok()) {
    result.status = status;
    return;
  }
  // Measure the best sequence by replaying it from the start state: the
  // figures reported are the ones the sequence reproduces.
  result.best_actions = search.best_actions();
  result.best_episode_id = search.best_episode_id();
  result.ir_count = start.ir_count;
  result.text_size = start.text_size;
  result.alloc_size = start.alloc_size;
  if (result.best_actions.empty()) return;
  absl::StatusOr<std::unique_ptr<service::RemoteSession>> replay =
      (*root)->Fork();
  if (!replay.ok()) {
    result.status = replay.status();
    return;
  }
  absl::StatusOr<v1::StepReply> replayed = (*replay)->Step(
      result.best_actions, {v1::IR_COUNT, v1::TEXT_SIZE, v1::ALLOC_SIZE});
  if (!replayed.ok()) {
    result.status = absl::InternalError(
        absl::StrCat("the best sequence found did not replay: ",
                     replayed.status().message()));
    return;
  }
  StateObservation end = ModuleSearch::Parse(replayed->observations());
  result.ir_count = end.ir_count;
  result.text_size = end.text_size;
  result.alloc_size = end.alloc_size;
  if (search.Value(end) != search.best_value()) {
    result.status = absl::InternalError(absl::StrCat(
        "the best sequence gave ", ObjectiveName(options.objective), " ",
        search.best_value(), " in the search but ", search.Value(end),
        " when replayed: a pass is nondeterministic"));
  }
}

}  // namespace

int WorkerCount(int requested, size_t modules) {
  const int hardware =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int count = requested > 0 ? requested : hardware;
  return std::max(1, std::min(count, static_cast<int>(modules)));
}

absl::StatusOr<std::vector<ModuleResult>> RunSearch(
    const std::vector<ModuleInput>& modules,
    const SearchRunOptions& run_options, const std::vector<KnownBest>& known,
    EpisodeSink& sink, const SearchProgress& progress) {
  SearchRunOptions options = run_options;
  if (options.run_id.empty()) options.run_id = RandomRunId();
  const int count = WorkerCount(options.workers, modules.size());

  // Start the workers one after another, before any thread runs.
  std::vector<std::unique_ptr<service::WorkerProcess>> workers;
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<std::unique_ptr<service::WorkerProcess>> worker =
        service::WorkerProcess::Start(options.worker);
    if (!worker.ok()) return worker.status();
    workers.push_back(std::move(*worker));
  }
  std::vector<ModuleResult> results(modules.size());
  for (size_t i = 0; i < modules.size(); ++i) results[i].input = modules[i];
  Shared shared{options, known, sink, {}};
  std::atomic<size_t> next{0};
  std::mutex progress_mutex;
  int done = 0;
  auto run = [&](service::WorkerProcess& worker) {
    for (size_t i = next++; i < modules.size(); i = next++) {
      SearchModule(worker, shared, results[i]);
      // A worker that could not be restarted mid-module gets another chance.
      if (results[i].status.code() == absl::StatusCode::kUnavailable &&
          worker.can_restart()) {
        (void)worker.Restart();
      }
      std::lock_guard<std::mutex> lock(progress_mutex);
      ++done;
      if (progress)
        progress(results[i], done, static_cast<int>(modules.size()));
    }
  };
  std::vector<std::thread> threads;
  for (auto& worker : workers) threads.emplace_back(run, std::ref(*worker));
  for (std::thread& t : threads) t.join();
  return results;
}

int64_t ResultValue(const ModuleResult& result, Objective objective) {
  return PickByObjective(objective, result.ir_count, result.text_size,
                         result.alloc_size);
}

std::vector<KnownBest> BestSequencesOf(const std::vector<ModuleResult>& results,
                                       Objective objective) {
  std::vector<KnownBest> out;
  for (const ModuleResult& r : results) {
    if (!r.status.ok()) continue;
    KnownBest k;
    k.best.set_module_hash(r.module_hash);
    k.best.set_objective(ObjectiveName(objective));
    k.best.set_action_space_version(r.action_space_version);
    for (int a : r.best_actions) k.best.add_actions(a);
    k.best.set_value(ResultValue(r, objective));
    k.best.set_episode_id(r.best_episode_id);
    k.module_name = r.input.name;
    k.autophase = r.start_autophase;
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace phaseloop::search
