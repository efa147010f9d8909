#include "staging_harness/runtime_search/search_records.h"

#include <unistd.h>

#include <chrono>
#include <set>

#include "absl/strings/str_cat.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/passes/action_space.h"

namespace phaseloop::runtime_search {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Host() {
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 ? name : "";
}

// The module's record: the workload's split is the module's, so the
// learner's split filter keeps held-out workloads' modules out of training.
v1::ModuleRecord ModuleRecordOf(const workloads::Workload& workload,
                                const v1::Decision& decision) {
  v1::ModuleRecord record;
  record.set_module_hash(decision.module_hash());
  record.set_name(absl::StrCat(workload.name, "/", decision.source()));
  record.set_origin(absl::StrCat("workload:", workload.path));
  record.set_convention("real-build");
  record.set_opt_level(decision.opt_level());
  record.set_split(workloads::SplitName(workload.split));
  record.set_ir_count_o3(decision.ir_count_before());
  return record;
}

}  // namespace

bool RanPipeline(const runner::BuiltVariant& candidate,
                 const std::string& module_hash, const std::string& pipeline,
                 std::string* why) {
  bool seen = false;
  for (const v1::Decision& d : candidate.decisions) {
    if (d.module_hash() != module_hash) continue;
    seen = true;
    if (d.outcome() != v1::OPTIMIZED || d.pipeline() != pipeline) {
      *why = absl::StrCat(
          "the wrapper ran ", d.pipeline().empty() ? "clang" : d.pipeline(),
          " for ", d.source(), " (outcome ",
          v1::DecisionOutcome_Name(d.outcome()),
          d.reason().empty() ? "" : absl::StrCat(", ", d.reason()), ")");
      return false;
    }
  }
  if (!seen) *why = "no translation unit of the build had this module_hash";
  return seen;
}

absl::StatusOr<std::string> ModuleHashOfSource(
    const runner::BuiltVariant& built, const std::string& source) {
  std::set<std::string> hashes;
  for (const v1::Decision& d : built.decisions) {
    if (d.source() == source && d.outcome() == v1::OPTIMIZED) {
      hashes.insert(d.module_hash());
    }
  }
  if (hashes.empty()) {
    return absl::NotFoundError(
        absl::StrCat("the profile-guided build (", built.build_dir,
                     ") has no unit the wrapper optimised from ", source));
  }
  if (hashes.size() > 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the profile-guided build compiles ", source, " ", hashes.size(),
        " ways: its hot module cannot be told apart"));
  }
  return *hashes.begin();
}

const v1::Decision* BaselineDecision(const runner::BuiltVariant& baseline,
                                     const std::string& module_hash) {
  for (const v1::Decision& d : baseline.decisions) {
    if (d.module_hash() == module_hash && d.autophase_size() > 0 &&
        d.inst_count_size() > 0) {
      return &d;
    }
  }
  return nullptr;
}

replay_buffer::WriteBatch RecordsOf(const staging::StageResult& result,
                                    const std::string& module_hash,
                                    const std::string& pipeline,
                                    const char* behaviour, uint64_t seed,
                                    const workloads::Workload& workload,
                                    const v1::Decision* features,
                                    std::string* episode_id) {
  staging::StageRecords staged = staging::RecordsOf(result);
  replay_buffer::WriteBatch batch;
  v1::Episode episode;
  if (features != nullptr) {
    batch.modules.push_back(ModuleRecordOf(workload, *features));
    v1::Step* step = episode.add_steps();
    step->set_index(0);
    step->set_action(-1);
    step->set_action_name(pipeline);
    step->set_action_probability(1);
    *step->mutable_autophase() = features->autophase();
    *step->mutable_inst_count() = features->inst_count();
  }
  episode.set_episode_id(ir::ContentHash(
      absl::StrCat("runtime_search\n", result.workload, "\n", module_hash, "\n",
                   pipeline, "\n", result.candidate.build_id)));
  episode.set_module_hash(module_hash);
  episode.set_action_space_version(passes::ActionSpace::Llvm16().version());
  episode.set_objective("runtime");
  episode.set_behaviour_policy(behaviour);
  episode.set_seed(seed);
  episode.set_pipeline(pipeline);
  episode.set_unix_time_ms(NowMs());
  episode.set_host(Host());
  episode.set_seconds(result.elapsed_s);
  *episode_id = episode.episode_id();
  batch.episodes.push_back(episode);
  batch.decisions = std::move(staged.decisions);
  for (v1::FinalReward reward : staged.rewards) {
    reward.set_reward_id(ir::ContentHash(
        absl::StrCat(reward.reward_id(), "\n", episode.episode_id())));
    reward.set_episode_id(episode.episode_id());
    reward.set_module_hash(module_hash);
    batch.rewards.push_back(std::move(reward));
  }
  if (staged.miscompile) batch.miscompiles.push_back(*staged.miscompile);
  return batch;
}

}  // namespace phaseloop::runtime_search
