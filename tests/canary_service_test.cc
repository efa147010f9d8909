// The demo service as the canary controller runs it (issue 17), end to
// end with real parts:
//   1. the handler built by a nested Bazel 4.2.3 through the toolchain
//      `phaseloop toolchain bazel` writes: a baseline (policy `baseline`),
//      a candidate (the shipped default policy artifact) at -O3, and an -O0
//      reference, zlib from the Debian source package; a second build of the
//      candidate's policy records no decision (every object cached);
//   2. the three builds' outputs checked equal (handler_check);
//   3. `phaseloop canary serve` on the candidate against `phaseloop kafka
//      serve`, real HTTP requests of every kind, each response equal to the
//      handler's own output; SIGTERM; the SLI windows read back from Kafka
//      count exactly the requests sent.
// Build times, the check's time and the service's mean latency per kind
// are printed (figures, not assertions).
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "canary/service/check_requests.h"
#include "canary/service/handler_build.h"
#include "canary/service/handler_check.h"
#include "canary/service/handler_library.h"
#include "common/kafka/topic_reader.h"
#include "common/kafka/topics.h"
#include "common/testing/test_util.h"
#include "common/timing/elapsed.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "phaseloop/v1/sli.pb.h"

namespace phaseloop::canary {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr char kPhaseloop[] = "tools/phaseloop";
constexpr char kCc[] = "compiler_driver/cc_wrapper/phaseloop-cc";
constexpr char kTemplateFile[] = "canary/service/demo_workspace/WORKSPACE.in";
constexpr char kArtifact[] = "configs/policies/default.plpolicy";

// A child process with stdout and stderr in files, killed if still running.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::string& dir)
      : out_(dir + "/stdout"), err_(dir + "/stderr") {
    pid_ = fork();
    if (pid_ == 0) {
      dup2(open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
      dup2(open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
      std::vector<char*> c_argv;
      for (const std::string& arg : argv) {
        c_argv.push_back(const_cast<char*>(arg.c_str()));
      }
      c_argv.push_back(nullptr);
      execv(c_argv[0], c_argv.data());
      _exit(127);
    }
  }
  ~Process() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  // Sends SIGTERM; the exit status, or -1 when it died of a signal or did
  // not exit within 60 s.
  int Terminate() {
    kill(pid_, SIGTERM);
    for (int i = 0; i < 600; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
    return -1;
  }
  std::string Stderr() const { return testing::ReadFileOrEmpty(err_); }

 private:
  pid_t pid_ = -1;
  std::string out_, err_;
};

// The first line of `path` once it has one (30 s at most), else "".
std::string WaitForLine(const std::string& path) {
  for (int i = 0; i < 300; ++i) {
    std::string content = testing::ReadFileOrEmpty(path);
    if (absl::EndsWith(content, "\n")) {
      return std::string(absl::StripSuffix(content, "\n"));
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  return "";
}

std::string ZlibSourceDir() {
  const char* cache = std::getenv("PHASELOOP_CACHE");
  if (cache != nullptr && *cache != '\0') {
    return std::string(cache) + "/debian-src/zlib";
  }
  // Bazel gives tests a HOME of their own: the cache is the real user's.
  const passwd* user = getpwuid(getuid());
  return std::string(user ? user->pw_dir : "/root") +
         "/.cache/phaseloop/debian-src/zlib";
}

TEST(CanaryServiceTest, BuildCheckServeAndReadTheWindowsBack) {
  const std::string zlib = ZlibSourceDir();
  ASSERT_TRUE(fs::exists(zlib + "/.phaseloop-unpacked"))
      << "Debian source package zlib is not in " << zlib
      << "; run tools/fetch_sources.sh zlib (tools/setup.sh does)";
  // The data files are runfiles symlinks into the source tree: the
  // repository root holds the offline Bazel shims.
  const fs::path template_dir = fs::canonical(kTemplateFile).parent_path();
  const fs::path repo = template_dir.parent_path().parent_path().parent_path();
  const std::string dir = testing::MakeTempDir();
  const std::string baseline_policy = dir + "/baseline.policy";
  std::ofstream(baseline_policy) << "baseline\n";

  HandlerBuildOptions options;
  options.workspace_template = template_dir.string();
  options.zlib_source_dir = zlib;
  options.work_dir = dir + "/handler";
  options.phaseloop_cc = fs::absolute(kCc).string();
  options.phaseloop_cli = fs::absolute(kPhaseloop).string();
  options.bazel_shims_dir = (repo / "third_party/bazel_shims").string();
  options.server_idle_secs = 60;
  struct Shutdown {
    const HandlerBuildOptions& options;
    ~Shutdown() { (void)ShutdownHandlerBuildServer(options); }
  } shutdown{options};

  // --- 1. builds ---
  auto build = [&](const std::string& name, const std::string& policy,
                   const std::string& artifact, const std::string& level) {
    HandlerBuildOptions variant = options;
    variant.name = name;
    variant.policy_file = policy;
    variant.artifact_file = artifact;
    variant.opt_level = level;
    absl::StatusOr<BuiltHandler> built = BuildHandler(variant);
    EXPECT_TRUE(built.ok()) << built.status();
    if (built.ok()) {
      std::cout << "handler build " << name << " -" << level << ": "
                << built->build_seconds << " s, " << built->decisions
                << " decisions, " << built->so_path << "\n";
    }
    return built;
  };
  auto baseline = build("baseline", baseline_policy, "", "O3");
  ASSERT_TRUE(baseline.ok());
  EXPECT_GE(baseline->decisions, 12) << "zlib's 11 files and handler.c";
  auto candidate = build("candidate", "", fs::absolute(kArtifact), "O3");
  ASSERT_TRUE(candidate.ok());
  EXPECT_GE(candidate->decisions, 12) << "a new policy recompiles everything";
  auto reference = build("O0", baseline_policy, "", "O0");
  ASSERT_TRUE(reference.ok());
  auto again = build("candidate", "", fs::absolute(kArtifact), "O3");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->decisions, 0) << "the same policy again compiles nothing";
  EXPECT_NE(again->build_id, candidate->build_id);

  // --- 2. outputs checked equal ---
  auto check = CheckHandlersAgree({{"baseline", baseline->so_path},
                                   {"candidate", candidate->so_path},
                                   {"O0", reference->so_path}});
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->ok()) << check->Summary();
  std::cout << "check: " << check->Summary() << "\n";

  // --- 3. serve against the embedded Kafka ---
  fs::create_directories(dir + "/kafka");
  Process kafka({kPhaseloop, "kafka", "serve", "--brokers", "1",
                 "--bootstrap-file", dir + "/bootstrap"},
                dir + "/kafka");
  const std::string bootstrap = WaitForLine(dir + "/bootstrap");
  ASSERT_FALSE(bootstrap.empty()) << "no bootstrap from phaseloop kafka serve";
  fs::create_directories(dir + "/serve");
  Process serve({kPhaseloop,
                 "canary",
                 "serve",
                 "--handler",
                 candidate->so_path,
                 "--listen",
                 "127.0.0.1:0",
                 "--address-file",
                 dir + "/address",
                 "--service",
                 "demo",
                 "--group",
                 "canary",
                 "--deployment-id",
                 "d-e2e",
                 "--policy-version",
                 "default",
                 "--window-ms",
                 "1000",
                 "--kafka",
                 bootstrap,
                 "--spool",
                 dir + "/sli-spool",
                 "--threads",
                 "4"},
                dir + "/serve");
  const std::string address = WaitForLine(dir + "/address");
  ASSERT_FALSE(address.empty()) << serve.Stderr();
  const int port = std::stoi(address.substr(address.rfind(':') + 1));

  auto library = HandlerLibrary::Load(candidate->so_path);
  ASSERT_TRUE(library.ok()) << library.status();
  httplib::Client client("127.0.0.1", port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);  // as a load generator should
  client.set_read_timeout(30, 0);
  int sent = 0;
  std::map<std::string, std::pair<double, int>> wall;  // kind → (s, n)
  const auto start = std::chrono::steady_clock::now();
  // About 3 s of traffic: several windows.
  for (int round = 0;
       std::chrono::steady_clock::now() - start < std::chrono::seconds(3);
       ++round) {
    for (const std::string& kind : DemoKinds()) {
      const std::string payload = TextPayload(round, 16384);
      const auto t0 = std::chrono::steady_clock::now();
      auto response = client.Post("/v1/handle/" + kind, payload,
                                  "application/octet-stream");
      const double s = phaseloop::timing::SecondsSince(t0);
      ASSERT_TRUE(response) << httplib::to_string(response.error());
      ASSERT_EQ(response->status, 200) << kind << ": " << response->body;
      ASSERT_EQ(response->body, (*library)->Handle(kind, payload).body)
          << kind << " round " << round;
      wall[kind].first += s;
      ++wall[kind].second;
      ++sent;
    }
  }
  for (const auto& [kind, figures] : wall) {
    std::cout << "client round trip " << kind
              << " 16 KiB: " << 1e6 * figures.first / figures.second
              << " us mean over " << figures.second << "\n";
  }
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_TRUE(absl::StrContains(metrics->body,
                                "phaseloop_service_requests_total{code="
                                "\"200\",kind=\"crc32\"}"))
      << metrics->body;
  client.stop();
  ASSERT_EQ(serve.Terminate(), 0) << serve.Stderr();
  const std::string said = serve.Stderr();
  std::cout << said;
  EXPECT_FALSE(fs::exists(dir + "/address")) << "removed on a clean stop";

  // --- the windows, read back ---
  kafka::TopicReadOptions read;
  read.bootstrap_servers = bootstrap;
  read.topic = std::string(kafka::kSliTopic);
  read.client_id = "canary-service-test";
  int64_t counted = 0, errors = 0, windows = 0;
  double seconds = 0;
  auto read_all = kafka::ReadTopicToEnd(read, [&](const auto& message) {
    v1::SliWindow window;
    ASSERT_TRUE(window.ParseFromString(message.value));
    EXPECT_EQ(window.service(), "demo");
    EXPECT_EQ(window.group(), "canary");
    EXPECT_EQ(window.deployment_id(), "d-e2e");
    EXPECT_EQ(window.policy_version(), "default");
    EXPECT_EQ(window.window_length_ms(), 1000);
    counted += window.count();
    errors += window.error_count();
    seconds += window.sum_seconds();
    ++windows;
  });
  ASSERT_TRUE(read_all.ok()) << read_all.status();
  EXPECT_EQ(counted, sent) << windows << " windows";
  EXPECT_EQ(errors, 0);
  EXPECT_GE(windows, 2);
  std::cout << sent << " requests in " << windows
            << " SLI windows; server-side mean latency "
            << 1e6 * seconds / std::max<int64_t>(counted, 1) << " us\n";
  EXPECT_TRUE(
      absl::StrContains(said, absl::StrCat(windows, " delivered to Kafka")))
      << said;
  EXPECT_EQ(kafka.Terminate(), 0) << kafka.Stderr();
}

}  // namespace
}  // namespace phaseloop::canary
