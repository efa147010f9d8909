// Exercises every action of the LLVM 16 action space on every fixture, from
// the unoptimised module and from a partly optimised one. Each fixture runs in
// a forked child, so an action that crashes or hangs is reported by name
// instead of taking the test down. An action that crashes, hangs, breaks the
// verifier or is nondeterministic belongs in llvm-16/excluded_by_test.tsv.
#include "compiler_driver/passes/action_space.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <sstream>

#include "common/testing/test_util.h"
#include "compiler_driver/session/compilation_session.h"
#include "compiler_driver/testing/fixture_paths.h"

namespace phaseloop::passes {
namespace {

constexpr int kActionTimeoutMs = 60000;

// Child: for each action from `first`, report "S i", then "O i" (ok),
// "V i" (verifier) or "N i" (nondeterministic). Never returns.
[[noreturn]] void ExerciseInChild(const std::string& fixture,
                                  bool optimise_first, int first, int fd) {
  auto session = session::CompilationSession::StartFromFile(
      fixture, ir::FrontendOptions{}, session::SessionOptions{});
  if (!session.ok()) _exit(3);
  const ActionSpace& space = ActionSpace::Llvm16();
  if (optimise_first) {
    for (const char* name : {"sroa", "instcombine", "simplifycfg", "inline",
                             "gvn", "licm", "loop-rotate", "loop-unroll"}) {
      if (!(*session)->Step(*space.Find(name)).ok()) _exit(4);
    }
  }
  for (int i = first; i < space.size(); ++i) {
    dprintf(fd, "S %d\n", i);
    auto a = (*session)->Fork();
    auto b = (*session)->Fork();
    absl::Status sa = a->Step(i);
    absl::Status sb = b->Step(i);
    char verdict = 'O';
    if (!sa.ok() || !sb.ok()) {
      verdict = 'V';
    } else if (a->StateHash() != b->StateHash()) {
      verdict = 'N';
    }
    dprintf(fd, "%c %d\n", verdict, i);
  }
  _exit(0);
}

struct Failure {
  std::string fixture;
  std::string action;
  std::string what;
};

void ExerciseFixture(const std::string& fixture, bool optimise_first,
                     std::vector<Failure>& failures) {
  const ActionSpace& space = ActionSpace::Llvm16();
  int next = 0;
  while (next < space.size()) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      ExerciseInChild(fixture, optimise_first, next, fds[1]);
    }
    close(fds[1]);
    FILE* in = fdopen(fds[0], "r");
    int started = -1;
    bool hung = false;
    for (;;) {
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, kActionTimeoutMs) == 0) {
        hung = true;
        kill(pid, SIGKILL);
        break;
      }
      char kind;
      int index;
      if (fscanf(in, " %c %d", &kind, &index) != 2) break;
      if (kind == 'S') {
        started = index;
        continue;
      }
      started = -1;
      next = index + 1;
      if (kind == 'V')
        failures.push_back(
            {fixture, space.at(index).name, "fails the verifier"});
      if (kind == 'N')
        failures.push_back({fixture, space.at(index).name, "nondeterministic"});
    }
    fclose(in);
    int status = 0;
    waitpid(pid, &status, 0);
    if (started >= 0) {
      failures.push_back(
          {fixture, space.at(started).name, hung ? "hangs" : "crashes"});
      next = started + 1;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ADD_FAILURE() << fixture << ": child failed to start (status " << status
                    << ")";
      return;
    }
  }
}

TEST(ActionSpace, HasAtLeast120UniqueActionsThatParse) {
  const ActionSpace& space = ActionSpace::Llvm16();
  EXPECT_GE(space.size(), 120);
  std::set<std::string> names;
  PassRunner runner(nullptr, llvm::PipelineTuningOptions());
  for (const Action& a : space.actions()) {
    EXPECT_TRUE(names.insert(a.name).second) << "duplicate " << a.name;
    EXPECT_TRUE(runner.Validate(a.pipeline).ok()) << a.name;
  }
  EXPECT_EQ(space.Find("instcombine").has_value(), true);
  EXPECT_EQ(space.Find("no-such-pass").has_value(), false);
}

TEST(ActionSpace, EveryActionIsSafeOnEveryFixture) {
  std::vector<Failure> failures;
  for (const std::string& fixture : testing::FixturePaths()) {
    ExerciseFixture(fixture, /*optimise_first=*/false, failures);
    ExerciseFixture(fixture, /*optimise_first=*/true, failures);
  }
  std::ostringstream report;
  for (const Failure& f : failures) {
    report << f.action << "\t" << f.what << " on " << f.fixture << "\n";
  }
  EXPECT_TRUE(failures.empty())
      << "add these to compiler_driver/passes/llvm-16/excluded_by_test.tsv and "
         "rerun generate_action_list.sh:\n"
      << report.str();
}

}  // namespace
}  // namespace phaseloop::passes
