#include "replay_buffer/replay_store.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "replay_buffer/objective_values.h"
#include "replay_buffer/sqlite_replay_store.h"

namespace phaseloop::replay_buffer {

size_t WriteBatch::size() const {
  return modules.size() + episodes.size() + rewards.size() + decisions.size() +
         best_sequences.size() + deployments.size() + policy_versions.size() +
         miscompiles.size();
}

absl::Status ValidateWriteBatch(const WriteBatch& batch) {
  auto bad = [](const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, "; nothing of the batch was stored"));
  };
  for (const v1::ModuleRecord& m : batch.modules) {
    if (m.module_hash().empty()) {
      return bad(absl::StrCat("module '", m.name(), "' has no module_hash"));
    }
  }
  for (const v1::Episode& e : batch.episodes) {
    if (e.episode_id().empty()) {
      return bad(absl::StrCat("an episode of module '", e.module_hash(),
                              "' has no episode_id"));
    }
    if (e.module_hash().empty()) {
      return bad(
          absl::StrCat("episode '", e.episode_id(), "' has no module_hash"));
    }
    // SQLite stores NaN as NULL: one such record failed every ingest of
    // its batch, run after run.
    if (!std::isfinite(e.seconds())) {
      return bad(absl::StrCat("episode '", e.episode_id(),
                              "' has non-finite seconds"));
    }
    std::set<int32_t> indexes;
    for (const v1::Step& s : e.steps()) {
      if (!indexes.insert(s.index()).second) {
        return bad(absl::StrCat("episode '", e.episode_id(),
                                "' has two steps with index ", s.index()));
      }
      if (!std::isfinite(s.reward()) ||
          !std::isfinite(s.action_probability())) {
        return bad(absl::StrCat("episode '", e.episode_id(), "' step ",
                                s.index(),
                                " has a non-finite reward or "
                                "action_probability"));
      }
    }
  }
  for (const v1::FinalReward& r : batch.rewards) {
    if (r.reward_id().empty()) return bad("a final reward has no reward_id");
    if (r.source() != "staging" && r.source() != "canary") {
      return bad(absl::StrCat("final reward '", r.reward_id(), "' has source '",
                              r.source(),
                              "'; expected \"staging\" or \"canary\""));
    }
    if (!std::isfinite(r.value())) {
      return bad(absl::StrCat("final reward '", r.reward_id(),
                              "' has a non-finite value"));
    }
    if (r.has_relative_value() && !std::isfinite(r.relative_value())) {
      return bad(absl::StrCat("final reward '", r.reward_id(),
                              "' has a non-finite relative_value"));
    }
  }
  for (const v1::Decision& d : batch.decisions) {
    if (d.decision_id().empty()) return bad("a decision has no decision_id");
  }
  for (const v1::BestSequence& b : batch.best_sequences) {
    if (b.module_hash().empty() || b.objective().empty()) {
      return bad("a best sequence has no module_hash or objective");
    }
  }
  for (const v1::DeploymentRecord& d : batch.deployments) {
    if (d.deployment_id().empty()) {
      return bad("a deployment has no deployment_id");
    }
  }
  for (const v1::PolicyVersionRecord& p : batch.policy_versions) {
    if (p.policy_version().empty()) {
      return bad("a policy version record has no policy_version");
    }
  }
  for (const v1::Miscompile& m : batch.miscompiles) {
    const std::string id =
        m.miscompile_id().empty() ? MiscompileIdOf(m) : m.miscompile_id();
    if (m.workload().empty() || m.run().empty()) {
      return bad(absl::StrCat("miscompile '", id,
                              "' has no workload or run; set both (the "
                              "workload's name and the run's)"));
    }
    static constexpr const char* kVerdicts[] = {
        kVerdictMiscompile, kVerdictUndefinedBehaviour, kVerdictUnknown,
        kVerdictTimedOut,   kVerdictBuildFlags,         kVerdictBolt};
    if (std::find(std::begin(kVerdicts), std::end(kVerdicts), m.verdict()) ==
        std::end(kVerdicts)) {
      return bad(absl::StrCat("miscompile '", id, "' has verdict '",
                              m.verdict(), "'; expected one of ",
                              absl::StrJoin(kVerdicts, ", ")));
    }
    if ((m.verdict() == kVerdictBuildFlags || m.verdict() == kVerdictBolt) &&
        m.blamed_size() > 0) {
      return bad(absl::StrCat("miscompile '", id, "' has verdict '",
                              m.verdict(),
                              "', which blames no pipeline, but blames ",
                              m.blamed_size(), " (module, pipeline) pairs"));
    }
    for (const v1::BlamedPipeline& b : m.blamed()) {
      if (b.module_hash().empty() || b.pipeline().empty()) {
        return bad(absl::StrCat("miscompile '", id,
                                "' blames a pair with an empty module_hash "
                                "or pipeline"));
      }
    }
  }
  for (const ConsumerOffset& o : batch.offsets) {
    if (o.group.empty() || o.topic.empty() || o.partition < 0 ||
        o.next_offset < 0) {
      return bad(absl::StrCat("consumer offset (group '", o.group, "', topic '",
                              o.topic, "', partition ", o.partition, ", next ",
                              o.next_offset, ") is incomplete or negative"));
    }
  }
  return absl::OkStatus();
}

std::string MiscompileIdOf(const v1::Miscompile& m) {
  return absl::StrCat("miscompile/", m.workload(), "/", m.build_id(), "/",
                      m.candidate(), "/", m.run());
}

bool BestSequenceOf(const v1::Episode& episode, v1::BestSequence* best) {
  const std::string& objective = episode.objective();
  if (!IsMeasuredObjective(objective)) return false;
  std::vector<int32_t> actions;
  int64_t best_value = 0;
  size_t best_length = 0;
  for (const v1::Step& step : episode.steps()) {
    if (step.failed()) continue;  // rolled back: not part of the sequence
    actions.push_back(step.action());
    const int64_t value = StepValue(step, objective);
    if (value > 0 && (best_value == 0 || value < best_value)) {
      best_value = value;
      best_length = actions.size();
    }
  }
  if (best_value == 0) {
    best_value = FinalValue(episode, objective);
    best_length = actions.size();
    if (best_value <= 0) return false;
  }
  best->Clear();
  best->set_module_hash(episode.module_hash());
  best->set_objective(episode.objective());
  best->set_action_space_version(episode.action_space_version());
  for (size_t i = 0; i < best_length; ++i) best->add_actions(actions[i]);
  best->set_value(best_value);
  best->set_episode_id(episode.episode_id());
  return true;
}

absl::StatusOr<std::unique_ptr<ReplayStore>> OpenReplayStore(
    const std::string& path, const OpenOptions& options) {
  return internal::OpenSqliteReplayStore(path, options);
}

}  // namespace phaseloop::replay_buffer
