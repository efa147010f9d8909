// phaseloop-cc / phaseloop-c++: the drop-in clang-16 / clang++-16. This
// process only decides, in about a millisecond and without LLVM: kill
// switch, response files, the argument table. Everything it will not
// optimise runs plain clang with the original argv (exec, so clang's exit
// code, output and timing are the user's own), after counting why in the
// decision spool. Compile-only C/C++ invocations are handed, argv unchanged,
// to phaseloop-cc-opt next to this binary.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "compiler_driver/cc_wrapper/argument_processing.h"
#include "compiler_driver/cc_wrapper/clang_exec.h"
#include "compiler_driver/cc_wrapper/response_file.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"
#include "compiler_driver/cc_wrapper/wrapper_config.h"

namespace phaseloop::cc_wrapper {
namespace {

// The first output path of `compilation` that exists and is not a regular
// file (a device such as /dev/null, a pipe, a symbolic link): clang writes
// into or through it, the optimiser would rename a new file over it.
std::optional<std::string> SpecialOutput(const Compilation& compilation) {
  for (const CompileJob& job : compilation.jobs) {
    for (const std::string* path : {&job.object_path, &job.dependency_file}) {
      struct stat st;
      if (!path->empty() && lstat(path->c_str(), &st) == 0 &&
          !S_ISREG(st.st_mode)) {
        return *path;
      }
    }
  }
  return std::nullopt;
}

// `path` when it names something that exists and is neither a regular
// file nor a directory (/dev/stdin, /dev/fd/N from `<(...)`, a FIFO): what
// can be read once. Not the null device (character device 1:3 on Linux),
// empty however often it is read: `-DX=/dev/null` or `-include /dev/null`
// sent the compile to plain clang for nothing.
std::optional<std::string> OneShot(const std::string& path) {
  struct stat st;
  if (path.empty() || stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode) ||
      S_ISDIR(st.st_mode) ||
      (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
       minor(st.st_rdev) == 3)) {
    return std::nullopt;
  }
  return path;
}

// The first file the compile would read that can be read once: a source,
// or any other argument naming one (-include, -imacros, a profile, a
// sanitizer list: an option's separate value, or the value after '=').
// The optimiser must not read it before a fallback to clang does: it read
// it to its end, and the fallback compiled without it (broken code passed,
// a macro was lost) or waited on a FIFO for ever.
std::optional<std::string> SpecialInput(const Compilation& compilation,
                                        const std::vector<std::string>& args) {
  for (const CompileJob& job : compilation.jobs) {
    if (auto path = OneShot(job.source)) return path;
  }
  for (const std::string& arg : args) {
    if (auto path = OneShot(arg)) return path;
    if (arg.empty() || arg[0] != '-') continue;
    // An option's value after '=', or joined to it as an absolute path
    // (-include/dev/stdin; bash turns -include<(...) into
    // -include/dev/fd/63).
    for (const size_t at : {arg.find('='), arg.find('/')}) {
      if (at == std::string::npos) continue;
      if (auto path = OneShot(arg.substr(arg[at] == '=' ? at + 1 : at))) {
        return path;
      }
    }
  }
  return std::nullopt;
}

// The first response file that can be read once (@/dev/stdin, @<(...), a
// FIFO): clang alone may read it, so nothing here expands it.
std::optional<std::string> OneShotResponseFile(
    const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg.size() > 1 && arg[0] == '@') {
      if (auto path = OneShot(arg.substr(1))) return path;
    }
  }
  return std::nullopt;
}

// The first of the variables clang's driver program reads to log what it
// does (clang's driver.cpp), which the in-process driver does not: under
// one, clang itself compiles, so the log is written.
std::optional<std::string> DriverLogVariable() {
  // Set at all, even empty, as clang's driver reads them.
  for (const char* name :
       {"CC_PRINT_OPTIONS", "CC_PRINT_HEADERS", "CC_PRINT_HEADERS_FORMAT",
        "CC_PRINT_HEADERS_FILTERING", "CC_LOG_DIAGNOSTICS",
        "CC_PRINT_PROC_STAT"}) {
    if (std::getenv(name) != nullptr) return std::string(name);
  }
  return std::nullopt;
}

