#include "staging_harness/runner/workload_build.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <system_error>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/process/self_executable.h"
#include "common/process/shell_quote.h"
#include "common/process/subprocess.h"
#include "common/timing/elapsed.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/ir/module_loader.h"
#include "llvm/Support/Program.h"

namespace phaseloop::runner {
namespace fs = std::filesystem;
namespace {

bool IsExecutable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0 &&
         fs::is_regular_file(path);
}

std::string NewBuildId(const workloads::Workload& workload,
                       const Variant& variant) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return absl::StrCat(
      "stage-", workload.name, "-", variant.name, "-",
      ir::ContentHash(
          absl::StrCat(workload.path, "\n", variant.policy, "\n",
                       variant.opt_level, "\n", variant.extra_cflags, "\n",
                       absl::StrJoin(variant.link_flags, " "), "\n",
                       variant.count_executed, "\n",
                       std::chrono::nanoseconds(now).count(), "\n", ::getpid()))
          .substr(0, 12));
}

// Copies the tree, keeping symbolic links as links (autotools trees have
// some) and every file's modification time (with fresh times, make would
// think generated files such as yacc output or configure stale and try to
// regenerate them with tools the machine may not have), skipping
// version-control directories.
// Whether the symbolic link `link` points within `tree` (a relative target
// that does not climb out): such links are copied as links; others (an
// absolute target, Bazel's runfiles) are copied as the file they point to,
// so a build writing through one cannot change the original.
bool InsideTree(const fs::path& link, const std::string& tree) {
  std::error_code error;
  const fs::path target = fs::read_symlink(link, error);
  if (error || target.is_absolute()) return false;
  const fs::path resolved =
      (link.parent_path() / target)
          .lexically_normal()
          .lexically_relative(fs::path(tree).lexically_normal());
  return !resolved.empty() && *resolved.begin() != "..";
}

absl::Status CopyTree(const std::string& from, const std::string& to) {
  std::error_code error;
  fs::create_directories(to, error);
  fs::recursive_directory_iterator it(from, error), end;
  for (; !error && it != end; it.increment(error)) {
    const fs::path source = it->path();
    if (source.filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    const fs::path target = fs::path(to) / source.lexically_relative(from);
    if (it->is_symlink() && InsideTree(source, from)) {
      fs::copy_symlink(source, target, error);
    } else if (it->is_directory()) {
      fs::create_directories(target, error);
    } else if (it->is_regular_file()) {
      fs::copy_file(source, target, error);
      if (!error) {
        fs::last_write_time(target, fs::last_write_time(source), error);
      }
    }
    if (error) {
      return absl::InternalError(absl::StrCat("cannot copy ", source.string(),
                                              " to ", target.string(), ": ",
                                              error.message()));
    }
  }
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot copy ", from, " to ", to, ": ", error.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Compilers> FindCompilers(const std::string& cc_flag,
                                        const std::string& exe_dir) {
  std::vector<std::string> tried;
  std::string cc;
  auto consider = [&](const std::string& path) {
    if (!cc.empty() || path.empty()) return;
    tried.push_back(path);
    if (IsExecutable(path)) cc = fs::absolute(path).lexically_normal();
  };
  if (!cc_flag.empty()) {
    consider(cc_flag);
    if (cc.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--cc ", cc_flag,
          ": not an executable file; give the path of "
          "phaseloop-cc (bazel-bin/compiler_driver/cc_wrapper/phaseloop-cc "
          "in a checkout)"));
    }
  }
  if (const char* env = std::getenv("PHASELOOP_CC")) consider(env);
  const std::string dir =
      !exe_dir.empty()
          ? exe_dir
          : fs::path(process::SelfExecutable()).parent_path().string();
  if (!dir.empty()) {
    consider(dir + "/phaseloop-cc");
    consider(dir + "/../compiler_driver/cc_wrapper/phaseloop-cc");
  }
  if (cc.empty()) {
    tried.push_back("phaseloop-cc on PATH");
    if (llvm::ErrorOr<std::string> found =
            llvm::sys::findProgramByName("phaseloop-cc")) {
      cc = *found;
    }
  }
  if (cc.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot find the phaseloop wrapper (tried ", absl::StrJoin(tried, ", "),
        "); build it (tools/bazel.sh build //compiler_driver/cc_wrapper:all), "
        "then pass --cc PATH or set PHASELOOP_CC"));
  }
  Compilers compilers;
  compilers.cc = cc;
  compilers.cxx = (fs::path(cc).parent_path() / "phaseloop-c++").string();
  if (!IsExecutable(compilers.cxx)) {
    return absl::FailedPreconditionError(
        absl::StrCat("found ", cc, " but no phaseloop-c++ beside it (",
                     compilers.cxx, "); install both wrappers together"));
  }
  return compilers;
}

