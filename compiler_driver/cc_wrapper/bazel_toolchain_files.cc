#include "compiler_driver/cc_wrapper/bazel_toolchain_files.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/process/shell_quote.h"
#include "compiler_driver/policy_runtime/topk_defaults.h"

namespace phaseloop::cc_wrapper {
namespace {

std::string StarlarkString(const std::string& s) {
  return absl::StrCat(
      "\"", absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
}

std::string StarlarkList(const std::vector<std::string>& items,
                         const std::string& indent) {
  std::string out = "[\n";
  for (const std::string& item : items) {
    absl::StrAppend(&out, indent, "    ", StarlarkString(item), ",\n");
  }
  return absl::StrCat(out, indent, "]");
}

}  // namespace

std::string ArtifactPolicyFile() {
  return absl::StrCat(
      "# The phaseloop policy of this Bazel toolchain: one spec line.\n"
      "# policy.plpolicy is a learned size policy (by default the one "
      "phaseloop\n"
      "# ships); at -Oz each file gets -Oz or the best of the ",
      policy_runtime::kDefaultTopK,
      " candidate\n"
      "# pipelines it rates highest, measured in the compile within a budget\n"
      "# of work (IR instructions, never the clock: the same object on any\n"
      "# machine), so no object is larger than -Oz's. Other -O levels run\n"
      "# clang's pipeline.\n"
      "#   baseline          clang's own pipeline for each file's -O level\n"
      "#   fixed:<pipeline>  one pass pipeline for every file, e.g. "
      "fixed:default<Oz>\n"
      "# Editing this file or policy.plpolicy makes Bazel recompile every "
      "C/C++ file.\n"
      "artifact:policy.plpolicy",
      policy_runtime::DefaultTopKQuery(), "\n");
}

std::string RenderBuildFile(const BuildFileSettings& s) {
  std::vector<std::pair<std::string, std::string>> tools = {
      {"gcc", "cc_wrapper.sh"}};
  tools.insert(tools.end(), s.tool_paths.begin(), s.tool_paths.end());
  std::string tool_paths = "{\n";
  for (const auto& [name, path] : tools) {
    absl::StrAppend(&tool_paths, "        ", StarlarkString(name), ": ",
                    StarlarkString(path), ",\n");
  }
  absl::StrAppend(&tool_paths, "    }");
  const std::string policy_flag = absl::StrCat(
      "--phaseloop-policy=",
      s.package.empty() ? "" : absl::StrCat(s.package, "/"), "policy");
  std::vector<std::string> link_flags = {"-Wl,-no-as-needed",
                                         "-Wl,-z,relro,-z,now"};
  if (s.use_lld) link_flags.insert(link_flags.begin(), "-fuse-ld=lld");
  const std::string indent = "    ";
  auto list = [&](const std::vector<std::string>& items) {
    return StarlarkList(items, indent);
  };
  return absl::StrCat(
      kGeneratedMarker, R"x(; rerun it rather than editing.
# A C/C++ toolchain whose compiler is phaseloop-cc (clang-16 plus the pass
# ordering policy in ./policy). Use it with
#   build --crosstool_top=//)x",
      s.package, R"x(:toolchain
# Edit ./policy to change the policy: it is an input of every compile action
# (compiler_files), so its content is part of each action key.
load("@bazel_tools//tools/cpp:unix_cc_toolchain_config.bzl", "cc_toolchain_config")

package(default_visibility = ["//visibility:public"])

filegroup(
    name = "compiler_files",
    srcs = [
        "cc_wrapper.sh",
        "policy",
    ] + glob(["*.plpolicy", "*.plpolicy.sig", "trust"]),
)

filegroup(
    name = "linker_files",
    srcs = ["cc_wrapper.sh"],
)

filegroup(name = "empty")

cc_toolchain_suite(
    name = "toolchain",
    toolchains = {
        "k8": ":cc-compiler-k8",
        "k8|clang": ":cc-compiler-k8",
    },
)

cc_toolchain(
    name = "cc-compiler-k8",
    all_files = ":compiler_files",
    ar_files = ":empty",
    as_files = ":compiler_files",
    compiler_files = ":compiler_files",
    dwp_files = ":empty",
    linker_files = ":linker_files",
    objcopy_files = ":empty",
    strip_files = ":empty",
    supports_param_files = 1,
    toolchain_config = ":config",
    toolchain_identifier = "phaseloop-clang-16",
)

# The flags of Bazel's auto-configured clang toolchain (unix_cc_configure.bzl).
cc_toolchain_config(
    name = "config",
    abi_libc_version = "local",
    abi_version = "local",
    compile_flags = )x",
      list({policy_flag, "-U_FORTIFY_SOURCE", "-fstack-protector", "-Wall",
            "-Wthread-safety", "-Wself-assign", "-fcolor-diagnostics",
            "-fno-omit-frame-pointer"}),
      R"x(,
    compiler = "clang",
    coverage_compile_flags = )x",
      list({"-fprofile-instr-generate", "-fcoverage-mapping"}), R"x(,
    coverage_link_flags = ["-fprofile-instr-generate"],
    cpu = "k8",
    cxx_builtin_include_directories = )x",
      list(s.include_dirs), R"x(,
    cxx_flags = ["-std=c++0x"],
    dbg_compile_flags = ["-g"],
    host_system_name = "local",
    link_flags = )x",
      list(link_flags), R"x(,
    link_libs = )x",
      list({"-lstdc++", "-lm"}), R"x(,
    opt_compile_flags = )x",
      list({"-g0", "-O2", "-D_FORTIFY_SOURCE=1", "-DNDEBUG",
            "-ffunction-sections", "-fdata-sections"}),
      R"x(,
    opt_link_flags = ["-Wl,--gc-sections"],
    supports_start_end_lib = False,
    target_libc = "local",
    target_system_name = "local",
    tool_paths = )x",
      tool_paths, R"x(,
    toolchain_identifier = "phaseloop-clang-16",
    unfiltered_compile_flags = )x",
      list({"-no-canonical-prefixes", "-Wno-builtin-macro-redefined",
            "-D__DATE__=\"redacted\"", "-D__TIMESTAMP__=\"redacted\"",
            "-D__TIME__=\"redacted\""}),
      ",\n)\n");
}

