#include "compiler_driver/cc_wrapper/toolchain_command.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "common/command/exit_code.h"
#include "common/command/subcommand.h"
#include "common/files/atomic_file.h"
#include "common/process/self_executable.h"
#include "compiler_driver/cc_wrapper/bazel_toolchain.h"
#include "compiler_driver/cc_wrapper/bazel_toolchain_files.h"
#include "compiler_driver/cc_wrapper/policy.h"
#include "compiler_driver/policy_runtime/artifact_trust.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/topk_defaults.h"

namespace phaseloop::cc_wrapper {
namespace {

namespace fs = std::filesystem;

int RunToolchainBazel(BazelToolchainOptions options) {
  if (options.cc.empty()) {
    options.cc = process::PhaseloopCcBeside();
    if (options.cc.empty()) {
      std::cerr
          << "error: no phaseloop-cc next to this phaseloop binary or in its "
             "bazel-bin tree; pass --cc with the path of phaseloop-cc\n";
      return command::kExitBadInput;
    }
  }
  // No policy given and none in the package yet: the shipped default.
  if (options.policy_file.empty() && options.artifact_file.empty() &&
      !fs::exists(fs::path(options.out_dir) / "policy")) {
    options.artifact_file = FindDefaultPolicy();
    if (options.artifact_file.empty()) {
      std::cerr << "note: the shipped default policy (share/phaseloop/policies/"
                   "default.plpolicy) was not found beside this phaseloop; "
                   "the toolchain runs `baseline` (pass --artifact FILE for a "
                   "learned policy)\n";
    }
  }
  std::string artifact_version;
  if (options.policy_file.empty() && !options.artifact_file.empty()) {
    auto artifact =
        policy_runtime::ReadPolicyArtifactFile(options.artifact_file);
    if (!artifact.ok()) {
      std::cerr << "error: " << artifact.status().message() << "\n";
      return command::kExitBadInput;
    }
    artifact_version = policy_runtime::PolicyVersionOf(*artifact);
    // With a trust file (given, or the package's), an artifact it does not
    // accept would fail open on every compile: refuse it here instead.
    const std::string trust =
        !options.trust_file.empty() ? options.trust_file
        : fs::exists(fs::path(options.out_dir) / kTrustFileName)
            ? (fs::path(options.out_dir) / kTrustFileName).string()
            : "";
    std::string bytes;
    absl::Status trusted = files::ReadWholeFile(options.artifact_file, &bytes);
    if (trusted.ok()) {
      trusted = policy_runtime::CheckArtifactTrust(bytes, options.artifact_file,
                                                   trust);
    }
    if (!trusted.ok()) {
      std::cerr << "error: " << trusted.message()
                << " (with this trust file the toolchain would compile every "
                   "file with plain clang)\n";
      return command::kExitBadInput;
    }
  }
  absl::StatusOr<BazelToolchain> toolchain = WriteBazelToolchain(options);
  if (!toolchain.ok()) {
    std::cerr << "error: " << toolchain.status().message() << "\n";
    const absl::StatusCode code = toolchain.status().code();
    return code == absl::StatusCode::kInternal ||
                   code == absl::StatusCode::kUnknown
               ? command::kExitInternal
               : command::kExitBadInput;
  }
  const std::string package =
      toolchain->package.empty() ? std::string(".") : toolchain->package;
  std::cout << "wrote " << package << "/{BUILD,cc_wrapper.sh,policy"
            << (artifact_version.empty() ? "" : ",policy.plpolicy")
            << (toolchain->artifact_signed ? ",policy.plpolicy.sig" : "")
            << (options.trust_file.empty() ? "" : ",trust") << "} (compiler "
            << fs::absolute(options.cc).lexically_normal().string() << ")\n"
            << "add to your workspace's .bazelrc:\n";
  for (const std::string& line : toolchain->bazelrc_lines)
    std::cout << "  " << line << "\n";
  std::cout << "(the --sandbox_writable_path lines name your own directories: "
               "where the workspace's .bazelrc is shared, each user puts them "
               "in ~/.bazelrc instead)\n";
  std::cout << "policy:    " << toolchain->policy_path
            << " (edit it to change the policy; Bazel recompiles)\n";
  if (!artifact_version.empty()) {
    std::cout << "artifact:  " << options.artifact_file << " (policy_version "
              << artifact_version << ", topk k=" << policy_runtime::kDefaultTopK
              << ", a budget of " << policy_runtime::kDefaultTopKBudget
              << " IR instructions of work per file, never the clock)\n";
  }
  if (!toolchain->trust_path.empty()) {
    std::cout << "trust:     " << toolchain->trust_path
              << " (only artifacts it accepts run; others compile with plain "
                 "clang, counted in phaseloop stats)"
              << (artifact_version.empty() ? ""
                  : toolchain->artifact_signed
                      ? "; the artifact's signature: policy.plpolicy.sig"
                      : "; the artifact is the shipped default, trusted "
                        "by content")
              << "\n";
  }
  // Where each directory comes from in an action.
  auto source = [](bool in_script) {
    return in_script ? "set in cc_wrapper.sh"
                     : "phaseloop-cc's default for each user";
  };
  std::cout << "decisions: " << toolchain->spool_dir << " ("
            << source(toolchain->spool_in_script)
            << "; phaseloop stats --spool " << toolchain->spool_dir << ")\n";
  if (toolchain->outcome_cache_dir.empty()) {
    std::cout << "outcome cache: off (topk measures on every build)\n";
  } else {
    std::cout << "outcome cache: " << toolchain->outcome_cache_dir << " ("
              << source(toolchain->outcome_cache_in_script)
              << "; phaseloop cache stats --dir "
              << toolchain->outcome_cache_dir << ")\n";
  }
  if (!toolchain->per_user_paths.empty()) {
    std::cerr << "note: cc_wrapper.sh names "
              << absl::StrJoin(toolchain->per_user_paths, ", ")
              << ", yours (under your home directory, or moved there by "
                 "XDG_CACHE_HOME); the script is an input of every compile "
                 "action, so users who share a remote cache would get "
                 "different action keys: for a shared cache, install "
                 "phaseloop outside home directories (tools/install.sh "
                 "--prefix /usr/local) and keep the default spool and "
                 "outcome cache\n";
  }
  return command::kExitOk;
}

}  // namespace

void AddToolchainCommand(CLI::App& app, int& exit_code) {
  CLI::App* toolchain = command::AddCommandGroup(
      app, "toolchain",
      "Generate build-system toolchains that use phaseloop-cc");
  auto [bazel, options] = command::AddSubcommand<BazelToolchainOptions>(
      *toolchain, "bazel",
      "Write a Bazel C/C++ toolchain package whose compiler is phaseloop-cc",
      exit_code, RunToolchainBazel);
  bazel
      ->add_option(
          "--out", options->out_dir,
          "package directory inside your workspace, e.g. tools/phaseloop")
      ->required();
  CLI::Option* policy = bazel->add_option(
      "--policy", options->policy_file,
      "policy file to copy into the package (default: keep the package's "
      "policy, else the shipped default policy artifact)");
  bazel
      ->add_option("--artifact", options->artifact_file,
                   "policy artifact (.plpolicy) to copy into the package and "
                   "run in topk mode (default when the package has no policy "
                   "yet: the shipped default)")
      ->excludes(policy);
  bazel
      ->add_option("--trust-file", options->trust_file,
                   "trust file to copy into the package: compiles then run "
                   "only artifacts signed by its keys (default: keep the "
                   "package's)")
      ->envname("PHASELOOP_TRUST_FILE");
  bazel->add_option(
      "--spool", options->spool_dir,
      "decision record directory (default: ~/.cache/phaseloop/spool)");
  bazel->add_option("--outcome-cache", options->outcome_cache_dir,
                    "topk's outcome cache directory, or 'off' (default: "
                    "~/.cache/phaseloop/outcomes)");
  bazel->add_option(
      "--cc", options->cc,
      "phaseloop-cc (default: next to this binary, or in its bazel-bin tree)");
}

}  // namespace phaseloop::cc_wrapper
