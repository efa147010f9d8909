#ifndef PHASELOOP_STAGING_HARNESS_SEARCH_MODULE_SEARCH_H_
#define PHASELOOP_STAGING_HARNESS_SEARCH_MODULE_SEARCH_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "phaseloop/v1/episode.pb.h"
#include "staging_harness/search/greedy_search.h"
#include "staging_harness/workers/worker_client.h"

namespace phaseloop::search {

// Observations of one state of a module.
struct StateObservation {
  int64_t ir_count = 0;
  int64_t text_size = 0;            // 0 when not measured
  int64_t alloc_size = 0;           // 0 when not measured
  std::vector<int64_t> autophase;   // 56
  std::vector<int64_t> inst_count;  // 70
  std::string hash;                 // when asked for (beam search)
};

// A path from the module's start state: the session at its end and every
// step that led there, failed ones included (a failed action leaves the state
// unchanged, so the session's history is the steps that succeeded).
struct Trajectory {
  std::unique_ptr<service::RemoteSession> session;
  StateObservation state;
  std::vector<v1::Step> steps;
  std::string episode_id;
  double started = 0;  // ModuleSearch::Elapsed() when it was created
};

// The figures rewards are normalised by, and results compared with.
struct ModuleReference {
  int64_t ir_count_start = 0;  // the unoptimised module (no pass run)
  int64_t text_size_start = 0;
  int64_t ir_count_oz = 0;  // clang-16's -Oz pipeline on the same module
  int64_t text_size_oz = 0;
  int64_t alloc_size_start = 0;  // the whole object (every SHF_ALLOC section)
  int64_t alloc_size_oz = 0;
};

// Whether `pipeline` (pipeline text, see PipelineText) is blocked for the
// module `module_hash`: a miscompile blamed the pair (the replay buffer's
// block list, ReplayStore::BlockedPipelines). Must be thread-safe when
// several searches share it.
using PipelineBlocked = std::function<bool(const std::string& module_hash,
                                           const std::string& pipeline)>;

// The pipeline text of `actions` of the action space `action_space_version`:
// the actions' pipelines joined by "," (passes::ActionSpace::JoinPipelines),
// the text phaseloop-cc records as Decision.pipeline and a miscompile blames.
// "" when the version is not this binary's action space or an index is out
// of range.
std::string PipelineText(const std::string& action_space_version,
                         const std::vector<int>& actions);

struct ModuleSearchOptions {
  Objective objective = Objective::kAllocSize;
  double budget_seconds = 10;
  // Actions applied (failed ones included) after which the search stops; 0 =
  // no limit. Unlike the clock, this budget ends a search at the same point
  // on any machine, so a seeded search that stops on it is reproducible.
  int64_t max_evaluations = 0;
  uint64_t seed = 1;
  std::string run_id;         // prefix of every episode id
  bool observe_hash = false;  // also observe MODULE_HASH after each step
  // Sequences whose pipeline is blocked for the module are never the best:
  // OfferBest skips them, so the search reports the best one not blocked.
  // nullptr: nothing is blocked.
  PipelineBlocked blocked;
  // Set (by a stop signal): the search ends at its next step, as when its
  // budget runs out, and says so (stopped()). nullptr: never.
  const std::atomic<bool>* stop = nullptr;
};

// One module's search: a root session on the start state, the clock, the
// reward normalisation, the best state so far and the episode log. The
// strategies (strategies.h) drive it. Not thread-safe; `log` is called from
// the thread running the search and must serialise itself.
class ModuleSearch {
 public:
  using EpisodeLog = std::function<absl::Status(const v1::Episode&)>;

  ModuleSearch(service::RemoteSession& root, StateObservation start,
               v1::StartSessionReply start_reply, ModuleReference reference,
               ModuleSearchOptions options, EpisodeLog log);

  // The observations every step asks for.
  std::vector<v1::ObservationKind> ObservationKinds() const;
  static StateObservation Parse(
      const google::protobuf::RepeatedPtrField<v1::Observation>& observations);

