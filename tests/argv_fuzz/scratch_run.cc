#include "tests/argv_fuzz/scratch_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace phaseloop::argv_fuzz {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool WriteFile(const std::string& path, const std::string& contents) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::ofstream out(path, std::ios::binary);
  out << contents;
  return static_cast<bool>(out);
}

// argv[0] looked up on PATH (before fork: no allocation in the child).
std::string ResolveProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

Tree Snapshot(const std::string& dir) {
  Tree tree;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), dir).string();
    if (it->is_symlink()) {
      tree.files[rel] = "symlink -> " + fs::read_symlink(it->path()).string();
    } else if (it->is_directory()) {
      tree.dirs.insert(rel);
    } else {
      tree.files[rel] = ReadFile(it->path().string());
    }
  }
  return tree;
}

namespace {

void Replace(std::string* s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t pos = 0; (pos = s->find(from, pos)) != std::string::npos;) {
    s->replace(pos, from.size(), to);
    pos += to.size();
  }
}

// Text with the scratch directory and the driver's temporary files' random
// names (TMPDIR/<stem>-<6 hex>.<ext>) made the same on both sides.
}  // namespace

std::string Normalise(std::string text, const std::string& scratch,
                      const std::string& tmp) {
  static const std::regex kTempName("\\$TMPDIR/([^/\\s:'\"]*)-[0-9a-f]{6}\\.");
  Replace(&text, tmp, "$TMPDIR");
  Replace(&text, scratch, "$SCRATCH");
  return std::regex_replace(text, kTempName, "$$TMPDIR/$1-XXXXXX.");
}

// Runs `argv` in `dir` (already populated); stdout/stderr go to files beside
// `dir`, never into it.
RunResult Run(const std::vector<std::string>& argv,
              const std::vector<std::string>& env, const std::string& dir,
              const std::string& stdin_path, const std::string& io_prefix,
              int timeout_s) {
  const std::string program = ResolveProgram(argv[0]);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  const std::string out_path = io_prefix + ".stdout";
  const std::string err_path = io_prefix + ".stderr";
  RunResult r;
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    int in = open(stdin_path.c_str(), O_RDONLY);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    close(in);
    close(out);
    close(err);
    setpgid(0, 0);
    alarm(timeout_s);
    execve(program.c_str(), cargv.data(), cenv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  kill(-pid, SIGKILL);  // anything the run left behind in its group
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  r.tree = Snapshot(dir);
  return r;
}

}  // namespace phaseloop::argv_fuzz
