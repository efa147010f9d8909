#include "canary/service/handler_build.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files/atomic_file.h"
#include "common/process/subprocess.h"
#include "common/timing/elapsed.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"

namespace phaseloop::canary {
namespace fs = std::filesystem;
namespace {

constexpr char kTarget[] = "libdemo_handler.so";
constexpr char kToolchainPackage[] = "tools/phaseloop";

std::string Absolute(const std::string& path) {
  return path.empty() ? path : fs::absolute(path).lexically_normal().string();
}

bool IsExecutable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0 &&
         fs::is_regular_file(path);
}

std::string NewBuildId(const std::string& name) {
  std::random_device random;
  const uint64_t bits =
      (uint64_t{random()} << 32) ^ random() ^
      std::chrono::system_clock::now().time_since_epoch().count() ^
      (uint64_t(::getpid()) << 16);
  return absl::StrFormat("svc-%s-%012x", name, bits & 0xffffffffffffULL);
}

// Writes `content` to `path` unless it already holds exactly that.
absl::Status WriteIfChanged(const std::string& path,
                            const std::string& content) {
  std::string existing;
  if (files::ReadWholeFile(path, &existing).ok() && existing == content) {
    return absl::OkStatus();
  }
  return files::WriteFileAtomically(path, content);
}

// The inputs, checked and made absolute.
absl::Status ValidateOptions(HandlerBuildOptions& o) {
  if (o.work_dir.empty()) {
    return absl::InvalidArgumentError("handler build: no work directory given");
  }
  if (o.name.empty() || o.name.find('/') != std::string::npos ||
      o.name == "ws" || o.name == "home" || o.name == "spool") {
    return absl::InvalidArgumentError(absl::StrCat(
        "handler build: variant name '", o.name,
        "' must be a plain directory name other than ws, home and spool"));
  }
  for (std::string* path :
       {&o.workspace_template, &o.zlib_source_dir, &o.policy_file,
        &o.artifact_file, &o.work_dir, &o.spool_dir, &o.disk_cache_dir,
        &o.phaseloop_cc, &o.phaseloop_cli, &o.bazel_shims_dir}) {
    *path = Absolute(*path);
  }
  for (const char* file : {"WORKSPACE.in", "BUILD.in", "zlib.BUILD",
                           "handler.c", "phaseloop_handler.h"}) {
    if (!fs::is_regular_file(fs::path(o.workspace_template) / file)) {
      return absl::NotFoundError(
          absl::StrCat("handler build: workspace template '",
                       o.workspace_template, "' has no ", file,
                       "; give canary/service/demo_workspace of a checkout"));
    }
  }
  for (const char* file : {"zlib.h", "deflate.c"}) {
    if (!fs::is_regular_file(fs::path(o.zlib_source_dir) / file)) {
      return absl::NotFoundError(
          absl::StrCat("handler build: zlib source tree '", o.zlib_source_dir,
                       "' has no ", file,
                       "; run tools/fetch_sources.sh zlib and give "
                       "~/.cache/phaseloop/debian-src/zlib"));
    }
  }
  if (o.policy_file.empty() == o.artifact_file.empty()) {
    return absl::InvalidArgumentError(
        "handler build: give exactly one of a policy file (a policy spec, "
        "e.g. `baseline`) and a policy artifact (.plpolicy)");
  }
  const std::string& policy =
      o.policy_file.empty() ? o.artifact_file : o.policy_file;
  if (!fs::is_regular_file(policy)) {
    return absl::NotFoundError(
        absl::StrCat("handler build: policy '", policy, "' is not a file"));
  }
  if (!IsExecutable(o.phaseloop_cc)) {
    return absl::NotFoundError(absl::StrCat(
        "handler build: phaseloop-cc '", o.phaseloop_cc,
        "' is not executable; build //compiler_driver/cc_wrapper:all"));
  }
  if (!IsExecutable(o.phaseloop_cli)) {
    return absl::NotFoundError(
        absl::StrCat("handler build: phaseloop '", o.phaseloop_cli,
                     "' is not executable; build //tools:phaseloop"));
  }
  if (!fs::is_regular_file(fs::path(o.bazel_shims_dir) /
                           "rules_cc/cc/defs.bzl")) {
    return absl::NotFoundError(absl::StrCat(
        "handler build: '", o.bazel_shims_dir,
        "' holds no offline Bazel shims (rules_cc/cc/defs.bzl); give "
        "third_party/bazel_shims of a checkout"));
  }
  if (o.spool_dir.empty()) o.spool_dir = o.work_dir + "/spool";
  if (o.disk_cache_dir.empty()) o.disk_cache_dir = o.work_dir + "/disk_cache";
  return absl::OkStatus();
}

// Runs one step, its output appended to the log; the error names the step
// and the log.
absl::Status RunStep(const std::string& step, const process::ProcessSpec& spec,
                     const std::string& log_path, std::string* output) {
  absl::StatusOr<process::ProcessResult> result = process::RunProcess(spec);
  if (!result.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("handler build: ", step, ": cannot run ", spec.argv[0],
                     ": ", result.status().message()));
  }
  {
    std::ofstream log(log_path, std::ios::app | std::ios::binary);
    log << "== " << step << "\n" << result->output << "\n";
  }
  if (output != nullptr) *output = result->output;
  if (result->timed_out || result->exit_code != 0) {
    return absl::InternalError(absl::StrCat(
        "handler build: ", step,
        result->timed_out
            ? absl::StrCat(" ran over ", spec.timeout_seconds, " s")
            : absl::StrCat(" exited ", result->exit_code),
        "; log ", log_path, ": ", process::ShortReason(result->output)));
  }
  return absl::OkStatus();
}

