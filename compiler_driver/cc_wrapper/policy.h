#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_POLICY_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_POLICY_H_

// The policy the wrapper consults per translation unit: which pass pipeline
// to run on its unoptimised module. One role interface, small
// implementations chosen by LoadPolicy from a spec:
//   baseline           clang's own pipeline for the user's -O level
//   fixed:<pipeline>   the same PassBuilder pipeline text for every module
//   table:<file>       module_hash -> pipeline (e.g. from search); modules
//                      not in the table get the baseline
//   <file>             a policy file: one spec line (baseline or fixed:...),
//                      or a table whose first line is kTableHeader
// The learned artifact (issue #5) will be one more implementation.

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "compiler_driver/observation/features.h"

namespace phaseloop::cc_wrapper {

inline constexpr char kTableHeader[] = "# phaseloop policy table v1";

// What a policy sees of one translation unit.
struct PolicyInput {
  std::string module_hash;  // ir::ContentHash of the unoptimised bitcode
  const std::array<int64_t, observation::kAutophaseDim>* autophase = nullptr;
  std::string opt_level;  // "O1".."Oz": the user's level
};

class PolicyRunner {
 public:
  virtual ~PolicyRunner() = default;
  // "baseline", "fixed" or "table".
  virtual const char* kind() const = 0;
  // Content hash of what the policy decides from (for baseline, the word
  // itself): equal policies have equal versions on every machine.
  virtual const std::string& version() const = 0;
  // PassBuilder pipeline text for this module. Pure and cheap.
  virtual std::string Decide(const PolicyInput& input) const = 0;
};

// Errors name the spec or file and say what to fix: an unreadable file, a
// table line that is not `<32 hex digits><TAB><pipeline>`, an unsupported
// format version. Pipelines are not checked here (that needs the pass
// builder); an unparseable one fails when the wrapper runs it.
absl::StatusOr<std::unique_ptr<PolicyRunner>> LoadPolicy(
    const std::string& spec);

// The pipeline clang runs at `opt_level`: "default<O2>".
std::string BaselinePipeline(const std::string& opt_level);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_POLICY_H_
