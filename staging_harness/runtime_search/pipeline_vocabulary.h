#ifndef PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_PIPELINE_VOCABULARY_H_
#define PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_PIPELINE_VOCABULARY_H_

// The pipelines runtime search proposes for a hot module built at -O3.
// Informed by a calibration on this kind of machine (LLVM 16): gains of
// 7-14 % came from runtime loop unrolling, -O3 run twice, and -O3 after an
// -O1 prefix; -Os ran one program at 0.50x and partial-inliner first at
// 0.74x, so neither is proposed. Code layout that reads a profile
// (codegen<split-functions>) is proposed only in a profile-guided search.
// Every pipeline is one pipeline_check
// accepts (a refused one would fail open to the baseline); the test proves
// it, and CheckedVocabulary drops (and names) any that a future action
// space refuses.

#include <cstdint>
#include <string>
#include <vector>

namespace phaseloop::runtime_search {

struct Candidate {
  std::string pipeline;  // PassBuilder text, as a table policy row holds it
  std::string why;       // one line for the report
  // Acts only on a build with a profile (a code-layout choice that reads
  // it): without one its object is -O3's, an evaluation spent for nothing.
  bool needs_profile = false;
};

// The whole vocabulary, in a fixed order.
const std::vector<Candidate>& RuntimeVocabulary();

// What the candidate's build flags (StageOptions::candidate_cflags) change
// for the vocabulary: with a profile (-fprofile-instr-use=, -fprofile-use=)
// code-layout choices act; under -flto (the last -flto[=...] / -fno-lto)
// the link generates the code, so no codegen<...> choice acts.
struct CandidateBuild {
  bool profile = false;
  bool lto = false;
};
CandidateBuild CandidateBuildOf(const std::string& candidate_cflags);

// The vocabulary's pipelines that passes::CheckWholePolicyPipeline accepts,
// without those that cannot act on the candidate's build (need a profile it
// lacks; codegen<...> under LTO); each refused one is described in
// `refused` (pipeline and reason).
std::vector<Candidate> CheckedVocabulary(const CandidateBuild& build,
                                         std::vector<std::string>* refused);

// `candidates` in an order drawn from (seed, module_hash): the same on every
// machine (own Fisher-Yates over a splitmix64 stream, not std::shuffle,
// whose result differs between standard libraries); then those that need a
// profile moved to the front, in that order: they are a profile-guided
// search's own lever (the splitter gained 1.7-2 % on top of the profile on
// two of three workloads), which the budget ran out before when drawn late.
std::vector<Candidate> SeededOrder(std::vector<Candidate> candidates,
                                   uint64_t seed,
                                   const std::string& module_hash);

}  // namespace phaseloop::runtime_search

#endif  // PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_PIPELINE_VOCABULARY_H_
