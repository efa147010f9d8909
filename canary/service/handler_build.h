#ifndef PHASELOOP_CANARY_SERVICE_HANDLER_BUILD_H_
#define PHASELOOP_CANARY_SERVICE_HANDLER_BUILD_H_

// Building the demo service's handler as a user's CI would: the checked-in
// Bazel workspace (demo_workspace/: WORKSPACE.in, BUILD.in, zlib.BUILD,
// handler.c, phaseloop_handler.h) laid out under the work directory, the
// toolchain `phaseloop toolchain bazel` writes (policy file or artifact),
// and a nested Bazel 4.2.3 (`bazel build -c opt --copt=-O3
// //:libdemo_handler.so`) that compiles every translation unit, zlib's
// included, with phaseloop-cc. zlib is the Debian source package's
// unpacked tree (tools/fetch_sources.sh zlib), referenced in place by a
// new_local_repository, never copied into the tree.
//
// Work directory layout (stable paths, so builds are cache-friendly):
//   WORK/ws/            the workspace (tools/phaseloop: the toolchain)
//   WORK/bazel_root/    the nested Bazel's output root and server
//   WORK/home/          its HOME (no user ~/.bazelrc leaks in)
//   WORK/disk_cache/    its disk cache (unless disk_cache_dir is given)
//   WORK/spool/         decision records (unless spool_dir is given)
//   WORK/NAME/libdemo_handler.so, WORK/NAME/build.log   per variant
// The workspace path never changes, so the Bazel server, its output base
// and the disk cache are reused: a second build of the same policy runs no
// compile action; switching policies back and forth takes the objects from
// the disk cache. One build at a time per work directory (the server's
// lock serialises them; the spool's BUILD_ID file names the build).
//
// The build id goes to SPOOL/BUILD_ID, which the wrapper reads (Bazel strips
// the environment; the id is not an action input, so it changes no action
// key). Objects taken from Bazel's caches record no new decision: their
// decisions are under the build id that compiled them.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::canary {

struct HandlerBuildOptions {
  // The variant: names WORK/NAME/ and is part of the build id.
  std::string name = "handler";
  // canary/service/demo_workspace (absolute or relative to the cwd).
  std::string workspace_template;
  // The unpacked Debian zlib tree (must hold zlib.h and deflate.c).
  std::string zlib_source_dir;
  // Exactly one: a policy spec file (`phaseloop toolchain bazel --policy`,
  // e.g. one line `baseline` or `fixed:default<O3>`) or a policy artifact
  // (.plpolicy, run in topk mode: `--artifact`).
  std::string policy_file;
  std::string artifact_file;
  std::string opt_level = "O3";  // --copt=-<opt_level>; "O0" for a reference
  std::string work_dir;
  std::string spool_dir;       // "" = WORK/spool
  std::string disk_cache_dir;  // "" = WORK/disk_cache
  std::string phaseloop_cc;    // phaseloop-cc (phaseloop-cc-opt beside it)
  std::string phaseloop_cli;   // the phaseloop binary (toolchain bazel)
  // The offline rules_cc/rules_java/remote_coverage_tools shims
  // (third_party/bazel_shims of a checkout) and Bazel's platforms.
  std::string bazel_shims_dir;
  std::string platforms_dir = "/usr/share/bazel/platforms";
  std::string bazel = "bazel";
  int server_idle_secs = 300;  // the nested server's --max_idle_secs
  double timeout_seconds = 1800;
};

struct BuiltHandler {
  std::string so_path;  // WORK/NAME/libdemo_handler.so (a copy)
  std::string build_id;
  // Decision records of this build id in the spool: one per compile the
  // wrapper ran; 0 when every object came from a cache.
  int decisions = 0;
  std::string log_path;  // WORK/NAME/build.log: generator and Bazel output
  double build_seconds = 0;
};

// Errors name the step ("generate the toolchain", "bazel build", ...) and
// the log file: InvalidArgument / NotFound / FailedPrecondition for inputs
// (a missing template, zlib tree, policy, wrapper or bazel), Internal for a
// build that failed on good inputs.
absl::StatusOr<BuiltHandler> BuildHandler(const HandlerBuildOptions& options);

// Stops the nested Bazel server of `options.work_dir` (for tests and
// tools that are done building); OK when none runs.
absl::Status ShutdownHandlerBuildServer(const HandlerBuildOptions& options);

// "@NAME@" placeholders of `text` replaced; InvalidArgument naming the
// first placeholder left without a value.
absl::StatusOr<std::string> FillTemplate(
    const std::string& text,
    const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_SERVICE_HANDLER_BUILD_H_
