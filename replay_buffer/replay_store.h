#ifndef PHASELOOP_REPLAY_BUFFER_REPLAY_STORE_H_
#define PHASELOOP_REPLAY_BUFFER_REPLAY_STORE_H_

// ReplayStore: the durable replay buffer's role interface. It keeps every
// record of the training data plane — modules, episodes with their steps,
// best-known sequences, final (staging/canary) rewards, deployments, policy
// versions, compile decisions, miscompiles and the block list they set — and
// Kafka consumer offsets, joinable by module_hash, episode_id,
// policy_version, build_id and deployment_id.
//
// Contracts of every implementation:
// - Writes are idempotent upserts keyed by ids: writing a record again
//   replaces it (an episode's steps are replaced with it), so replaying a
//   Kafka topic or importing a file twice changes nothing.
// - Write() is atomic: the whole batch, its consumer offsets included, is
//   stored or none of it is (a crash mid-write stores nothing of the batch).
//   Once Write() returns OK the batch survives a process crash or power loss.
// - A best-known sequence per (module_hash, objective, action_space_version)
//   only ever improves (lower value; on a tie, fewer actions).
// - The block list is a function of the stored miscompiles: a
//   (module_hash, pipeline) pair is blocked while a stored miscompile whose
//   verdict is not "undefined_behaviour" blames it.
// - A store is used by one thread at a time; several processes may open the
//   same buffer (writers queue, readers read consistent snapshots).
//
// The implementation today is SQLite (WAL); OpenReplayStore picks it.

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/phaseloop/v1/decision.pb.h"
#include "proto/phaseloop/v1/episode.pb.h"
#include "proto/phaseloop/v1/miscompile.pb.h"

namespace phaseloop::replay_buffer {

// The next offset to consume for (group, topic, partition), Kafka's meaning.
struct ConsumerOffset {
  std::string group;
  std::string topic;
  int32_t partition = 0;
  int64_t next_offset = 0;
  // Replaces the stored offset even when lower: the consumer proved the
  // stored one was taken on another log (a topic recreated under the
  // group, e.g. a new embedded cluster). Without it a lower offset is
  // ignored (below).
  bool replaces_stored = false;
  // The Kafka cluster the offset was taken on (Consumer::ClusterId; "":
  // unknown, as for offsets stored before it was kept). An offset of
  // another cluster says nothing of this one's log.
  std::string cluster_id;
};

// What one Write() stores, in one transaction. Offsets only move forward: an
// offset lower than the stored one is ignored (a zombie consumer cannot
// rewind the group), unless it says it replaces the stored one.
struct WriteBatch {
  std::vector<v1::ModuleRecord> modules;
  std::vector<v1::Episode> episodes;
  std::vector<v1::FinalReward> rewards;  // source "staging" or "canary"
  std::vector<v1::Decision> decisions;
  std::vector<v1::BestSequence> best_sequences;  // kept only when better
  std::vector<v1::DeploymentRecord> deployments;
  std::vector<v1::PolicyVersionRecord> policy_versions;
  // Upserted by miscompile_id ("" = MiscompileIdOf); each blocks the pairs
  // it blames unless its verdict is "undefined_behaviour".
  std::vector<v1::Miscompile> miscompiles;
  std::vector<ConsumerOffset> offsets;

