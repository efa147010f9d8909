#ifndef PHASELOOP_OFFLINE_RL_CANDIDATES_CANDIDATE_MINING_H_
#define PHASELOOP_OFFLINE_RL_CANDIDATES_CANDIDATE_MINING_H_

// `phaseloop candidates mine`: the candidate pipelines of the candidate
// formulation (Coreset-NVP style), mined from best-known sequences and
// measured on every module of a corpus split.
//
//  1. Sources: best sequences of the objective from a replay buffer
//     (ReplayStore best_sequences) and/or best-sequences files
//     (search/best_sequences.h), counted only on the split's own modules
//     (a test module's best would carry the test split into training; split
//     "" counts every module); a sequence whose pipeline the buffer's block
//     list blocks for a module (a miscompile blamed it) does not count for
//     that module. Identical action sequences are one
//     candidate; candidates are ranked by how many modules they are best
//     for, then shorter first, and the first max_candidates kept. -Oz
//     ("oz", pipeline default<Oz>, no actions) is always candidate 0; with
//     oz_prefix_variants, each candidate also gets "<name>+oz" =
//     "default<Oz>,<its pipeline>". Fixed candidates (fixed_candidates:
//     named pipelines, e.g. "ozmf" = tuned<Oz;merge-functions>, the best
//     fixed pipeline known) follow -Oz, before the mined ones, so that the
//     learned choice always includes them. With codegen_variants (the machine
//     outliner, no jump tables, or both), every candidate so far, -Oz
//     included, is also tried with those code generator options:
//     "<name>+mo", "<name>+njt", "<name>+sf" or combined ("<name>+mo+njt"),
//     its pipeline ending in
//     ",codegen<...>" (compiler_driver/codegen/codegen_options.h).
//  2. Every candidate runs on every module of the split, in process (opt-16
//     tuning, clang-16 codegen, as `phaseloop eval` measures), modules in
//     parallel over `threads`.
//  3. Results go into the replay buffer (when given) as one Episode per
//     (candidate, module): behaviour_policy "candidate:<name>", the
//     objective, action_space_version = CandidateSetVersion (the candidate
//     set is the action space of these episodes: the buffer's derived best
//     sequences are then "the best candidate of the module", never mistaken
//     for pass sequences), final_ir_count/_text_size/_alloc_size, and one Step
//     whose autophase/inst_count are the module's start state, action = the
//     candidate's index in the candidates file, action_name "candidate:<name>",
//     reward = (value_start - value) / (value_start - value_Oz) as search
//     normalises steps (denominator max(1, value_start) when -Oz does not
//     reduce). Episode ids are deterministic (candidate pipeline, module,
//     objective), so a rerun replaces its episodes. The corpus' module
//     records are written too (episode filters join on their split).
//  4. The candidates file (JSON, written atomically):
//     {"format": "phaseloop.candidates.v1", "objective",
//      "action_space_version" (of the actions), "candidate_set_version",
//      "candidates": [{"name", "actions", "pipeline", "best_for_modules",
//                      "mean_reward", "better_than_oz", "worse_than_oz"}]}
//
// Each module's candidates run in a forked child with a time limit
// (module_timeout_s): a pipeline that crashes or hangs LLVM costs that
// module, not the run.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler_driver/codegen/codegen_options.h"

namespace phaseloop::candidates {

struct MineOptions {
  std::string buffer;                   // replay buffer: source and sink
  std::vector<std::string> best_files;  // best-sequences files
  // alloc_size (the whole object), text_size or ir_count
  std::string objective = "alloc_size";
  std::string corpus_dir;
  std::string split = "train";  // "" = all modules
  int max_candidates = 32;      // besides -Oz
  bool oz_prefix_variants = false;
  // Named fixed pipelines that are always candidates (no actions), checked as
  // a policy's pipelines are (compiler_driver/passes/pipeline_check.h).
  struct FixedCandidate {
    std::string name;
    std::string pipeline;
  };
  std::vector<FixedCandidate> fixed_candidates;
  // Code generator options each candidate is also tried with (none: off).
  codegen::CodegenOptions codegen_variants;
  int threads = 1;
  int max_modules = 0;  // 0 = all
  // Modules whose unoptimised ir_count (manifest) is larger are left out:
  // every candidate is measured on every module, and a few huge modules
  // would cost more than all the others together. 0 = no limit.
  int64_t max_ir_count = 0;
  // Module names left out.
  std::vector<std::string> exclude;
  // Each module's candidates are measured in a child process; one that takes
  // longer (a pipeline hanging LLVM) is killed and the module counted failed.
  int module_timeout_s = 600;
  std::string out;             // the candidates file
  bool write_episodes = true;  // into `buffer`
  std::ostream* progress = nullptr;
};

struct Candidate {
  std::string name;
  std::vector<int32_t> actions;
  std::string pipeline;
  int best_for_modules = 0;
  double mean_reward = 0;
  int better_than_oz = 0;
  int worse_than_oz = 0;
};

struct MineReport {
  std::vector<Candidate> candidates;
  int modules = 0;
  int failed_modules = 0;  // incl. modules without function bodies
  int64_t episodes_written = 0;
  // Best sequences left out because their pipeline runs a pass no policy
  // may run (passes/pipeline_check.h): search explores every action.
  int refused_sequences = 0;
};

// InvalidArgument/NotFound naming the input for bad options, no sources, an
// unreadable corpus or buffer.
absl::StatusOr<MineReport> MineCandidates(const MineOptions& options);

// The candidate set alone (step 1), for tests and dry runs; counts the
// best sequences a policy could not run into `refused_sequences` when given.
absl::StatusOr<std::vector<Candidate>> CollectCandidates(
    const MineOptions& options, int* refused_sequences = nullptr);

// "candidates/<16 hex digits>": content hash of the candidates' pipelines
// in order.
std::string CandidateSetVersion(const std::vector<Candidate>& candidates);

absl::Status WriteCandidatesFile(const std::string& path,
                                 const std::string& objective,
                                 const std::vector<Candidate>& candidates);
absl::StatusOr<std::vector<Candidate>> ReadCandidatesFile(
    const std::string& path);

}  // namespace phaseloop::candidates

#endif  // PHASELOOP_OFFLINE_RL_CANDIDATES_CANDIDATE_MINING_H_