  // True once the search has spent its budget: the clock (budget_seconds)
  // or max_evaluations. Records which one ran out first (time_limited()).
  bool OutOfBudget() const;
  // Whether the clock, rather than max_evaluations, ended the search: a
  // time-limited search may stop elsewhere on a faster or slower machine.
  bool time_limited() const { return time_limited_; }
  bool stopped() const { return stopped_; }
  double Elapsed() const;
  int action_count() const { return action_count_; }
  const ModuleSearchOptions& options() const { return options_; }
  // The objective's value of a state.
  int64_t Value(const StateObservation& state) const;
  // Reward of going from `before` to `after`, normalised by what -Oz achieves:
  // (v_before - v_after) / (v_start - v_Oz), with v_start when -Oz gains
  // nothing (the denominator is at least 1).
  double Reward(int64_t before, int64_t after) const;

  // A trajectory at the start state (a fork of the root), or at the end of
  // `from` (a fork of it, its steps copied), with a new episode id.
  absl::StatusOr<Trajectory> StartTrajectory();
  absl::StatusOr<Trajectory> ForkTrajectory(const Trajectory& from);

  // One step of `action` from the end of `from`, on a fork (`from` is
  // unchanged). `failed` steps (crash, hang, verifier) have no session.
  struct Candidate {
    std::unique_ptr<service::RemoteSession> session;
    v1::Step step;
    StateObservation state;
    bool failed = false;
  };
  absl::StatusOr<Candidate> TryAction(const Trajectory& from, int action,
                                      double propensity);
  // Applies `action` to the end of `t` itself and appends the step; returns
  // whether it succeeded. Errors are the worker's, not the action's (e.g. the
  // worker cannot be restarted).
  absl::StatusOr<bool> Advance(Trajectory& t, int action, double propensity);

  static void AppendStep(v1::Step step, Trajectory& t);
  // Remembers the end of `t` if it beats the best state so far and its
  // sequence is not blocked (options().blocked).
  void OfferBest(const Trajectory& t);
  // Logs `t` as an episode; measures its final text_size and alloc_size
  // when the steps did not (one object emission gives both).
  absl::Status Emit(Trajectory& t, const std::string& behaviour, uint64_t seed);

  // "<run_id>-<module hash prefix>-<n>", unique within the run.
  std::string NewEpisodeId();
  // A per-episode seed derived from the run seed, the module and `index`.
  uint64_t EpisodeSeed(int64_t index) const;

  const std::vector<int>& best_actions() const { return best_actions_; }
  int64_t best_value() const { return best_value_; }
  const std::string& best_episode_id() const { return best_episode_id_; }
  const std::string& module_hash() const { return start_reply_.start_hash(); }
  const StateObservation& start() const { return start_; }
  const std::string& action_space_version() const {
    return start_reply_.action_space();
  }
  int64_t episodes() const { return episodes_; }
  int64_t evaluations() const { return evaluations_; }
  int64_t failed_steps() const { return failed_steps_; }
  // The failed steps that hit the step timeout: the only ones that depend
  // on the machine (a crash or a verifier failure recurs on any machine).
  int64_t timed_out_steps() const { return timed_out_steps_; }
  // Offers OfferBest refused because their sequence was blocked.
  int64_t blocked_offers() const { return blocked_offers_; }

 private:
  absl::StatusOr<Candidate> StepSession(service::RemoteSession& session,
                                        const StateObservation& before,
                                        int action, double propensity);

  service::RemoteSession& root_;
  StateObservation start_;
  v1::StartSessionReply start_reply_;
  ModuleReference reference_;
  ModuleSearchOptions options_;
  EpisodeLog log_;
  int action_count_ = 0;
  std::chrono::steady_clock::time_point begin_;

  std::vector<int> best_actions_;
  int64_t best_value_ = 0;
  std::string best_episode_id_;
  int64_t next_episode_ = 0;
  int64_t episodes_ = 0;
  int64_t evaluations_ = 0;
  mutable bool time_limited_ = false;
  mutable bool stopped_ = false;
  int64_t failed_steps_ = 0;
  int64_t timed_out_steps_ = 0;
  int64_t blocked_offers_ = 0;
};

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_SEARCH_MODULE_SEARCH_H_
