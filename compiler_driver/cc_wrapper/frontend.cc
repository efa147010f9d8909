#include "compiler_driver/cc_wrapper/frontend.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

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

StartedFrontend StartFrontend(const std::string& clang,
                              const std::vector<std::string>& frontend_args) {
  StartedFrontend started;
  started.bitcode_path = TempDir() + "/phaseloop-XXXXXX.bc";
  int bitcode_fd = mkstemps(started.bitcode_path.data(), 3);
  started.stderr_path = TempDir() + "/phaseloop-XXXXXX.err";
  int stderr_fd = mkstemps(started.stderr_path.data(), 4);
  if (bitcode_fd < 0 || stderr_fd < 0) {
    started.error = "cannot create temporary files in " + TempDir() + ": " +
                    std::strerror(errno);
    if (bitcode_fd >= 0) close(bitcode_fd), unlink(started.bitcode_path.c_str());
    if (stderr_fd >= 0) close(stderr_fd), unlink(started.stderr_path.c_str());
    return started;
  }
  close(bitcode_fd);
  std::vector<std::string> args;
  args.push_back(clang);
  for (const std::string& arg : frontend_args) {
    args.push_back(arg == kBitcodePlaceholder ? started.bitcode_path : arg);
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
  if (spawned != 0) {
    started.error = "cannot run " + clang + ": " + std::strerror(spawned);
    unlink(started.bitcode_path.c_str());
    unlink(started.stderr_path.c_str());
    return started;
  }
  started.pid = pid;
  return started;
}

FrontendRun FinishFrontend(const StartedFrontend& started,
                           const std::string& clang) {
  FrontendRun run;
  if (started.pid < 0) {
    run.error = started.error;
    return run;
  }
  int status = 0;
  pid_t waited;
  while ((waited = waitpid(started.pid, &status, 0)) < 0 && errno == EINTR) {
  }
  run.diagnostics = Take(started.stderr_path);
  run.bitcode = Take(started.bitcode_path);
  if (waited != started.pid) {
    run.error = "lost the frontend process " + std::to_string(started.pid);
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    run.error = clang + " exited with status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else if (run.bitcode.empty()) {
    run.error = clang + " wrote no bitcode";
  } else {
    run.ok = true;
  }
  return run;
}

std::string EncodeStartedFrontend(const StartedFrontend& started) {
  return std::to_string(started.pid) + ":" + started.bitcode_path + ":" +
         started.stderr_path;
}

StartedFrontend TakeStartedFrontend() {
  StartedFrontend started;
  const char* value = std::getenv(kStartedFrontendEnv);
  if (value == nullptr) return started;
  std::string text = value;
  unsetenv(kStartedFrontendEnv);  // not for clang, should we fall back
  size_t first = text.find(':');
  size_t second = first == std::string::npos ? first : text.find(':', first + 1);
  if (second == std::string::npos) return started;
  started.bitcode_path = text.substr(first + 1, second - first - 1);
  started.stderr_path = text.substr(second + 1);
  started.pid = std::atoi(text.substr(0, first).c_str());
  if (started.pid <= 0) started.pid = -1;
  return started;
}

bool WriteNewFile(const std::string& path, const std::string& bytes,
                  std::string* error) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    *error = "cannot create " + path + ": " + std::strerror(errno);
    return false;
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
    *error = "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace phaseloop::cc_wrapper
