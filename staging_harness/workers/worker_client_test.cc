#include "staging_harness/workers/worker_client.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "common/testing/test_util.h"
#include "compiler_driver/passes/action_space.h"

namespace phaseloop::service {
namespace {

constexpr char kWorker[] = "staging_harness/workers/session_worker";
constexpr char kFixture[] = "compiler_driver/fixtures/matrix_loops.c";

int A(const char* name) { return *passes::ActionSpace::Llvm16().Find(name); }

std::unique_ptr<WorkerProcess> StartWorker(std::vector<std::string> args = {},
                                           int timeout_ms = 60000) {
  WorkerOptions options;
  options.worker_binary = kWorker;
  options.worker_args = std::move(args);
  options.call_timeout = std::chrono::milliseconds(timeout_ms);
  auto worker = WorkerProcess::Start(options);
  EXPECT_TRUE(worker.ok()) << worker.status();
  return worker.ok() ? std::move(*worker) : nullptr;
}

v1::ModuleSource Fixture() {
  v1::ModuleSource source;
  source.set_path(kFixture);
  return source;
}

std::string HashOf(RemoteSession& s) {
  auto reply = s.Observe({v1::MODULE_HASH});
  EXPECT_TRUE(reply.ok()) << reply.status();
  return reply.ok() ? reply->observations(0).text() : "";
}

TEST(WorkerClient, StartStepObserveFork) {
  auto worker = StartWorker();
  ASSERT_NE(worker, nullptr);
  v1::StartSessionReply start;
  auto session =
      RemoteSession::Start(*worker, Fixture(), {v1::IR_COUNT}, &start);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ(start.action_space(), "llvm-16/v1");
  EXPECT_GE(start.action_count(), 120);
  const int64_t before = start.observations(0).scalar();
  auto step =
      (*session)->Step({A("sroa"), A("instcombine")},
                       {v1::IR_COUNT, v1::AUTOPHASE, v1::INST_COUNT,
                        v1::TEXT_SIZE, v1::MODULE_HASH, v1::ALLOC_SIZE});
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->actions_applied(), 2);
  EXPECT_LT(step->observations(0).scalar(), before);
  EXPECT_EQ(step->observations(1).vector_size(), 56);
  EXPECT_EQ(step->observations(2).vector_size(), 70);
  EXPECT_GT(step->observations(3).scalar(), 0);
  // The whole object: .text and the other allocated sections.
  EXPECT_EQ(step->observations(5).kind(), v1::ALLOC_SIZE);
  EXPECT_GT(step->observations(5).scalar(), step->observations(3).scalar());

  auto fork = (*session)->Fork();
  ASSERT_TRUE(fork.ok()) << fork.status();
  EXPECT_EQ(HashOf(**fork), step->observations(4).text());
  ASSERT_TRUE((*fork)->Step({A("gvn")}).ok());
  EXPECT_EQ(HashOf(**session),
            step->observations(4).text());  // parent untouched
}

TEST(WorkerClient, CrashingActionRestartsWorkerAndRestoresState) {
  auto worker = StartWorker({"--inject-crash-action=gvn"});
  ASSERT_NE(worker, nullptr);
  auto session = RemoteSession::Start(*worker, Fixture());
  ASSERT_TRUE(session.ok()) << session.status();
  const int generation = worker->generation();
  auto step = (*session)->Step({A("sroa"), A("gvn"), A("instcombine")});
  ASSERT_FALSE(step.ok());
  EXPECT_EQ(step.status().code(), absl::StatusCode::kAborted) << step.status();
  EXPECT_EQ((*session)->last_failed_action(), A("gvn"));
  EXPECT_EQ((*session)->history(), std::vector<int>{A("sroa")});
  EXPECT_GT(worker->generation(), generation);
  // The session goes on from the restored state.
  ASSERT_TRUE((*session)->Step({A("instcombine")}).ok());

  auto clean_worker = StartWorker();
  auto clean = RemoteSession::Start(*clean_worker, Fixture());
  ASSERT_TRUE(clean.ok());
  ASSERT_TRUE((*clean)->Step({A("sroa"), A("instcombine")}).ok());
  EXPECT_EQ(HashOf(**session), HashOf(**clean));
}

TEST(WorkerClient, HangingActionTimesOutAndIsReported) {
  auto worker = StartWorker({"--inject-hang-action=licm"}, /*timeout_ms=*/3000);
  ASSERT_NE(worker, nullptr);
  auto session = RemoteSession::Start(*worker, Fixture());
  ASSERT_TRUE(session.ok()) << session.status();
  auto step = (*session)->Step({A("sroa"), A("licm")});
  ASSERT_FALSE(step.ok());
  EXPECT_EQ(step.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ((*session)->last_failed_action(), A("licm"));
  EXPECT_EQ((*session)->history(), std::vector<int>{A("sroa")});
  ASSERT_TRUE((*session)->Step({A("instcombine")}).ok());
}

TEST(WorkerClient, RejectedInputsAreTypedErrors) {
  auto worker = StartWorker();
  ASSERT_NE(worker, nullptr);
  v1::ModuleSource missing;
  missing.set_path("no/such/program.c");
  auto bad = RemoteSession::Start(*worker, missing);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no/such/program.c"),
            std::string::npos);

  auto session = RemoteSession::Start(*worker, Fixture());
  ASSERT_TRUE(session.ok());
  auto step = (*session)->Step({A("sroa"), 99999});
  EXPECT_EQ(step.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE((*session)->history().empty());
  EXPECT_EQ(HashOf(**session).size(), 32u);
}

// A search worker killed with SIGKILL left its session worker running.
TEST(WorkerClient, TheWorkerDiesWithItsParent) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    close(pipe_fds[0]);
    std::unique_ptr<WorkerProcess> worker = StartWorker();
    const pid_t pid = worker ? worker->pid() : -1;
    if (write(pipe_fds[1], &pid, sizeof pid) != sizeof pid) _exit(2);
    pause();  // until killed
    _exit(3);
  }
  close(pipe_fds[1]);
  pid_t worker = -1;
  ASSERT_EQ(read(pipe_fds[0], &worker, sizeof worker),
            static_cast<ssize_t>(sizeof worker));
  close(pipe_fds[0]);
  ASSERT_GT(worker, 0);
  kill(parent, SIGKILL);
  ASSERT_EQ(waitpid(parent, nullptr, 0), parent);
  const bool gone = testing::WaitForProcessGone(std::to_string(worker));
  EXPECT_TRUE(gone) << "session worker " << worker << " outlived its parent";
  if (!gone) kill(worker, SIGKILL);
}

TEST(WorkerClient, MissingWorkerBinaryIsAClearError) {
  WorkerOptions options;
  options.worker_binary = "/no/such/worker";
  auto worker = WorkerProcess::Start(options);
  ASSERT_FALSE(worker.ok());
  EXPECT_NE(worker.status().message().find("/no/such/worker"),
            std::string::npos);
}

}  // namespace
}  // namespace phaseloop::service
