#ifndef PHASELOOP_STAGING_HARNESS_RUNNER_RUNNER_TEST_UTIL_H_
#define PHASELOOP_STAGING_HARNESS_RUNNER_RUNNER_TEST_UTIL_H_

// What the lab's tests build and run with: the example workload (a real
// Makefile C project, configs/workloads/example.yaml) and a phaseloop-cc from
// the test's runfiles (the product's, or the test-only miscompile wrapper).

#include <filesystem>
#include <string>

#include "absl/status/statusor.h"
#include "staging_harness/runner/workload_build.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::runner {

inline absl::StatusOr<workloads::Workload> ExampleWorkload() {
  return workloads::LoadWorkload("configs/workloads/example.yaml");
}

inline absl::StatusOr<Compilers> RunfilesCompilers(
    const std::string& wrapper = "compiler_driver/cc_wrapper/phaseloop-cc") {
  return FindCompilers(std::filesystem::absolute(wrapper).string());
}

}  // namespace phaseloop::runner

#endif  // PHASELOOP_STAGING_HARNESS_RUNNER_RUNNER_TEST_UTIL_H_
