#include "common/process/self_executable.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace phaseloop::process {

namespace fs = std::filesystem;

std::string SelfExecutable() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string() : self.string();
}

std::string ExecutableBeside(const std::vector<std::string>& relative_paths,
                             const std::string& dir) {
  const fs::path base =
      dir.empty() ? fs::path(SelfExecutable()).parent_path() : fs::path(dir);
  if (base.empty()) return "";
  for (const std::string& relative : relative_paths) {
    const fs::path candidate = base / relative;
    std::error_code error;
    if (fs::is_regular_file(candidate, error) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate.lexically_normal().string();
    }
  }
  return "";
}

std::string PhaseloopCcBeside(const std::string& dir) {
  return ExecutableBeside(
      {"phaseloop-cc", "../compiler_driver/cc_wrapper/phaseloop-cc"}, dir);
}

}  // namespace phaseloop::process