std::string RenderCcWrapper(const CcWrapperSettings& s) {
  const std::string clang_dir =
      std::filesystem::path(s.clang).parent_path().string();
  // Only directories other than phaseloop-cc's own defaults are named: the
  // defaults are per user, and this file is in every compile action's key.
  std::string directories;
  if (!s.spool_dir.empty()) {
    absl::StrAppend(
        &directories, "spool=", process::ShellQuote(s.spool_dir),
        "\nexport PHASELOOP_SPOOL=\"${PHASELOOP_SPOOL:-$spool}\"\n");
  }
  if (!s.outcome_cache_dir.empty()) {
    absl::StrAppend(&directories, "outcomes=",
                    s.outcome_cache_dir == "off"
                        ? std::string("off")
                        : process::ShellQuote(s.outcome_cache_dir),
                    "\nexport PHASELOOP_OUTCOME_CACHE=\""
                    "${PHASELOOP_OUTCOME_CACHE-$outcomes}\"\n");
  }
  return absl::StrCat(
      "#!/bin/sh\n", kGeneratedMarker, R"x(; rerun it rather than editing.
# Bazel's compiler and linker driver: phaseloop-cc, with PATH leading to the
# clang-16 whose builtin include directories BUILD lists (phaseloop-cc runs
# clang-16 from PATH). Bazel runs actions without HOME: phaseloop-cc then
# finds the user's decision spool and outcome cache (~/.cache/phaseloop) by
# the password file, so only other directories are set here (an action_env
# PHASELOOP_SPOOL or PHASELOOP_OUTCOME_CACHE wins; an empty outcome cache is
# off), and users who keep the defaults share this file and every action key.
# This file is an input of every compile action: rerunning the generator
# after upgrading phaseloop changes the fingerprint below, so Bazel recompiles.
# phaseloop-cc and phaseloop-cc-opt fingerprint: )x",
      s.fingerprint, "\nphaseloop_cc=", process::ShellQuote(s.phaseloop_cc),
      "\nclang=", process::ShellQuote(s.clang),
      "\nexport PATH=", process::ShellQuote(clang_dir), "\":$PATH\"\n",
      directories,
      s.trust_file.empty()
          ? ""
          : absl::StrCat(
                "# Only artifacts the package's trust file accepts run (the "
                "rest: plain clang).\nexport PHASELOOP_TRUST_FILE=",
                process::ShellQuote(s.trust_file), "\n"),
      R"x(# phaseloop-cc runs phaseloop-cc-opt from beside its resolved path
# (readlink only for a link: no process on the common path).
missing="$phaseloop_cc"
if [ -x "$phaseloop_cc" ]; then
  resolved="$phaseloop_cc"
  if [ -L "$phaseloop_cc" ]; then
    resolved="$(readlink -f "$phaseloop_cc" 2>/dev/null)" || resolved=""
    [ -n "$resolved" ] || resolved="$phaseloop_cc"
  fi
  missing="${resolved%/*}/phaseloop-cc-opt"
  [ -x "$missing" ] && exec "$phaseloop_cc" "$@"
fi
# phaseloop-cc or its optimiser is gone (cleaned, moved). Plain clang here
# would be cached (locally, remotely) as this action's phaseloop output and
# served after the install is back: the action fails instead.
echo "phaseloop: $missing is missing or not executable: reinstall" \
  "phaseloop (tools/install.sh), or rerun \`phaseloop toolchain bazel\`" \
  "with --cc naming an installed phaseloop-cc" >&2
exit 1
)x");
}

}  // namespace phaseloop::cc_wrapper
