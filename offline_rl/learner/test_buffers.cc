#include "offline_rl/learner/test_buffers.h"

#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "compiler_driver/passes/action_space.h"

namespace phaseloop::offline_rl::testing {
namespace {

uint64_t Next(uint64_t* state) {  // splitmix64
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double Noise(uint64_t* state) {  // uniform in [-0.005, 0.005)
  return (static_cast<double>(Next(state) % 10000) / 10000.0 - 0.5) * 0.01;
}

v1::ModuleRecord Module(int i, int train_modules) {
  v1::ModuleRecord m;
  m.set_module_hash(absl::StrCat("m", i));
  m.set_name(absl::StrCat("test/m", i));
  m.set_origin("test");
  m.set_convention("real-build");
  m.set_opt_level("Oz");
  m.set_split(i < train_modules ? "train" : "validation");
  m.set_ir_count_o0(300);
  m.set_ir_count_oz(100);
  m.set_text_size_oz(1000);
  m.set_alloc_size_oz(1200);
  return m;
}

// Features of a module of `kind` at step `t`: similar modules have similar
// counts (small noise), the kind shows in one count; totals shrink with t.
void FillFeatures(uint64_t* state, int kind, int t, v1::Step* s) {
  // Noise on every 8th count only (a few irrelevant features).
  auto noise = [state](int f) {
    return f % 8 == 1 ? static_cast<int64_t>(Next(state) % 4) : int64_t{0};
  };
  for (int f = 0; f < 56; ++f) s->add_autophase(noise(f) + 20 + f);
  const int64_t total = 400 - 10 * t + static_cast<int64_t>(Next(state) % 40);
  for (int f = 0; f < 70; ++f) {
    int64_t v = f == 0 ? total : noise(f) + 10;
    if (f == 2 + kind) v = total / 2;
    s->add_inst_count(v);
  }
}

}  // namespace

std::vector<std::string> CandidateNames() { return {"oz", "c1", "c2", "c3"}; }

absl::Status WriteCandidateBuffer(replay_buffer::ReplayStore& store,
                                  int train_modules, int validation_modules,
                                  uint64_t seed) {
  replay_buffer::WriteBatch batch;
  uint64_t state = seed;
  const std::vector<std::string> names = CandidateNames();
  for (int i = 0; i < train_modules + validation_modules; ++i) {
    batch.modules.push_back(Module(i, train_modules));
    const int kind = static_cast<int>(Next(&state) % 3);
    v1::Step features;
    FillFeatures(&state, kind, 0, &features);
    for (size_t c = 0; c < names.size(); ++c) {
      v1::Episode e;
      e.set_episode_id(absl::StrCat("m", i, "-", names[c]));
      e.set_module_hash(absl::StrCat("m", i));
      e.set_action_space_version("llvm-16/v1");
      e.set_objective("alloc_size");
      e.set_behaviour_policy(absl::StrCat("candidate:", names[c]));
      v1::Step* s = e.add_steps();
      *s = features;
      s->set_index(0);
      s->set_action_probability(1.0);
      double reward = 0;
      if (c > 0) {
        reward =
            (static_cast<int>(c) == kind + 1 ? 0.05 : -0.03) + Noise(&state);
      }
      s->set_reward(reward);
      // .text is most of the object; the rest (data, unwind tables) does
      // not move with the candidate here.
      s->set_text_size_after(static_cast<int64_t>(1000 * (1 - reward)));
      s->set_alloc_size_after(s->text_size_after() + 200);
      e.set_final_text_size(s->text_size_after());
      e.set_final_alloc_size(s->alloc_size_after());
      batch.episodes.push_back(std::move(e));
    }
  }
  return store.Write(batch);
}

absl::Status WriteRuntimeSearchBuffer(replay_buffer::ReplayStore& store,
                                      const std::vector<std::string>& pipelines,
                                      int train_modules, int held_out_modules,
                                      uint64_t seed) {
  replay_buffer::WriteBatch batch;
  uint64_t state = seed;
  for (int i = 0; i < train_modules + held_out_modules; ++i) {
    const std::string hash = absl::StrCat("r", i);
    v1::ModuleRecord m;
    m.set_module_hash(hash);
    m.set_name(absl::StrCat("workload/r", i, ".c"));
    m.set_origin("workload:test");
    m.set_convention("real-build");
    m.set_opt_level("O3");
    m.set_split(i < train_modules ? "train" : "validation");
    batch.modules.push_back(m);
    const int kind = static_cast<int>(Next(&state) % 3);
    v1::Step features;
    FillFeatures(&state, kind, 0, &features);
    features.set_action(-1);
    for (size_t p = 0; p <= pipelines.size(); ++p) {
      // The last round repeats the last pipeline without a reward.
      const bool unjudged = p == pipelines.size();
      if (unjudged) --p;
      if (pipelines[p] == "default<O3>") continue;
      v1::Episode e;
      e.set_episode_id(absl::StrCat(hash, "-", p, unjudged ? "-x" : ""));
      e.set_module_hash(hash);
      e.set_action_space_version("llvm-16/v1");
      e.set_objective("runtime");
      e.set_behaviour_policy(replay_buffer::kBehaviourRuntimeSearch);
      e.set_pipeline(pipelines[p]);
      *e.add_steps() = features;
      batch.episodes.push_back(e);
      if (unjudged) break;
      v1::FinalReward r;
      r.set_reward_id(absl::StrCat("staging/", e.episode_id()));
      r.set_source("staging");
      r.set_module_hash(hash);
      r.set_episode_id(e.episode_id());
      r.set_value((static_cast<int>(p) == 1 + kind ? 0.04 : -0.02) +
                  Noise(&state));
      batch.rewards.push_back(r);
    }
  }
  return store.Write(batch);
}

absl::Status WriteCanaryRun(
    replay_buffer::ReplayStore& store, const std::string& split,
    const std::string& run_id, const std::string& build_id, double reward,
    const std::function<std::string(const std::string& module_hash, int kind)>&
        pipeline_of) {
  replay_buffer::EpisodeFilter filter;
  filter.split = split;
  filter.objective = "runtime";
  auto keys = store.ListEpisodes(filter);
  if (!keys.ok()) return keys.status();
  std::vector<std::string> ids;
  for (const auto& k : *keys) ids.push_back(k.episode_id);
  auto episodes = store.ReadEpisodes(ids);
  if (!episodes.ok()) return episodes.status();
  replay_buffer::WriteBatch batch;
  std::map<std::string, bool> seen;
  for (const v1::Episode& e : *episodes) {
    if (e.steps_size() != 1 || seen[e.module_hash()]) continue;
    seen[e.module_hash()] = true;
    const v1::Step& s = e.steps(0);
    int kind = 0;  // FillFeatures: inst_count[2 + kind] is the large one
    for (int k = 1; k < 3; ++k) {
      if (s.inst_count(2 + k) > s.inst_count(2 + kind)) kind = k;
    }
    const std::string pipeline = pipeline_of(e.module_hash(), kind);
    if (pipeline.empty()) continue;
    v1::Decision& d = batch.decisions.emplace_back();
    d.set_decision_id(absl::StrCat(build_id, "/", e.module_hash()));
    d.set_outcome(v1::OPTIMIZED);
    d.set_opt_level("O3");
    d.set_module_hash(e.module_hash());
    d.set_pipeline(pipeline);
    d.set_build_id(build_id);
    d.set_policy_version("speed-policy");
    *d.mutable_autophase() = s.autophase();
    *d.mutable_inst_count() = s.inst_count();
  }
  v1::FinalReward& r = batch.rewards.emplace_back();
  r.set_reward_id(absl::StrCat("canary-run/", run_id));
  r.set_source("canary");
  r.set_policy_version("speed-policy");
  r.set_build_id(build_id);
  r.set_deployment_id(absl::StrCat("canary-", run_id));
  r.set_value(reward);
  return store.Write(batch);
}

absl::Status WriteCandidatesFile(const std::string& path) {
  std::ofstream out(path);
  out << R"json({"candidates": [
  {"name": "oz", "actions": [], "pipeline": "default<Oz>"},
  {"name": "c1", "actions": ["instcombine", "simplifycfg"], "pipeline": "function(instcombine),function(simplifycfg)"},
  {"name": "c2", "actions": [3], "pipeline": "function(sroa)"},
  {"name": "c3", "actions": ["gvn"], "pipeline": "function(gvn)"}
]}
)json";
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status WriteStepwiseBuffer(replay_buffer::ReplayStore& store,
                                 int train_modules, int validation_modules,
                                 int episodes_per_module, int steps,
                                 uint64_t seed) {
  replay_buffer::WriteBatch batch;
  uint64_t state = seed;
  for (int i = 0; i < train_modules + validation_modules; ++i) {
    batch.modules.push_back(Module(i, train_modules));
    const int kind = static_cast<int>(Next(&state) % 3);
    double best_return = -1e9;
    v1::BestSequence best;
    for (int k = 0; k < episodes_per_module; ++k) {
      v1::Episode e;
      e.set_episode_id(absl::StrCat("m", i, "-e", k));
      e.set_module_hash(absl::StrCat("m", i));
      e.set_action_space_version("llvm-16/v1");
      e.set_objective("alloc_size");
      e.set_behaviour_policy("random");
      e.set_seed(seed + k);
      double ret = 0;
      int64_t text = 1000;
      for (int t = 0; t < steps; ++t) {
        v1::Step* s = e.add_steps();
        s->set_index(t);
        FillFeatures(&state, kind, t, s);
        // Action 10 * kind + t is good for this kind; others random.
        const bool good = Next(&state) % 2 == 0;
        const int action =
            good ? 10 * kind + t : static_cast<int>(Next(&state) % 122);
        s->set_action(action);
        s->set_action_name(absl::StrCat("pass-", action));
        s->set_action_probability(1.0 / 122);
        const double reward = good ? 0.02 : -0.005 + Noise(&state);
        s->set_reward(reward);
        text -= static_cast<int64_t>(reward * 1000);
        s->set_text_size_after(text);
        s->set_alloc_size_after(text + 200);
        ret += reward;
      }
      e.set_final_text_size(text);
      e.set_final_alloc_size(text + 200);
      if (ret > best_return) {
        best_return = ret;
        best.set_module_hash(e.module_hash());
        best.set_objective("alloc_size");
        best.set_action_space_version("llvm-16/v1");
        best.clear_actions();
        for (const v1::Step& s : e.steps()) best.add_actions(s.action());
        best.set_value(text + 200);
        best.set_episode_id(e.episode_id());
      }
      batch.episodes.push_back(std::move(e));
    }
    batch.best_sequences.push_back(best);
  }
  return store.Write(batch);
}

DatasetOptions Llvm16DatasetOptions() {
  const passes::ActionSpace& space = passes::ActionSpace::Llvm16();
  DatasetOptions options;
  options.action_space_version = space.version();
  for (const auto& a : space.actions()) {
    options.pass_names.push_back(a.name);
    options.pass_pipelines.push_back(a.pipeline);
  }
  return options;
}

}  // namespace phaseloop::offline_rl::testing
