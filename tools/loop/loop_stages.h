#ifndef PHASELOOP_TOOLS_LOOP_LOOP_STAGES_H_
#define PHASELOOP_TOOLS_LOOP_LOOP_STAGES_H_

// The loop's stages (tools/loop/loop_runner.h lists them): each builds the
// `phaseloop` command it runs, runs it through the StageExecutor, and reads
// what it needs from the command's JSON or state files into the iteration.

#include <string>

#include "absl/status/statusor.h"
#include "phaseloop/v1/loop.pb.h"
#include "tools/loop/loop_config.h"
#include "tools/loop/loop_runner.h"

namespace phaseloop::loop {

struct StageContext {
  const LoopConfig* config = nullptr;
  const LoopSetup* setup = nullptr;
  std::string iteration_dir;  // this iteration's files
  std::string lab_dir;        // the runtime searches' shared work dir
  int index = 0;              // the iteration, 0-based
  // The whole run, for what earlier iterations found (read only; the
  // iteration being run is the stage's own argument).
  const v1::LoopRun* run = nullptr;
};

struct StageOutcome {
  enum Kind {
    kDone,           // go on with the next stage
    kEndsIteration,  // done, and the iteration has nothing more to do
    kFailed,         // the loop cannot go on: the summary says why
    kStopped,        // a stop request interrupted it: resumable
  };
  Kind kind = kDone;
  std::string summary;  // one line of key figures
};

using StageFunction = absl::StatusOr<StageOutcome> (*)(const StageContext&,
                                                       v1::LoopIteration&,
                                                       StageExecutor&);

struct StageDefinition {
  const char* name;
  StageFunction run;
};

// explore, train, publish, stage, canary: in the order they run.
const std::vector<StageDefinition>& LoopStages();

// The build figures an earlier iteration of ctx.run (before ctx.index)
// found for a build with `version`: its candidate's or its stable's, the
// newest first; nullptr when none has any. What stands for a build Bazel
// served wholly from its disk cache (it compiled nothing, so it recorded
// no decisions, and it gave the same objects as that earlier build).
const v1::LoopBuildFigures* EarlierBuildFigures(const StageContext& ctx,
                                                const std::string& version);

// The last non-empty line of a log (from its last 4 KiB), control
// characters blanked: what a failed command said last.
std::string LastLogLine(const std::string& path);

// The canary id of an iteration: <loop_id>-<n> (n from 1).
std::string CanaryIdOf(const std::string& loop_id, int index);

}  // namespace phaseloop::loop

#endif  // PHASELOOP_TOOLS_LOOP_LOOP_STAGES_H_
