#include "staging_harness/runtime_search/pipeline_vocabulary.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "compiler_driver/cc_wrapper/argument_processing.h"
#include "compiler_driver/passes/pipeline_check.h"

namespace phaseloop::runtime_search {
namespace {

// Loop unrolling with runtime trip counts (x86's defaults leave it off at
// -O3), then the clean-up -O3 would have run after its own unroller.
constexpr char kRuntimeUnroll[] =
    "function(loop-unroll<O3;runtime>,instcombine,simplifycfg)";
constexpr char kRuntimePartialUnroll[] =
    "function(loop-unroll<O3;runtime;partial>,instcombine,simplifycfg)";

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

const std::vector<Candidate>& RuntimeVocabulary() {
  static const std::vector<Candidate>* vocabulary = new std::vector<Candidate>{
      {"default<O3>,default<O3>", "-O3 twice"},
      {"default<O1>,default<O3>", "-O3 after an -O1 prefix"},
      {absl::StrCat("default<O3>,", kRuntimeUnroll),
       "-O3, then runtime unrolling"},
      {absl::StrCat("default<O3>,", kRuntimePartialUnroll),
       "-O3, then runtime and partial unrolling"},
      {absl::StrCat("default<O1>,", kRuntimeUnroll, ",default<O3>"),
       "-O1, runtime unrolling, then -O3"},
      {absl::StrCat("default<O3>,default<O3>,", kRuntimeUnroll),
       "-O3 twice, then runtime unrolling"},
      {"default<O2>,default<O3>", "-O3 after an -O2 prefix"},
      {"default<O2>", "-O2 (less inlining and unrolling than -O3)"},
      // -O3 with the inliner's threshold changed (250 at -O3): a tuned
      // standard pipeline (compiler_driver/passes/tuned_pipeline.h).
      {"tuned<O3;inline-threshold=500>", "-O3, inlining twice as eagerly"},
      {"tuned<O3;inline-threshold=1000>",
       "-O3, inlining four times as eagerly"},
      {"tuned<O3;inline-threshold=100>", "-O3, inlining less eagerly"},
      // Code layout (compiler_driver/codegen/codegen_options.h): acts only
      // where the build has a profile (search --profile), so proposed only
      // then.
      {"default<O3>,codegen<split-functions>",
       "-O3, blocks the profile saw cold split out of hot functions",
       /*needs_profile=*/true},
  };
  return *vocabulary;
}

CandidateBuild CandidateBuildOf(const std::string& candidate_cflags) {
  CandidateBuild build;
  for (absl::string_view word : absl::StrSplit(
           candidate_cflags, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    if (absl::StartsWith(word, "-fprofile-instr-use=") ||
        absl::StartsWith(word, "-fprofile-use=")) {
      build.profile = true;
    } else if (const cc_wrapper::LtoFlag flag = cc_wrapper::ParseLtoFlag(
                   std::string_view(word.data(), word.size()));
               flag.kind == cc_wrapper::LtoFlag::kSets) {
      build.lto = flag.mode != cc_wrapper::LtoMode::kNone;
    }
  }
  return build;
}

std::vector<Candidate> CheckedVocabulary(const CandidateBuild& build,
                                         std::vector<std::string>* refused) {
  std::vector<Candidate> accepted;
  for (const Candidate& c : RuntimeVocabulary()) {
    if (c.needs_profile && !build.profile) continue;
    if (build.lto && absl::StrContains(c.pipeline, "codegen<")) continue;
    absl::Status checked = passes::CheckWholePolicyPipeline(c.pipeline, "");
    if (checked.ok()) {
      accepted.push_back(c);
    } else {
      refused->push_back(absl::StrCat(c.pipeline, ": ", checked.message()));
    }
  }
  return accepted;
}

std::vector<Candidate> SeededOrder(std::vector<Candidate> candidates,
                                   uint64_t seed,
                                   const std::string& module_hash) {
  uint64_t state = seed;
  for (char c : module_hash) state = state * 131 + static_cast<uint8_t>(c);
  for (size_t i = candidates.size(); i > 1; --i) {
    const size_t j = SplitMix64(state) % i;
    std::swap(candidates[i - 1], candidates[j]);
  }
  std::stable_partition(candidates.begin(), candidates.end(),
                        [](const Candidate& c) { return c.needs_profile; });
  return candidates;
}

}  // namespace phaseloop::runtime_search
