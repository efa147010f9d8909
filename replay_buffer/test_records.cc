#include "replay_buffer/test_records.h"

#include "absl/strings/str_cat.h"

namespace phaseloop::replay_buffer::test_records {
namespace {

// splitmix64: a tiny deterministic generator for record contents.
uint64_t Next(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

v1::ModuleRecord MakeModule(const std::string& module_hash,
                            const std::string& split, int64_t ir_count_oz,
                            int64_t text_size_oz) {
  v1::ModuleRecord m;
  m.set_module_hash(module_hash);
  m.set_name(absl::StrCat("test/", module_hash));
  m.set_origin("test");
  m.set_convention("real-build");
  m.set_opt_level("Oz");
  m.set_split(split);
  m.set_ir_count_o0(ir_count_oz * 3);
  m.set_ir_count_oz(ir_count_oz);
  m.set_text_size_oz(text_size_oz);
  return m;
}

v1::Episode MakeEpisode(const std::string& episode_id,
                        const std::string& module_hash, int num_steps,
                        uint64_t seed) {
  uint64_t state = seed;
  v1::Episode e;
  e.set_episode_id(episode_id);
  e.set_module_hash(module_hash);
  e.set_action_space_version("llvm-16/v1");
  e.set_objective("ir_count");
  e.set_behaviour_policy("random");
  e.set_seed(seed);
  int64_t ir_count = 200;
  for (int i = 0; i < num_steps; ++i) {
    v1::Step* s = e.add_steps();
    s->set_index(i);
    for (int f = 0; f < 56; ++f) s->add_autophase(Next(&state) % 500);
    for (int f = 0; f < 70; ++f) s->add_inst_count(Next(&state) % 500);
    s->set_action(static_cast<int32_t>(Next(&state) % 122));
    s->set_action_name(absl::StrCat("pass-", s->action()));
    s->set_action_probability(1.0 / 122);
    const int64_t drop = static_cast<int64_t>(Next(&state) % 5);
    s->set_reward(static_cast<double>(drop) / 100.0);
    ir_count -= drop;
    s->set_ir_count_after(ir_count);
  }
  e.set_final_ir_count(ir_count);
  e.set_unix_time_ms(1700000000000 + static_cast<int64_t>(seed % 100000));
  e.set_host("test-host");
  e.set_seconds(0.5);
  return e;
}

v1::FinalReward MakeReward(const std::string& reward_id,
                           const std::string& source,
                           const std::string& episode_id, double value) {
  v1::FinalReward r;
  r.set_reward_id(reward_id);
  r.set_source(source);
  r.set_episode_id(episode_id);
  r.set_value(value);
  r.set_window_start_ms(1700000000000);
  return r;
}

v1::Decision MakeDecision(const std::string& decision_id,
                          const std::string& module_hash,
                          const std::string& build_id) {
  v1::Decision d;
  d.set_decision_id(decision_id);
  d.set_outcome(v1::OPTIMIZED);
  d.set_module_hash(module_hash);
  d.set_build_id(build_id);
  d.set_policy_version("p1");
  return d;
}

}  // namespace phaseloop::replay_buffer::test_records