absl::StatusOr<std::vector<std::string>> FlagWords(absl::string_view option,
                                                   const std::string& flags,
                                                   absl::string_view example) {
  std::vector<std::string> words;
  for (absl::string_view word :
       absl::StrSplit(flags, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    const bool mode = word == "-c" || word == "-S" || word == "-E" ||
                      absl::StartsWith(word, "-o") ||
                      absl::StartsWith(word, "-O") ||
                      absl::StartsWith(word, "-M");
    if (word[0] != '-' || word == "-" || mode) {
      return absl::InvalidArgumentError(absl::StrCat(
          option, " '", flags, "': '", word, "' ",
          word[0] != '-' || word == "-"
              ? "is not a compiler flag (a flag's value goes in the same "
                "word: -L/opt/lib, -Wl,-rpath,DIR)"
              : "is set by the build or by --opt-level",
          "; give flags, e.g. ", option, "=", example));
    }
    words.emplace_back(word);
  }
  return words;
}

absl::StatusOr<std::string> HashFiles(const std::string& root,
                                      const std::vector<std::string>& files) {
  std::string all;
  for (const std::string& file : files) {
    absl::StatusOr<std::string> bytes = ir::ReadFile(root + "/" + file);
    if (!bytes.ok()) return bytes.status();
    absl::StrAppend(&all, file, "\n", bytes->size(), "\n",
                    ir::ContentHash(*bytes), "\n");
  }
  return ir::ContentHash(all);
}

namespace {

// Scripts under `dir` that run the wrapper with the variant's flags:
// -fprofile-instr-generate first on every command (clang's driver then also
// links the profile runtime), its link flags last on commands that link.
absl::StatusOr<Compilers> VariantCompilers(const Compilers& compilers,
                                           const Variant& variant,
                                           const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot create ", dir, ": ", error.message()));
  }
  std::string link_flags;
  for (const std::string& flag : variant.link_flags) {
    absl::StrAppend(&link_flags, " ", process::ShellQuote(flag));
  }
  Compilers scripts{dir + "/cc", dir + "/c++"};
  for (const auto& [script, wrapper] :
       {std::pair{scripts.cc, compilers.cc},
        std::pair{scripts.cxx, compilers.cxx}}) {
    const std::string run = absl::StrCat(
        "exec ", process::ShellQuote(wrapper),
        variant.profile_instrumented ? " -fprofile-instr-generate" : "",
        " \"$@\"");
    {
      std::ofstream out(script, std::ios::binary | std::ios::trunc);
      out << "#!/bin/sh\n# variant " << variant.name
          << ": the wrapper with its flags\n";
      if (!link_flags.empty()) {
        // No link flags where clang would not link: a compile-only switch
        // on the line or in a response file, or a header precompiled (-x
        // c-header, or a header given as input): there clang warns of the
        // unused flags (an error under -Werror) or, for a header and -o,
        // refuses to write "multiple output files".
        out << "links=yes\nafter=\n"
               "for arg in \"$@\"; do\n"
               "  case \"$after\" in\n"
               "    x) case \"$arg\" in *-header) links=no;; esac; after=; "
               "continue;;\n"
               "    value) after=; continue;;\n"
               "  esac\n"
               "  case \"$arg\" in\n"
               "    -c|-S|-E|-M|-MM|-fsyntax-only|--compile|--preprocess|"
               "--assemble|--version|-dumpversion|-dumpmachine|-print-*|"
               "-x*-header) links=no;;\n"
               "    -x) after=x;;\n"
               // An option's own argument (-include foo.h) is no input.
               "    -include|-imacros|-include-pch|-o|-MF|-MT|-MQ|-I|-isystem|"
               "-iquote|-idirafter|-isysroot|-D|-U|-L|-Xlinker|-Xclang|"
               "-mllvm|-target) after=value;;\n"
               "    -*) ;;\n"
               "    @*) if [ -r \"${arg#@}\" ] && grep -qE -- "
               "'(^|[[:space:]])(-c|-S|-E|-M|-MM|-fsyntax-only|-x[[:space:]]*"
               "[a-z+-]*-header)([[:space:]]|$)' \"${arg#@}\"; then links=no; "
               "fi;;\n"
               "    *.h|*.hh|*.hpp|*.hxx|*.h++|*.H) links=no;;\n"
               "  esac\n"
               "done\n"
               "if [ $links = no ]; then "
            << run << "; fi\n"
            << run << link_flags << "\n";
      } else {
        out << run << "\n";
      }
      if (!out) return absl::InternalError("cannot write " + script);
    }
    fs::permissions(
        script,
        fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec,
        error);
    if (error) {
      return absl::InternalError(absl::StrCat(
          "cannot make ", script, " executable: ", error.message()));
    }
  }
  return scripts;
}

}  // namespace

