// Fuzzes the wrapper's argument handling: response files
// (ExpandResponseFiles) and ProcessArguments (issue 19).
//
// Input: byte 0 picks the driver (even: phaseloop-cc, odd: phaseloop-c++);
// the rest up to the first \x01 is the argv (without argv[0]), arguments
// separated by \0; what follows \x01 is the content of a response file
// `r.rsp` in the working directory, so "@r.rsp" in the argv expands it.
//
// Invariants:
//   - no crash, hang or sanitizer report;
//   - a response file that cannot be expanded says why (the launcher then
//     runs plain clang with the original argv);
//   - what plain clang gets (clang_args) is the user's exact argv when no
//     --phaseloop-* flag is in it, else the argv without those flags (the
//     expanded one only when such a flag sat inside a response file);
//   - a compilation to optimise has a job per source, each with an object
//     path and the bitcode placeholder, at a level a policy can run.

#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/fuzzing/fuzz_target.h"
#include "compiler_driver/cc_wrapper/argument_processing.h"
#include "compiler_driver/cc_wrapper/response_file.h"

namespace phaseloop::cc_wrapper {
namespace {

bool MentionsPhaseloopFlag(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& arg) {
    return arg.rfind("--phaseloop-", 0) == 0;
  });
}

void CheckOne(const std::vector<std::string>& original, DriverKind kind) {
  std::string error;
  std::optional<std::vector<std::string>> expanded =
      ExpandResponseFiles(original, &error);
  if (!expanded.has_value()) {
    FUZZ_CHECK(!error.empty());
    return;  // the launcher runs plain clang with `original`
  }
  const ProcessedArgs processed = ProcessArguments(original, *expanded, kind);
  if (!MentionsPhaseloopFlag(*expanded)) {
    FUZZ_CHECK(processed.clang_args == original);
  } else {
    const StrippedArgs from_original = StripPhaseloopFlags(original);
    const StrippedArgs from_expanded = StripPhaseloopFlags(*expanded);
    FUZZ_CHECK(processed.clang_args == from_original.args ||
               processed.clang_args == from_expanded.args);
    // What is optimised had every policy flag taken out (other
    // --phaseloop-* flags make the command a pass-through).
    if (std::holds_alternative<Compilation>(processed.result)) {
      for (const std::string& arg : processed.clang_args) {
        FUZZ_CHECK(arg.rfind("--phaseloop-", 0) != 0);
      }
    }
  }
  if (const auto* compilation = std::get_if<Compilation>(&processed.result)) {
    static const char* const kLevels[] = {"O1", "O2", "O3", "Os", "Oz"};
    FUZZ_CHECK(std::find(std::begin(kLevels), std::end(kLevels),
                         compilation->opt_level) != std::end(kLevels));
    FUZZ_CHECK(!compilation->jobs.empty());
    for (const CompileJob& job : compilation->jobs) {
      FUZZ_CHECK(!job.source.empty() && job.source != "-");
      FUZZ_CHECK(!job.object_path.empty() && job.object_path != "-");
      FUZZ_CHECK(std::count(job.frontend_args.begin(), job.frontend_args.end(),
                            std::string(kBitcodePlaceholder)) == 1);
    }
  } else {
    const auto& pass_through = std::get<PassThrough>(processed.result);
    FUZZ_CHECK(PassThroughReasonName(pass_through.reason) != nullptr);
  }
}

}  // namespace
}  // namespace phaseloop::cc_wrapper

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaseloop;
  if (size == 0) return 0;
  const cc_wrapper::DriverKind kind = (data[0] & 1) != 0
                                          ? cc_wrapper::DriverKind::kCxx
                                          : cc_wrapper::DriverKind::kC;
  const std::string_view rest = fuzzing::AsText(data + 1, size - 1);
  const size_t split = rest.find('\x01');
  const std::string_view argv_bytes = rest.substr(0, split);
  fuzzing::ScratchDir scratch;
  if (split != std::string_view::npos) {
    scratch.Write("r.rsp", rest.substr(split + 1));
  }
  std::vector<std::string> original;
  if (!argv_bytes.empty()) original = fuzzing::SplitAll(argv_bytes, '\0');
  char cwd[4096];
  FUZZ_CHECK(getcwd(cwd, sizeof(cwd)) != nullptr);
  FUZZ_CHECK(chdir(scratch.path().c_str()) == 0);
  cc_wrapper::CheckOne(original, kind);
  FUZZ_CHECK(chdir(cwd) == 0);
  return 0;
}
