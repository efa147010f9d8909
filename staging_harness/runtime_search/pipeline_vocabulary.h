#ifndef PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_PIPELINE_VOCABULARY_H_
#define PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_PIPELINE_VOCABULARY_H_

// The pipelines runtime search proposes for a hot module built at -O3.
// Informed by a calibration on this kind of machine (LLVM 16): gains of
// 7-14 % came from runtime loop unrolling, -O3 run twice, and -O3 after an
// -O1 prefix; -Os ran one program at 0.50x and partial-inliner first at
// 0.74x, so neither is proposed. Every pipeline is one pipeline_check
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
};

// The whole vocabulary, in a fixed order.
const std::vector<Candidate>& RuntimeVocabulary();

// The vocabulary's pipelines that passes::CheckPolicyPipeline accepts; each
// refused one is described in `refused` (pipeline and reason).
std::vector<Candidate> CheckedVocabulary(std::vector<std::string>* refused);

// `candidates` in an order drawn from (seed, module_hash): the same on every
// machine (own Fisher-Yates over a splitmix64 stream, not std::shuffle,
// whose result differs between standard libraries).
std::vector<Candidate> SeededOrder(std::vector<Candidate> candidates,
                                   uint64_t seed,
                                   const std::string& module_hash);

}  // namespace phaseloop::runtime_search

#endif  // PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_PIPELINE_VOCABULARY_H_