absl::StatusOr<BuiltVariant> BuildVariant(const workloads::Workload& workload,
                                          const std::string& source_tree,
                                          const Compilers& compilers,
                                          const Variant& given_variant,
                                          const std::string& given_work_dir,
                                          std::ostream& progress) {
  // The build runs in its own copy of the tree: every path it is given
  // (the decision spool, the object cache, profiles) is absolute, or a
  // relative work directory loses the build's decisions.
  const std::string work_dir =
      fs::absolute(given_work_dir).lexically_normal().string();
  Variant variant = given_variant;
  if (!variant.object_cache_dir.empty()) {
    variant.object_cache_dir =
        fs::absolute(variant.object_cache_dir).lexically_normal().string();
  }
  BuiltVariant built;
  built.variant = variant;
  built.build_id = NewBuildId(workload, variant);
  std::error_code error;
  fs::remove_all(work_dir, error);
  built.build_dir = work_dir + "/src";
  built.artifacts_dir = work_dir + "/artifacts";
  built.log_path = work_dir + "/build.log";
  const std::string spool = work_dir + "/spool";
  if (absl::Status copied = CopyTree(source_tree, built.build_dir);
      !copied.ok()) {
    return copied;
  }
  fs::create_directories(spool, error);

  const std::string flags = absl::StrCat(
      "-", variant.opt_level, variant.extra_cflags.empty() ? "" : " ",
      variant.extra_cflags);
  Compilers used = compilers;
  if (variant.profile_instrumented || !variant.link_flags.empty()) {
    absl::StatusOr<Compilers> scripts =
        VariantCompilers(compilers, variant, work_dir + "/compilers");
    if (!scripts.ok()) return scripts.status();
    used = *scripts;
  }
  process::ProcessSpec spec;
  spec.argv = {"sh", "-c", workload.build.command};
  spec.cwd = built.build_dir;
  spec.timeout_seconds = workload.build.timeout_s;
  spec.env = {
      "CC=" + used.cc,
      "CXX=" + used.cxx,
      "CFLAGS=" + flags,
      "CXXFLAGS=" + flags,
      "PHASELOOP_POLICY=" + variant.policy,
      "PHASELOOP_SPOOL=" + spool,
      "PHASELOOP_SPOOL_MAX_SIZE=0",
      "PHASELOOP_BUILD_ID=" + built.build_id,
      absl::StrCat("JOBS=", std::max(1u, std::thread::hardware_concurrency())),
      "PHASELOOP_STAGE_VARIANT=" + variant.name,
      absl::StrCat("PHASELOOP_COUNT_EXECUTED=", variant.count_executed ? 1 : 0),
  };
  if (!variant.object_cache_dir.empty()) {
    spec.env.push_back("PHASELOOP_OBJECT_CACHE=" + variant.object_cache_dir);
  }
  if (variant.profile_instrumented) {
    spec.env.push_back("LLVM_PROFILE_FILE=" + work_dir +
                       "/build-profiles/%p.profraw");
  }
  progress << "  build " << workload.name << " [" << variant.name << "] -"
           << variant.opt_level << " policy " << variant.policy << " ..."
           << std::flush;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<process::ProcessResult> result = process::RunProcess(spec);
  built.build_s = timing::SecondsSince(start);
  if (!result.ok()) {
    progress << " cannot run\n";
    return result.status();
  }
  {
    std::ofstream log(built.log_path, std::ios::binary);
    log << result->output;
  }
  const std::string where =
      absl::StrCat(workload.path, ": build of variant '", variant.name, "'");
  if (result->timed_out || result->exit_code != 0) {
    progress << " failed\n";
    return absl::FailedPreconditionError(absl::StrCat(
        where,
        result->timed_out ? absl::StrCat(" ran over build.timeout_s (",
                                         workload.build.timeout_s, " s)")
                          : absl::StrCat(" exited ", result->exit_code),
        "; log ", built.log_path, ": ", process::ShortReason(result->output)));
  }
  for (const std::string& artifact : workload.build.artifacts) {
    const fs::path from = fs::path(built.build_dir) / artifact;
    const fs::path to = fs::path(built.artifacts_dir) / artifact;
    if (!fs::is_regular_file(from)) {
      progress << " failed\n";
      return absl::FailedPreconditionError(absl::StrCat(
          where, " left no artifact '", artifact,
          "' (build.artifacts); is the path relative to the source tree?"
          " log ",
          built.log_path));
    }
    fs::create_directories(to.parent_path(), error);
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, error);
    if (error) {
      return absl::InternalError(
          absl::StrCat("cannot copy ", from.string(), ": ", error.message()));
    }
  }
  absl::StatusOr<std::string> hash =
      HashFiles(built.artifacts_dir, workload.build.artifacts);
  if (!hash.ok()) return hash.status();
  built.artifacts_hash = *hash;

  absl::StatusOr<cc_wrapper::SpoolContents> spooled =
      cc_wrapper::ReadSpool(spool);
  if (!spooled.ok()) return spooled.status();
  for (const cc_wrapper::SpoolFile& file : spooled->files) {
    for (const v1::Decision& decision : file.batch.decisions()) {
      built.decisions.push_back(decision);
      if (decision.object_cache() == "hit") {
        ++built.objects_reused;
      } else if (decision.outcome() == v1::OPTIMIZED ||
                 decision.outcome() == v1::POLICY_NOT_APPLIED) {
        ++built.objects_compiled;
      }
    }
  }
  progress << " " << absl::StrFormat("%.1f", built.build_s) << " s, "
           << built.decisions.size() << " compiler commands"
           << (variant.object_cache_dir.empty()
                   ? ""
                   : absl::StrCat(" (", built.objects_reused,
                                  " objects reused)"))
           << ", artifacts " << built.artifacts_hash.substr(0, 8) << "\n";
  return built;
}

}  // namespace phaseloop::runner
