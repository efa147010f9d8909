#ifndef PHASELOOP_STAGING_HARNESS_SEARCH_BEST_SEQUENCES_H_
#define PHASELOOP_STAGING_HARNESS_SEARCH_BEST_SEQUENCES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "phaseloop/v1/episode.pb.h"

namespace phaseloop::search {

// The best sequence known for a module and objective, with what guided search
// needs to find it for a similar module: the Autophase features of the
// module's unoptimised (start) state.
struct KnownBest {
  v1::BestSequence best;
  std::string module_name;         // for people; may be empty
  std::vector<int64_t> autophase;  // 56 features of the start state, or empty
};

// The best-sequences file: JSON,
//   {"format": "phaseloop.best_sequences.v1",
//    "sequences": [{"module_hash", "objective", "action_space_version",
//                   "actions": [int], "value", "episode_id", "module_name",
//                   "autophase": [56 ints]}, ...]}
// (field names as in v1::BestSequence). The reader ignores unknown fields and
// entries without module_hash/objective/actions; `autophase` is optional.
absl::StatusOr<std::vector<KnownBest>> ReadBestSequences(
    const std::string& path);

// Writes the file whole (temporary file + rename): a crash leaves the old one.
absl::Status WriteBestSequences(const std::string& path,
                                const std::vector<KnownBest>& sequences);

// Folds `update` into `known`: one entry per (module_hash, objective,
// action_space_version), the lower value winning (ties: the shorter sequence,
// then the entry already known). Features missing on the winner are taken
// from the loser.
void MergeBestSequences(const std::vector<KnownBest>& update,
                        std::vector<KnownBest>& known);

// Autophase features made comparable across module sizes: each divided by
// TotalInsts (index 51).
std::vector<double> NormalisedAutophase(const std::vector<int64_t>& autophase);

// Up to `k` entries of `known` for this objective and action space with
// features, nearest first by Euclidean distance between normalised Autophase
// vectors (ties: the lower value, then the module hash).
std::vector<const KnownBest*> NearestNeighbours(
    const std::vector<int64_t>& autophase, const std::vector<KnownBest>& known,
    const std::string& objective, const std::string& action_space_version,
    int k);

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_SEARCH_BEST_SEQUENCES_H_
