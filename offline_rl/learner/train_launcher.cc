#include "offline_rl/learner/train_launcher.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "common/command/exit_code.h"
#include "common/process/self_executable.h"

namespace phaseloop::offline_rl {
namespace {

namespace fs = std::filesystem;

constexpr char kBinary[] = "phaseloop-train";

bool Executable(const fs::path& p) {
  return !p.empty() && access(p.c_str(), X_OK) == 0 && !fs::is_directory(p);
}

}  // namespace

std::string FindTrainBinary() {
  if (const char* env = std::getenv("PHASELOOP_TRAIN_BINARY")) {
    return Executable(env) ? std::string(env) : "";
  }
  const fs::path exe = process::SelfExecutable();
  if (exe.empty()) return "";
  const fs::path dir = exe.parent_path();
  std::vector<fs::path> candidates = {dir / kBinary};
  const fs::path in_runfiles =
      fs::path("phaseloop") / "offline_rl" / "learner" / kBinary;
  if (const char* runfiles = std::getenv("RUNFILES_DIR")) {
    candidates.push_back(fs::path(runfiles) / in_runfiles);
  }
  candidates.push_back(fs::path(exe.string() + ".runfiles") / in_runfiles);
  candidates.push_back(dir / ".." / "offline_rl" / "learner" / kBinary);
  for (const fs::path& c : candidates) {
    if (Executable(c)) return c.lexically_normal().string();
  }
  return "";
}

void AddTrainCommand(CLI::App& app, int& exit_code) {
  CLI::App* train = app.add_subcommand(
      "train",
      "learn a policy from a replay buffer and export the artifact (runs "
      "phaseloop-train; `phaseloop train --help` for its flags)");
  // Everything after `train` goes to phaseloop-train untouched, --help too.
  train->prefix_command();
  train->set_help_flag();
  train->callback([train, &exit_code] {
    const std::string binary = FindTrainBinary();
    if (binary.empty()) {
      // An installation without the learner: not the user's flags (exit 1),
      // and --help still says what the command is.
      const std::vector<std::string>& args = train->remaining();
      const bool help =
          std::find_if(args.begin(), args.end(), [](const std::string& a) {
            return a == "--help" || a == "-h";
          }) != args.end();
      if (help) std::cout << train->get_description() << "\n";
      std::cerr << "phaseloop train: cannot find " << kBinary
                << " beside this phaseloop binary (or $PHASELOOP_TRAIN_BINARY),"
                   " which has the learner and its flags: build "
                   "//offline_rl/learner:phaseloop-train and install it next "
                   "to phaseloop\n";
      exit_code = help ? command::kExitOk : command::kExitInternal;
      return;
    }
    std::vector<std::string> args = {binary};
    for (const std::string& a : train->remaining()) args.push_back(a);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::cout.flush();
    // Waiting OpenMP threads sleep instead of spinning (openmp_env.h); set
    // here so phaseloop-train need not re-execute itself.
    setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/0);
    execv(binary.c_str(), argv.data());
    std::cerr << "phaseloop train: cannot run " << binary << ": "
              << std::strerror(errno) << "\n";
    exit_code = command::kExitInternal;
  });
}

}  // namespace phaseloop::offline_rl