  size_t size() const;  // records, offsets not counted
};

// Which episodes a reader wants; empty fields match everything.
struct EpisodeFilter {
  std::string split;      // the module's split ("train", ...), via modules
  std::string objective;  // "alloc_size", "text_size", "ir_count", "runtime"
  // "staging" or "canary": only episodes a final reward of that source
  // judges — by episode_id, or by (module_hash, policy_version) for episodes
  // whose behaviour_policy is "policy:<version>", directly or through the
  // build's decisions (build_id).
  std::string reward_source;
};

// Which final rewards a reader wants; empty fields match everything.
struct RewardFilter {
  std::string source;         // "staging" or "canary"
  std::string deployment_id;  // the deployment a reward judges
  // Only rewards with window_start_ms in [window_start_from_ms,
  // window_start_to_ms).
  int64_t window_start_from_ms = std::numeric_limits<int64_t>::min();
  int64_t window_start_to_ms = std::numeric_limits<int64_t>::max();
  // Only rewards that carry a relative value (FinalReward.relative_value).
  bool relative_only = false;
};

// Which compile decisions a reader wants; empty fields match everything.
struct DecisionFilter {
  std::string build_id;        // PHASELOOP_BUILD_ID of the build
  std::string policy_version;  // the policy the wrapper ran
  std::string module_hash;
  std::vector<std::string> opt_levels;  // "O2", "O3", ...; empty: any level
};

// An episode's index entry: what a sampler weighs it by.
struct EpisodeKey {
  std::string episode_id;
  int32_t num_steps = 0;
  double step_return = 0;   // sum of its steps' rewards
  double final_reward = 0;  // mean of the filter's reward_source rewards
  // Of those rewards, how many carry a relative value (canary rewards of a
  // deployment against its window's baseline, log(p95_baseline / p95)), and
  // their mean (0 when none do).
  int32_t relative_rewards = 0;
  double final_relative_reward = 0;
  double priority = 1;  // learner-set (SetPriorities); new episodes 1
};

struct BufferStats {
  int32_t schema_version = 0;
  std::vector<std::pair<std::string, int64_t>> table_rows;  // schema order
  struct EpisodeGroup {
    std::string split;  // "" when the module is not in the buffer
    std::string objective;
    std::string behaviour_policy;
    int64_t episodes = 0;
    int64_t steps = 0;
  };
  std::vector<EpisodeGroup> episodes;
  struct RewardGroup {
    std::string source;
    int64_t rewards = 0;
    double mean = 0;
    int64_t relative = 0;      // rewards carrying a relative value
    double relative_mean = 0;  // their mean (0 when none)
  };
  std::vector<RewardGroup> rewards;
  // Best-known sequences against clang-16 -Oz on the same module, for
  // modules whose Oz figure is stored: geomean of value_Oz / value_best
  // (> 1 is smaller than -Oz), per objective.
  struct BestVsOz {
    std::string objective;
    int64_t modules = 0;
    int64_t better_than_oz = 0;
    double geomean_oz_ratio = 0;
  };
  std::vector<BestVsOz> best_vs_oz;
  // (outcome, reason) -> count, ordered by outcome then reason.
  std::vector<std::pair<std::pair<std::string, std::string>, int64_t>>
      decisions;
  // verdict -> miscompiles, ordered by verdict; and the pairs blocked.
  std::vector<std::pair<std::string, int64_t>> miscompiles;
  int64_t blocked_pipelines = 0;
};

// Episode.behaviour_policy of a runtime search's single-module evaluations:
// each changes one module's pipeline (Episode.pipeline) and nothing else,
// so its staging reward judges that (module, pipeline) pair alone; the
// speed learner's candidate formulation reads these.
inline constexpr char kBehaviourRuntimeSearch[] = "runtime_search:vocabulary";
// The runtime search's runoff: a screened (module, pipeline) pair staged
// again with more pairs; where a pair has both, the learner takes this one.
inline constexpr char kBehaviourRuntimeRunoff[] = "runtime_search:runoff";

// Miscompile.verdict values.
inline constexpr char kVerdictMiscompile[] = "miscompile";
inline constexpr char kVerdictUndefinedBehaviour[] = "undefined_behaviour";
inline constexpr char kVerdictUnknown[] = "unknown";
// Not a miscompile: the candidate ran past a time limit the baseline kept
// (staging's kTimedOut); its pairs are blocked all the same.
inline constexpr char kVerdictTimedOut[] = "timed_out";
// Not a pipeline's: the candidate's outputs differ, but only its build
// flags (`stage --candidate-cflags`, `--profile`) or BOLT's rewrite made
// them so; such a record blames no pipeline.
inline constexpr char kVerdictBuildFlags[] = "build_flags";
inline constexpr char kVerdictBolt[] = "bolt";

// One blocked (module, pipeline) pair and the miscompile that blocked it.
struct BlockedPipeline {
  std::string module_hash;
  std::string pipeline;  // as Decision.pipeline / Miscompile.blamed spell it
  std::string miscompile_id;
  int64_t unix_time_ms = 0;  // the miscompile's
};

struct EpisodeStep {
  v1::Episode episode;  // without its steps
  v1::Step step;
};

class ReplayStore {
 public:
  virtual ~ReplayStore() = default;

  // Stores `batch` atomically (see the contracts above). InvalidArgument
  // names the offending record when the batch is malformed (empty id,
  // unknown reward source, duplicate step index); nothing is stored then.
  virtual absl::Status Write(const WriteBatch& batch) = 0;

  // Stored offsets of `group` for `topic`, by partition.
  virtual absl::StatusOr<std::vector<ConsumerOffset>> ReadOffsets(
      const std::string& group, const std::string& topic) = 0;

  // Index of the episodes matching `filter`, ordered by episode_id, read in
  // one snapshot.
  virtual absl::StatusOr<std::vector<EpisodeKey>> ListEpisodes(
      const EpisodeFilter& filter) = 0;

  // The episodes, with their steps in index order, in the order of `ids`
  // (repeats allowed). NotFound names a missing id.
  virtual absl::StatusOr<std::vector<v1::Episode>> ReadEpisodes(
      const std::vector<std::string>& ids) = 0;

  // Single steps: for each (episode_id, position), the episode's
  // position-th step in index order with the episode's header (the episode
  // without its steps). NotFound names a missing episode or position.
  virtual absl::StatusOr<std::vector<EpisodeStep>> ReadSteps(
      const std::vector<std::pair<std::string, int32_t>>& steps) = 0;

  // The final rewards matching `filter`, ordered by window_start_ms then
  // reward_id, read in one snapshot. A canary controller reads a
  // deployment's rewards against its baseline with {source "canary",
  // deployment_id, a window range, relative_only}: relative_value() is
  // log(p95_baseline / p95_canary) per window, > 0 when the canary is
  // faster.
  virtual absl::StatusOr<std::vector<v1::FinalReward>> ReadFinalRewards(
      const RewardFilter& filter) = 0;

