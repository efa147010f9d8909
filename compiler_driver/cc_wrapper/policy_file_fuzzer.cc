// Fuzzes policy files and `table:` files as the wrapper loads them
// (LoadPolicy, issue 19): a file a user or a search run wrote, named by
// --phaseloop-policy, PHASELOOP_POLICY or cc.conf.
//
// The input is written to a scratch directory as p.policy and loaded as a
// policy file and as a table (table:p.policy). A policy file may name an
// artifact by a relative path: only p.policy exists there.
//
// Invariants: no crash, hang or sanitizer report; a refusal names the file;
// an accepted policy has a kind and a version and decides a pipeline for a
// module it knows nothing about; nothing is written beside the file.

#include <string>
#include <vector>

#include "common/fuzzing/fuzz_target.h"
#include "compiler_driver/cc_wrapper/policy.h"

namespace phaseloop::cc_wrapper {
namespace {

void CheckSpec(const std::string& spec, const std::string& path) {
  const auto policy = LoadPolicy(spec);
  if (!policy.ok()) {
    FUZZ_CHECK(std::string(policy.status().message()).find(path) !=
               std::string::npos);
    return;
  }
  FUZZ_CHECK((*policy)->kind() != nullptr);
  FUZZ_CHECK(!(*policy)->version().empty());
  const std::string kind = (*policy)->kind();
  if (kind == "baseline" || kind == "fixed" || kind == "table") {
    PolicyInput input;
    input.module_hash = "00000000000000000000000000000000";
    input.opt_level = "O2";
    FUZZ_CHECK(!(*policy)->Decide(input).empty());
  }
}

}  // namespace
}  // namespace phaseloop::cc_wrapper

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaseloop;
  fuzzing::ScratchDir scratch;
  scratch.Write("p.policy", fuzzing::AsText(data, size));
  const std::string path = scratch.path() + "/p.policy";
  cc_wrapper::CheckSpec(path, path);
  cc_wrapper::CheckSpec("table:" + path, path);
  FUZZ_CHECK(scratch.Entries() == std::vector<std::string>{"p.policy"});
  return 0;
}
