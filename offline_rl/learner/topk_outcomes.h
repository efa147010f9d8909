#ifndef PHASELOOP_OFFLINE_RL_LEARNER_TOPK_OUTCOMES_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_TOPK_OUTCOMES_H_

// A size policy's candidate table from the user's own builds (candidate
// formulation, objective alloc_size; private to the dataset library).
//
// In topk mode phaseloop-cc measures -Oz and k candidates on each module it
// compiles and records every value it measured (Decision.topk_measured: the
// whole object's allocated bytes, -Oz first). `decisions ship` brings the
// records to the buffer; here each usable record becomes a row of the
// candidate table, so the next training run learns from the user's code:
//  - the state is the record's own features (the unoptimised module's 56
//    Autophase and 70 InstCount features, the ones a mined episode's step
//    carries), so a module_hash has one state whichever record it came from;
//  - each measured pipeline that is a candidate's (matched by pipeline
//    text) and not blocked for the module is a cell. Its value is on the
//    mined rows' scale, where -Oz is worth 1: a mined cell is worth
//    (start - size) / (start - oz) for the unoptimised module's size
//    `start`, which a record does not carry, so a record's cell is worth
//    1 + (oz - size) / oz. Within a row the order is the same, and the
//    order is what behaviour cloning reads (its demonstration is the row's
//    best); object_sizes get the measured bytes (the abstain margin's).
//
// Records read: outcome OPTIMIZED at -Os/-Oz, both feature vectors, and
// topk_measured with "default<Oz>" first, its value equal to oz_alloc_size
// (values in allocated bytes: an ir_count policy's records count
// instructions and are left out), and some other candidate measured. A
// module the lab measured (mined episodes of this split) keeps the lab's row,
// which measured every candidate under the corpus's settings. Several
// records of one module: the one that measured the most candidates, the
// latest (then the smallest decision_id) of equals. Rows follow their
// module's split as canary cells do: a module the buffer records in another
// split stays out, one it does not know (the user's own code) is training
// data.

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "offline_rl/learner/dataset.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::offline_rl::internal {

inline constexpr char kOzPipeline[] = "default<Oz>";

struct TopkRow {
  std::string module_hash;
  std::vector<int64_t> autophase;
  std::vector<int64_t> inst_count;
  // (candidate index, measured allocated bytes), in candidate order.
  std::vector<std::pair<int, int64_t>> measured;
  int64_t oz_bytes = 0;
};

struct TopkRows {
  std::vector<TopkRow> rows;  // ordered by module_hash
  // Records of this split that made a row; topk records left out (no
  // features, values not in bytes, no candidate measured, or a module the
  // lab measured); cells left out because their pair is blocked.
  int64_t decisions = 0;
  int64_t skipped = 0;
  int64_t blocked = 0;
  std::string digest_input;  // what the rows hold, for the data snapshot
};

// The rows of `split` (`train_split` takes modules the buffer does not
// know). `lab_modules`: modules this split's mined episodes measured.
absl::StatusOr<TopkRows> ReadTopkRows(
    replay_buffer::ReplayStore& store, const std::vector<Candidate>& candidates,
    const std::function<bool(const std::string&, const std::string&)>& blocked,
    const std::string& split, const std::string& train_split,
    const std::set<std::string>& lab_modules);

// A record's cell value (above): 1 + (oz - size) / oz.
double TopkCellValue(int64_t oz_bytes, int64_t bytes);

}  // namespace phaseloop::offline_rl::internal

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_TOPK_OUTCOMES_H_
