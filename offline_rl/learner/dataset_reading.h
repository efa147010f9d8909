#ifndef PHASELOOP_OFFLINE_RL_LEARNER_DATASET_READING_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_DATASET_READING_H_

// What both formulations' readers share (private to the dataset library):
// the block list, the buffer reads in id order, the episode digest that
// makes the data snapshot, and the small builders of transition sets.
// dataset.cc reads the step-wise formulation and builds the Dataset;
// candidate_split.cc reads the candidate formulation's table.

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "offline_rl/learner/dataset.h"
#include "offline_rl/learner/learner_config.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::offline_rl::internal {

// A mined candidate episode's behaviour_policy: "candidate:<name>".
inline constexpr char kCandidatePrefix[] = "candidate:";
// A mined candidate episode's action_space_version: "candidates/<hash>"
// (CandidateSetVersion).
inline constexpr char kCandidateSetPrefix[] = "candidates/";
inline constexpr int kReadChunk = 256;  // episodes per ReadEpisodes call

// The content hash of what the learner reads from an episode: without when,
// where and how long it ran, so the same data measured again has the same
// digest (and a retrained artifact the same data snapshot). For objectives
// other than alloc_size, the allocated sizes that records gained with it
// are left out, so those episodes digest as they did before it (the shipped
// text_size default still reproduces byte for byte): every step's
// alloc_size_after, and a mined candidate episode's final_alloc_size
// (search episodes recorded final_alloc_size before, so theirs stays in).
std::string EpisodeDigest(v1::Episode e);

// The buffer's block list: module_hash -> blocked pipelines.
using BlockList = std::map<std::string, std::set<std::string>>;

// Whether `pipeline` is blocked for `module_hash`.
bool IsBlocked(const BlockList& blocked, const std::string& module_hash,
               const std::string& pipeline);

// Whether the step carries both feature vectors (Autophase and InstCount).
bool HasFeatures(const v1::Step& step);

// Appends the state of `step` (its features and the actions taken before
// it) to `out`.
void AppendState(const v1::Step& step, const std::vector<int32_t>& history,
                 int num_actions, std::vector<float>* out);

// Sets the action count and state size of an empty set.
void InitSet(int num_actions, TransitionSet* set);

// Appends one transition's action, reward and done flag (the caller appends
// its states).
void AddTransition(TransitionSet* set, int32_t action, float reward, bool done);

// Every episode id of the split and objective, in id order.
absl::StatusOr<std::vector<std::string>> ListIds(
    replay_buffer::ReplayStore& store, const std::string& split,
    const std::string& objective);

// episode_id -> sum over sources of weight * mean final reward.
absl::StatusOr<std::unordered_map<std::string, double>> FinalRewards(
    replay_buffer::ReplayStore& store, const LearnerConfig& config,
    const std::string& split, std::string* digest_input);

// Calls `visit` with every episode of `ids`, reading in chunks.
template <typename Visit>
absl::Status ForEachEpisode(replay_buffer::ReplayStore& store,
                            const std::vector<std::string>& ids, Visit visit) {
  for (size_t begin = 0; begin < ids.size(); begin += kReadChunk) {
    const size_t end = std::min(ids.size(), begin + kReadChunk);
    auto episodes = store.ReadEpisodes(
        std::vector<std::string>(ids.begin() + begin, ids.begin() + end));
    if (!episodes.ok()) return episodes.status();
    for (const v1::Episode& e : *episodes) visit(e);
  }
  return absl::OkStatus();
}

// A step's reward: step_reward_weight times its own, plus `final_bonus` on
// the episode's last step.
float StepReward(const LearnerConfig& config, const v1::Step& step, bool last,
                 double final_bonus);

// Reads `split`'s candidate table (candidate formulation) into `out`
// (candidate_split.cc).
absl::Status ReadCandidateSplit(replay_buffer::ReplayStore& store,
                                const LearnerConfig& config,
                                const DatasetOptions& options,
                                const BlockList& blocked,
                                const std::string& split, SplitData* out);

}  // namespace phaseloop::offline_rl::internal

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_DATASET_READING_H_
