#ifndef PHASELOOP_REPLAY_BUFFER_TEST_RECORDS_H_
#define PHASELOOP_REPLAY_BUFFER_TEST_RECORDS_H_

// Deterministic, realistic-sized records for replay buffer tests and the
// benchmark (testonly): the same arguments give the same bytes.

#include <cstdint>
#include <string>

#include "proto/phaseloop/v1/decision.pb.h"
#include "proto/phaseloop/v1/episode.pb.h"

namespace phaseloop::replay_buffer::test_records {

v1::ModuleRecord MakeModule(const std::string& module_hash,
                            const std::string& split, int64_t ir_count_oz = 100,
                            int64_t text_size_oz = 1000);

// An "ir_count" search episode of `num_steps` steps (56 Autophase and 70
// InstCount features each, ir_count falling from 200), content from `seed`.
v1::Episode MakeEpisode(const std::string& episode_id,
                        const std::string& module_hash, int num_steps,
                        uint64_t seed);

v1::FinalReward MakeReward(const std::string& reward_id,
                           const std::string& source,
                           const std::string& episode_id, double value);

v1::Decision MakeDecision(const std::string& decision_id,
                          const std::string& module_hash,
                          const std::string& build_id);

}  // namespace phaseloop::replay_buffer::test_records

#endif  // PHASELOOP_REPLAY_BUFFER_TEST_RECORDS_H_
