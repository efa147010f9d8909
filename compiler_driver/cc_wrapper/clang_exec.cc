#include "compiler_driver/cc_wrapper/clang_exec.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

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

namespace {

// `args` as a response file clang's driver reads back unchanged (GNU
// quoting: every blank, quote and backslash escaped), or nullopt when one
// cannot be written so (an empty argument: the tokenizer drops it).
std::optional<std::string> ResponseFileText(
    const std::vector<std::string>& args) {
  // A first line of its own: clang strips a UTF-8 byte order mark from the
  // start of a response file, and reads one starting FF FE / FE FF as
  // UTF-16 (an argument beginning so was changed).
  std::string text = "\n";
  for (const std::string& arg : args) {
    if (arg.empty()) return std::nullopt;
    for (char c : arg) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
          c == '\f' || c == '\'' || c == '"' || c == '\\') {
        text += '\\';
      }
      text += c;
    }
    text += '\n';
  }
  return text;
}

// Runs clang with `args` in an anonymous file (memfd, inherited across
// exec) named as a response file; returns only when it cannot. The file
// stays open in clang and whatever it runs (the linker): its size in
// memory, for a command that is a fallback already. Needs /proc.
void ExecWithResponseFile(const std::string& clang,
                          const std::vector<std::string>& args) {
  std::optional<std::string> text = ResponseFileText(args);
  if (!text) return;
  const int fd = memfd_create("phaseloop-cc-args", 0);
  if (fd < 0) return;
  size_t written = 0;
  while (written < text->size()) {
    const ssize_t n = write(fd, text->data() + written, text->size() - written);
    if (n <= 0) {
      close(fd);
      return;
    }
    written += static_cast<size_t>(n);
  }
  const std::string at = "@/proc/self/fd/" + std::to_string(fd);
  char* argv[] = {const_cast<char*>(clang.c_str()),
                  const_cast<char*>(at.c_str()), nullptr};
  execvp(clang.c_str(), argv);
  close(fd);
}

}  // namespace

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
  // Too long for exec: the arguments expanded from a response file that
  // held a --phaseloop-* flag (FallbackClangArgs) can exceed what a command
  // line may carry, where clang reading the file did not. They go to clang
  // as a response file again.
  if (errno == E2BIG) {
    ExecWithResponseFile(clang, args);
    errno = E2BIG;
  }
  std::fprintf(stderr,
               "phaseloop-cc: cannot run '%s': %s (set clang = PATH "
               "in the phaseloop config or install clang-16)\n",
               clang.c_str(), std::strerror(errno));
  return 127;
}

}  // namespace phaseloop::cc_wrapper