// The nested Bazel's command line up to the command.
std::vector<std::string> BazelArgv(const HandlerBuildOptions& o) {
  return {"env",
          "-i",
          "PATH=/usr/bin:/bin",
          "HOME=" + o.work_dir + "/home",
          o.bazel,
          "--output_user_root=" + o.work_dir + "/bazel_root",
          absl::StrCat("--max_idle_secs=", o.server_idle_secs)};
}

// Lays the workspace out from the template.
absl::Status LayOutWorkspace(const HandlerBuildOptions& o,
                             const std::string& ws) {
  const fs::path from(o.workspace_template);
  std::string text;
  if (absl::Status read =
          files::ReadWholeFile((from / "WORKSPACE.in").string(), &text);
      !read.ok()) {
    return read;
  }
  absl::StatusOr<std::string> workspace =
      FillTemplate(text, {{"SHIMS", o.bazel_shims_dir},
                          {"PLATFORMS", o.platforms_dir},
                          {"ZLIB", o.zlib_source_dir}});
  if (!workspace.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        (from / "WORKSPACE.in").string(), ": ", workspace.status().message()));
  }
  if (absl::Status s = WriteIfChanged(ws + "/WORKSPACE", *workspace); !s.ok()) {
    return s;
  }
  const std::pair<const char*, const char*> copies[] = {
      {"BUILD.in", "BUILD"},
      {"zlib.BUILD", "zlib.BUILD"},
      {"handler.c", "handler.c"},
      {"phaseloop_handler.h", "phaseloop_handler.h"}};
  for (const auto& [source, target] : copies) {
    std::string content;
    if (absl::Status s =
            files::ReadWholeFile((from / source).string(), &content);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = WriteIfChanged(ws + "/" + target, content); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> FillTemplate(
    const std::string& text,
    const std::vector<std::pair<std::string, std::string>>& values) {
  std::string filled = text;
  for (const auto& [name, value] : values) {
    const std::string placeholder = "@" + name + "@";
    for (size_t at = filled.find(placeholder); at != std::string::npos;
         at = filled.find(placeholder, at + value.size())) {
      filled.replace(at, placeholder.size(), value);
    }
  }
  const size_t at = filled.find('@');
  if (at != std::string::npos) {
    const size_t end = filled.find('@', at + 1);
    if (end != std::string::npos &&
        filled.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_", at + 1) ==
            end) {
      return absl::InvalidArgumentError(absl::StrCat(
          "placeholder ", filled.substr(at, end - at + 1), " has no value"));
    }
  }
  return filled;
}

absl::StatusOr<BuiltHandler> BuildHandler(const HandlerBuildOptions& given) {
  HandlerBuildOptions o = given;
  if (absl::Status checked = ValidateOptions(o); !checked.ok()) return checked;
  const auto start = std::chrono::steady_clock::now();
  const std::string ws = o.work_dir + "/ws";
  const std::string variant_dir = o.work_dir + "/" + o.name;
  for (const std::string& dir :
       {ws, variant_dir, o.work_dir + "/home", o.spool_dir, o.disk_cache_dir}) {
    if (absl::Status made = files::MakeDirectories(dir); !made.ok()) {
      return made;
    }
  }
  BuiltHandler built;
  built.log_path = variant_dir + "/build.log";
  built.build_id = NewBuildId(o.name);
  {
    std::ofstream log(built.log_path, std::ios::trunc);
    log << "handler build " << built.build_id << ": policy "
        << (o.policy_file.empty() ? o.artifact_file : o.policy_file) << ", -"
        << o.opt_level << ", zlib " << o.zlib_source_dir << "\n";
  }
  if (absl::Status laid = LayOutWorkspace(o, ws); !laid.ok()) {
    return absl::Status(
        laid.code(), absl::StrCat("handler build: lay out the workspace ", ws,
                                  ": ", laid.message()));
  }

  // The toolchain, regenerated every time so that no file of an earlier
  // policy (a policy.plpolicy) stays an input of the compile actions.
  std::error_code error;
  fs::remove_all(ws + "/" + kToolchainPackage, error);
  process::ProcessSpec generate;
  generate.argv = {o.phaseloop_cli,   "toolchain", "bazel",     "--out",
                   kToolchainPackage, "--spool",   o.spool_dir, "--cc",
                   o.phaseloop_cc};
  if (o.policy_file.empty()) {
    generate.argv.insert(generate.argv.end(), {"--artifact", o.artifact_file});
  } else {
    generate.argv.insert(generate.argv.end(), {"--policy", o.policy_file});
  }
  generate.cwd = ws;
  generate.timeout_seconds = 120;
  std::string generated;
  if (absl::Status s = RunStep("generate the toolchain (phaseloop toolchain "
                               "bazel)",
                               generate, built.log_path, &generated);
      !s.ok()) {
    return s;
  }
  std::string bazelrc;
  for (absl::string_view line : absl::StrSplit(generated, '\n')) {
    if (absl::ConsumePrefix(&line, "  build --")) {
      absl::StrAppend(&bazelrc, "build --", line, "\n");
    }
  }
  if (bazelrc.empty()) {
    return absl::InternalError(absl::StrCat(
        "handler build: generate the toolchain: `phaseloop toolchain bazel` "
        "printed no .bazelrc lines; log ",
        built.log_path));
  }
  if (absl::Status s = WriteIfChanged(ws + "/.bazelrc", bazelrc); !s.ok()) {
    return s;
  }
  if (absl::Status s = files::WriteFileAtomically(o.spool_dir + "/BUILD_ID",
                                                  built.build_id + "\n");
      !s.ok()) {
    return s;
  }

  process::ProcessSpec build;
  build.argv = BazelArgv(o);
  build.argv.insert(build.argv.end(),
                    {"build", "-c", "opt", "--copt=-" + o.opt_level,
                     "--disk_cache=" + o.disk_cache_dir, "--color=no",
                     "--curses=no", std::string("//:") + kTarget});
  build.cwd = ws;
  build.timeout_seconds = o.timeout_seconds;
  if (absl::Status s = RunStep(absl::StrCat("bazel build //:", kTarget,
                                            " -c "
                                            "opt --copt=-",
                                            o.opt_level),
                               build, built.log_path, nullptr);
      !s.ok()) {
    return s;
  }

  // Out of bazel-bin, which the next build of this workspace overwrites.
  std::string library;
  const std::string from = ws + "/bazel-bin/" + kTarget;
  if (absl::Status s = files::ReadWholeFile(from, &library); !s.ok()) {
    return absl::InternalError(
        absl::StrCat("handler build: bazel succeeded but left no ", from,
                     "; log ", built.log_path));
  }
  built.so_path = variant_dir + "/" + kTarget;
  if (absl::Status s = files::WriteFileAtomically(built.so_path, library, 0755);
      !s.ok()) {
    return s;
  }

  absl::StatusOr<cc_wrapper::SpoolContents> spool =
      cc_wrapper::ReadSpool(o.spool_dir, /*with_shipped=*/true);
  if (!spool.ok()) return spool.status();
  for (const cc_wrapper::SpoolFile& file : spool->files) {
    for (const v1::Decision& decision : file.batch.decisions()) {
      if (decision.build_id() == built.build_id) ++built.decisions;
    }
  }
  built.build_seconds = timing::SecondsSince(start);
  std::ofstream(built.log_path, std::ios::app)
      << "built " << built.so_path << " in " << built.build_seconds << " s, "
      << built.decisions << " decisions\n";
  return built;
}

absl::Status ShutdownHandlerBuildServer(const HandlerBuildOptions& given) {
  HandlerBuildOptions o = given;
  o.work_dir = Absolute(o.work_dir);
  const std::string ws = o.work_dir + "/ws";
  if (!fs::is_directory(ws) || !fs::is_directory(o.work_dir + "/bazel_root")) {
    return absl::OkStatus();
  }
  process::ProcessSpec shutdown;
  shutdown.argv = BazelArgv(o);
  shutdown.argv.push_back("shutdown");
  shutdown.cwd = ws;
  shutdown.timeout_seconds = 60;
  absl::StatusOr<process::ProcessResult> result = process::RunProcess(shutdown);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::InternalError(absl::StrCat("bazel shutdown in ", ws,
                                            " exited ", result->exit_code, ": ",
                                            result->output));
  }
  return absl::OkStatus();
}

}  // namespace phaseloop::canary
