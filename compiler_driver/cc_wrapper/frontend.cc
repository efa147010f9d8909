#include "compiler_driver/cc_wrapper/frontend.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "compiler_driver/cc_wrapper/argument_processing.h"

extern char** environ;

namespace phaseloop::cc_wrapper {
namespace {

std::string TempDir() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

// Reads and unlinks a file; "" when missing.
std::string Take(const std::string& path) {
  std::string bytes;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buffer[65536];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof buffer)) > 0 ||
           (n < 0 && errno == EINTR)) {
      if (n > 0) bytes.append(buffer, static_cast<size_t>(n));
    }
    close(fd);
  }
  unlink(path.c_str());
  return bytes;
}

bool ChoosesColour(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "-fcolor-diagnostics" || arg == "-fno-color-diagnostics" ||
        arg.rfind("-fdiagnostics-color", 0) == 0 ||
        arg.rfind("-fno-diagnostics-color", 0) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

FrontendRun RunFrontend(const std::string& clang,
                        const std::vector<std::string>& frontend_args) {
  FrontendRun run;
  std::string bitcode_path = TempDir() + "/phaseloop-XXXXXX.bc";
  int bitcode_fd = mkstemps(bitcode_path.data(), 3);
  std::string stderr_path = TempDir() + "/phaseloop-XXXXXX.err";
  int stderr_fd = mkstemps(stderr_path.data(), 4);
  if (bitcode_fd < 0 || stderr_fd < 0) {
    run.error = absl::StrCat("cannot create temporary files in ", TempDir(),
                             ": ", std::strerror(errno));
    if (bitcode_fd >= 0) close(bitcode_fd), unlink(bitcode_path.c_str());
    if (stderr_fd >= 0) close(stderr_fd), unlink(stderr_path.c_str());
    return run;
  }
  close(bitcode_fd);

  std::vector<std::string> args;
  args.push_back(clang);
  for (const std::string& arg : frontend_args) {
    args.push_back(arg == kBitcodePlaceholder ? bitcode_path : arg);
  }
  if (isatty(STDERR_FILENO) && !ChoosesColour(frontend_args)) {
    args.push_back("-fcolor-diagnostics");
  }
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, stderr_fd, STDERR_FILENO);
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, clang.c_str(), &actions, nullptr,
                             argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(stderr_fd);
  int status = 0;
  if (spawned == 0) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  run.diagnostics = Take(stderr_path);
  run.bitcode = Take(bitcode_path);
  if (spawned != 0) {
    run.error = absl::StrCat("cannot run ", clang, ": ", std::strerror(spawned));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    run.error = absl::StrCat(clang, " exited with status ",
                             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else if (run.bitcode.empty()) {
    run.error = absl::StrCat(clang, " wrote no bitcode");
  } else {
    run.ok = true;
  }
  return run;
}

absl::Status WriteNewFile(const std::string& path, const std::string& bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 || done != bytes.size()) {
    unlink(path.c_str());
    return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

}  // namespace phaseloop::cc_wrapper
