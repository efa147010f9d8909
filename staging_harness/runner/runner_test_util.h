#ifndef PHASELOOP_STAGING_HARNESS_RUNNER_RUNNER_TEST_UTIL_H_
#define PHASELOOP_STAGING_HARNESS_RUNNER_RUNNER_TEST_UTIL_H_

// What the lab's tests build and run with: the example workload (a real
// Makefile C project, configs/workloads/example.yaml) and a phaseloop-cc from
// the test's runfiles (the product's, or the test-only miscompile wrapper).

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/statusor.h"
#include "staging_harness/runner/workload_build.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::runner {

inline absl::StatusOr<workloads::Workload> ExampleWorkload() {
  return workloads::LoadWorkload("configs/workloads/example.yaml");
}

// The example workload with a second translation unit (extra.c, linked in,
// never hot), its sources copied under `dir`: a build that changes only
// wordfreq.c's pipeline leaves extra.c's object unchanged.
inline absl::StatusOr<workloads::Workload> TwoUnitExampleWorkload(
    const std::string& dir) {
  absl::StatusOr<workloads::Workload> workload = ExampleWorkload();
  if (!workload.ok()) return workload;
  namespace fs = std::filesystem;
  const std::string tree = dir + "/two-unit-example";
  std::error_code error;
  fs::copy(workload->source_dir, tree, fs::copy_options::recursive, error);
  if (error) return absl::InternalError("cannot copy " + workload->source_dir);
  std::ofstream(tree + "/extra.c")
      << "int extra_checksum(const char *s) {\n"
         "  int h = 0;\n  while (*s) h = h * 31 + *s++;\n  return h;\n}\n";
  fs::remove(tree + "/Makefile", error);  // the copy may be read-only
  std::ofstream(tree + "/Makefile")
      << "wordfreq: wordfreq.o extra.o\n"
         "\t$(CC) $(CFLAGS) -o $@ wordfreq.o extra.o\n"
         "wordfreq.o: wordfreq.c\n\t$(CC) $(CFLAGS) -c wordfreq.c\n"
         "extra.o: extra.c\n\t$(CC) $(CFLAGS) -c extra.c\n";
  workload->source_dir = tree;
  return workload;
}

inline absl::StatusOr<Compilers> RunfilesCompilers(
    const std::string& wrapper = "compiler_driver/cc_wrapper/phaseloop-cc") {
  return FindCompilers(std::filesystem::absolute(wrapper).string());
}

}  // namespace phaseloop::runner

#endif  // PHASELOOP_STAGING_HARNESS_RUNNER_RUNNER_TEST_UTIL_H_
