// `phaseloop`: the command-line front of every component. Each subcommand is
// defined by its component (Add*Command) and sets the exit code:
// 0 success, 1 internal failure, 2 bad input (flags, files). Bare
// `phaseloop` prints its help and exits 2 (no command is a usage error);
// `phaseloop --version` prints the version and the LLVM it links.
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "canary/canary_command.h"
#include "common/command/command_line.h"
#include "common/command/version.h"
#include "common/kafka/kafka_command.h"
#include "common/protobuf/protobuf_logs.h"
#include "compiler_driver/cc_wrapper/cache_command.h"
#include "compiler_driver/cc_wrapper/decisions_command.h"
#include "compiler_driver/cc_wrapper/toolchain_command.h"
#include "compiler_driver/env_command.h"
#include "llvm/Config/llvm-config.h"
#include "offline_rl/candidates/candidates_command.h"
#include "offline_rl/evaluation/eval_command.h"
#include "offline_rl/learner/train_launcher.h"
#include "offline_rl/policy_store/policy_command.h"
#include "replay_buffer/buffer_command.h"
#include "replay_buffer/decision_producer.h"
#include "reward_engine/engine/rewards_command.h"
#include "reward_engine/sli/sli_command.h"
#include "reward_engine/slo/slo_command.h"
#include "staging_harness/corpus/corpus_command.h"
#include "staging_harness/profiling/profile_command.h"
#include "staging_harness/results/buffer_add_command.h"
#include "staging_harness/search/search_command.h"
#include "staging_harness/search/search_jobs_command.h"
#include "staging_harness/search/survey_command.h"
#include "staging_harness/staging/stage_command.h"
#include "tools/config/config_check_command.h"
#include "tools/loop/loop_command.h"
#include "tools/loop/report_command.h"

int main(int argc, char** argv) {
  // Every parse failure is reported with the file and the fix: libprotobuf
  // need not add its own line.
  phaseloop::protobuf::DropProtobufLogs();
  CLI::App app{
      "phaseloop: a production feedback-loop optimizer for LLVM pass ordering"};
  app.name("phaseloop");
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       std::string("phaseloop ") +
                           phaseloop::command::kPhaseloopVersion + " (LLVM " +
                           LLVM_VERSION_STRING + ")",
                       "Print the phaseloop version and the LLVM it links");
  int exit_code = 0;
  phaseloop::compiler_driver::AddEnvCommand(app, exit_code);
  phaseloop::compiler_driver::AddActionsCommand(app, exit_code);
  phaseloop::search::AddSurveyCommand(app, exit_code);
  phaseloop::search::AddSearchCommand(app, exit_code);
  phaseloop::search::AddSearchJobsCommand(app, exit_code);
  phaseloop::corpus::AddCorpusCommand(app, exit_code);
  phaseloop::staging::AddStageCommand(app, exit_code);
  phaseloop::profiling::AddProfileCommand(app, exit_code);
  // `decisions ship --kafka`: the compile path links no Kafka, so the
  // producer comes from the replay buffer's side of phaseloop.decisions.
  phaseloop::cc_wrapper::AddDecisionsCommand(
      app, exit_code,
      [](const std::string& bootstrap,
         const std::vector<const phaseloop::v1::DecisionBatch*>& batches) {
        return phaseloop::replay_buffer::ProduceDecisionBatches(bootstrap,
                                                                batches);
      });
  phaseloop::cc_wrapper::AddStatsCommand(app, exit_code);
  phaseloop::cc_wrapper::AddCacheCommand(app, exit_code);
  phaseloop::cc_wrapper::AddToolchainCommand(app, exit_code);
  phaseloop::kafka::AddKafkaCommand(app, exit_code);
  phaseloop::replay_buffer::AddBufferCommand(app, exit_code);
  phaseloop::search::AddBufferAddCommand(app, exit_code);  // buffer add
  phaseloop::policy_store::AddPolicyCommand(app, exit_code);
  phaseloop::sli::AddSliCommand(app, exit_code);
  phaseloop::evaluation::AddEvalCommand(app, exit_code);
  phaseloop::candidates::AddCandidatesCommand(app, exit_code);
  phaseloop::offline_rl::AddTrainCommand(app, exit_code);
  phaseloop::reward_engine::AddRewardsCommand(app, exit_code);
  phaseloop::slo::AddSloCommand(app, exit_code);
  phaseloop::canary::AddCanaryCommand(app, exit_code);
  phaseloop::loop::AddLoopCommand(app, exit_code);
  phaseloop::loop::AddReportCommand(app, exit_code);
  phaseloop::config_check::AddConfigCommand(app, exit_code);
  if (const auto rc = phaseloop::command::ParseCommandLine(
          app, argc, argv, std::cout, std::cerr)) {
    return *rc;
  }
  return exit_code;
}