int Main(int argc, char** argv) {
  const DriverKind kind = DriverKindOf(argv[0]);
  const std::vector<std::string> original(argv + 1, argv + argc);

  WrapperConfig config;
  std::string config_error;
  const StrippedArgs stripped = StripPhaseloopFlags(original);
  bool config_ok = LoadWrapperConfig(stripped.policy, ProcessEnvironment(),
                                     &config, &config_error);
  if (auto response = OneShotResponseFile(original)) {
    Record(config, {Outcome::kPassThrough,
                    PassThroughReasonName(PassThroughReason::kSpecialInput),
                    "@" + *response, config.build_id});
    return ExecClang(config, kind, stripped.args);
  }
  // Response files read once: the fallback's arguments come from the same
  // expansion the classification reads.
  std::string expand_error;
  std::optional<std::vector<std::string>> expanded =
      ExpandResponseFiles(original, &expand_error);
  const std::vector<std::string> clang_args =
      expanded ? FallbackClangArgs(original, *expanded) : stripped.args;
  if (config.disabled) {
    Record(config, {Outcome::kDisabled, "kill_switch", "", config.build_id});
    return ExecClang(config, kind, clang_args);
  }
  if (!config_ok) {
    Record(config, {Outcome::kFailOpen, "config_invalid", config_error,
                    config.build_id});
    return ExecClang(config, kind, clang_args);
  }

  if (!expanded) {
    Record(config, {Outcome::kPassThrough,
                    PassThroughReasonName(PassThroughReason::kBadResponseFile),
                    expand_error, config.build_id});
    return ExecClang(config, kind, clang_args);
  }
  ProcessedArgs processed = ProcessArguments(original, *expanded, kind);
  if (const auto* pass = std::get_if<PassThrough>(&processed.result)) {
    Record(config, {Outcome::kPassThrough, PassThroughReasonName(pass->reason),
                    pass->detail, config.build_id, pass->source});
    return ExecClang(config, kind, processed.clang_args);
  }

  std::optional<PassThrough> special;
  if (const char* edits = std::getenv("CCC_OVERRIDE_OPTIONS");
      edits != nullptr && *edits != '\0') {
    special = PassThrough{PassThroughReason::kDriverOverride, edits};
  } else if (auto variable = DriverLogVariable()) {
    special = PassThrough{PassThroughReason::kDriverOverride, *variable};
  } else if (auto path =
                 SpecialOutput(std::get<Compilation>(processed.result))) {
    special = PassThrough{PassThroughReason::kSpecialOutput, *path};
  } else if (auto input = SpecialInput(std::get<Compilation>(processed.result),
                                       *expanded)) {
    special = PassThrough{PassThroughReason::kSpecialInput, *input};
  }
  if (special) {
    const Compilation& compilation = std::get<Compilation>(processed.result);
    Record(config,
           {Outcome::kPassThrough, PassThroughReasonName(special->reason),
            special->detail, config.build_id,
            compilation.jobs.size() == 1 ? compilation.jobs[0].source : ""});
    return ExecClang(config, kind, processed.clang_args);
  }

  const std::string optimizer = SiblingBinary("phaseloop-cc-opt");
  execv(optimizer.c_str(), argv);
  Record(config, {Outcome::kFailOpen, "optimizer_missing",
                  optimizer + ": " + std::strerror(errno), config.build_id});
  return ExecClang(config, kind, processed.clang_args);
}

}  // namespace
}  // namespace phaseloop::cc_wrapper

int main(int argc, char** argv) {
  return phaseloop::cc_wrapper::Main(argc, argv);
}