  // The stored records of the modules `module_hashes` names (their split,
  // origin, -O level, ...), ordered by module_hash, each once; modules the
  // buffer does not know are left out.
  virtual absl::StatusOr<std::vector<v1::ModuleRecord>> ReadModules(
      const std::vector<std::string>& module_hashes) = 0;

  // The compile decisions matching `filter`, ordered by module_hash then
  // decision_id, read in one snapshot (records as the wrapper wrote them:
  // features, pipeline, outcome). A learner joins a build-level reward (a
  // canary run's, by build_id) to the modules that build compiled.
  virtual absl::StatusOr<std::vector<v1::Decision>> ReadDecisions(
      const DecisionFilter& filter) = 0;

  // The same records in the same order and snapshot, handed to `visit` one
  // at a time instead of held together: a fleet's months of compiles fit in
  // no process's memory, and a reader that keeps one row per module needs
  // no more than that. `visit` may move from its argument; a non-OK status
  // from it stops the read and is returned. `visit` must not use the store.
  virtual absl::Status ForEachDecision(
      const DecisionFilter& filter,
      const std::function<absl::Status(v1::Decision&)>& visit) = 0;

  // Best-known sequences of a module (all objectives and action spaces).
  virtual absl::StatusOr<std::vector<v1::BestSequence>> ReadBestSequences(
      const std::string& module_hash) = 0;

  // Sets the sampling priority of episodes (e.g. a learner's TD errors).
  // Unknown ids are ignored. Priorities must be finite and >= 0.
  virtual absl::Status SetPriorities(
      const std::vector<std::pair<std::string, double>>& priorities) = 0;

  virtual absl::StatusOr<BufferStats> Stats() = 0;

  // Stores a miscompile (one Write of a batch holding only it): idempotent
  // by miscompile_id; blocks every pair it blames unless its verdict is
  // "undefined_behaviour" (a record re-stored with that verdict lifts the
  // blocks only it set). InvalidArgument names a malformed record.
  absl::Status AddMiscompile(const v1::Miscompile& miscompile) {
    WriteBatch batch;
    batch.miscompiles.push_back(miscompile);
    return Write(batch);
  }

  // Every stored miscompile, oldest first (unix_time_ms, then id).
  virtual absl::StatusOr<std::vector<v1::Miscompile>> ReadMiscompiles() = 0;

  // Whether `pipeline` (exact text) is blocked for `module_hash`.
  virtual absl::StatusOr<bool> IsBlocked(const std::string& module_hash,
                                         const std::string& pipeline) = 0;

  // The blocked pairs of `module_hash` ("" = of every module), ordered by
  // module_hash then pipeline.
  virtual absl::StatusOr<std::vector<BlockedPipeline>> BlockedPipelines(
      const std::string& module_hash) = 0;

  // Calls `visit` with every stored record except consumer offsets, in
  // batches of at most `batch_size` records, from one consistent snapshot,
  // in dependency order (policy versions, deployments, modules, best
  // sequences, episodes, rewards, decisions, miscompiles). Stops at the first
  // error `visit` returns and returns it.
  virtual absl::Status Scan(
      int batch_size,
      const std::function<absl::Status(const WriteBatch&)>& visit) = 0;

  // Writes a consistent copy of the whole buffer to `path` (created
  // atomically: a temporary file renamed into place), which OpenReplayStore
  // can open. Fails if `path` exists.
  virtual absl::Status Snapshot(const std::string& path) = 0;

  // OK when SQLite's quick_check of the buffer answers "ok"; DataLoss
  // naming the buffer and its first problem otherwise (a damaged page
  // would stop a Scan part way: `buffer import` checks its input first).
  virtual absl::Status CheckIntegrity() = 0;
};

struct OpenOptions {
  bool create = true;      // create the buffer when `path` does not exist
  bool read_only = false;  // never write; the file must be at the current
                           // schema version
};

// Opens (creating and migrating as allowed) the buffer at `path`. Errors name
// the path and say what to do: InvalidArgument for an unusable path, DataLoss
// for a file that is not a phaseloop buffer or is corrupt, FailedPrecondition
// for a buffer written by a newer phaseloop. A file that is refused is not
// modified.
absl::StatusOr<std::unique_ptr<ReplayStore>> OpenReplayStore(
    const std::string& path, const OpenOptions& options = {});

// The id a miscompile gets from its key when its miscompile_id is empty:
// "miscompile/<workload>/<build_id>/<candidate>/<run>".
std::string MiscompileIdOf(const v1::Miscompile& miscompile);

// Checks a batch without storing it (what Write() rejects).
absl::Status ValidateWriteBatch(const WriteBatch& batch);

// The best sequence an episode shows: the prefix (failed steps dropped) that
// reached the lowest value of its objective (objective_values.h's
// StepValue, 0 = not measured; the final value when no
// step was measured), the earliest on a tie. Returns false when the episode
// measured nothing for its objective.
bool BestSequenceOf(const v1::Episode& episode, v1::BestSequence* best);

}  // namespace phaseloop::replay_buffer

#endif  // PHASELOOP_REPLAY_BUFFER_REPLAY_STORE_H_
