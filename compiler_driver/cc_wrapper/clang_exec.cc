#include "compiler_driver/cc_wrapper/clang_exec.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/process/self_executable.h"

namespace phaseloop::cc_wrapper {
DriverKind DriverKindOf(const char* argv0) {
  std::string name = argv0 == nullptr ? "" : argv0;
  size_t slash = name.rfind('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  return name.size() >= 2 && name.compare(name.size() - 2, 2, "++") == 0
             ? DriverKind::kCxx
             : DriverKind::kC;
}

std::string SiblingBinary(const std::string& name) {
  const std::string self = process::SelfExecutable();
  if (self.empty()) return name;
  size_t slash = self.rfind('/');
  return slash == std::string::npos ? name : self.substr(0, slash + 1) + name;
}

bool Verbose() {
  const char* value = std::getenv("PHASELOOP_VERBOSE");
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

void Record(const WrapperConfig& config, const LauncherRecord& record) {
  std::string error;
  WriteSpoolFile(config.spool_dir, EncodeLauncherBatch(record), &error,
                 {1, config.spool_max_size});
  if (Verbose()) {
    std::fprintf(stderr, "phaseloop-cc: %s%s%s%s\n", record.reason.c_str(),
                 record.detail.empty() ? "" : ": ", record.detail.c_str(),
                 error.empty() ? "" : (" (not logged: " + error + ")").c_str());
  }
}

int ExecClang(const WrapperConfig& config, DriverKind kind,
              const std::vector<std::string>& args) {
  const std::string& clang =
      kind == DriverKind::kCxx ? config.clangxx : config.clang;
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(clang.c_str()));
  for (const std::string& arg : args)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execvp(clang.c_str(), argv.data());
  std::fprintf(stderr,
               "phaseloop-cc: cannot run '%s': %s (set clang = PATH "
               "in the phaseloop config or install clang-16)\n",
               clang.c_str(), std::strerror(errno));
  return 127;
}

}  // namespace phaseloop::cc_wrapper
