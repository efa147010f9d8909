#include "reward_engine/sli/sli_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/kafka/consumer.h"
#include "common/kafka/embedded_cluster.h"
#include "common/testing/test_util.h"

namespace phaseloop::sli {
namespace {

std::string Line(int window, const std::string& latencies) {
  return R"({"service": "checkout", "group": "canary", "instance": "pod-1", )"
         R"("deployment_id": "dep-7", "policy_version": "pv-3", )"
         R"("window_start_ms": )" +
         std::to_string(int64_t{1700000000000} + window * 10000) +
         R"(, "window_length_ms": 10000, "latencies_ms": )" + latencies + "}\n";
}

class FakeSink : public SliSink {
 public:
  explicit FakeSink(std::vector<v1::SliWindow>* out, int fail_at)
      : out_(out), fail_at_(fail_at) {}
  absl::Status Publish(const v1::SliWindow& window) override {
    if (static_cast<int>(out_->size()) == fail_at_) {
      return absl::UnavailableError("all brokers down");
    }
    out_->push_back(window);
    return absl::OkStatus();
  }

 private:
  std::vector<v1::SliWindow>* out_;
  int fail_at_;
};

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result RunSend(const SliSendFlags& flags, const std::string& input,
               const SliSinkFactory& factory = MakeKafkaSliSink) {
  std::istringstream in(input);
  std::ostringstream out, err;
  const int code = RunSliSend(flags, in, out, err, factory);
  return {code, out.str(), err.str()};
}

TEST(SliCommandTest, DryRunPrintsValidatedWindows) {
  SliSendFlags flags;
  flags.in = "-";
  flags.dry_run = true;
  const Result r = RunSend(flags, Line(0, "[1, 2, 3]") + Line(1, "[4]"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2);
  EXPECT_NE(r.out.find("\"sketch\":{"), std::string::npos);
  EXPECT_NE(r.err.find("2 valid SLI windows"), std::string::npos);
}

TEST(SliCommandTest, BadInputSendsNothingAndExits2) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/windows.jsonl";
  std::ofstream(path) << Line(0, "[1]") << Line(1, "[1, \"x\"]") << "{\n";
  SliSendFlags flags;
  flags.in = path;
  flags.kafka = "localhost:9092";
  std::vector<v1::SliWindow> sent;
  auto factory =
      [&](const std::string&,
          const std::string&) -> absl::StatusOr<std::unique_ptr<SliSink>> {
    return std::make_unique<FakeSink>(&sent, -1);
  };
  Result r = RunSend(flags, "", factory);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(sent.empty());
  EXPECT_NE(r.err.find(path + ": line 2: latencies_ms[1]: expected a number"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(path + ": line 3: not JSON"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("nothing was sent"), std::string::npos);

  flags.in = dir + "/missing.jsonl";
  r = RunSend(flags, "", factory);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("cannot read --in"), std::string::npos);

  flags.in = dir;  // opened fine and read as no lines: "0 valid windows"
  r = RunSend(flags, "", factory);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;

  flags.in = "-";
  flags.kafka.clear();
  r = RunSend(flags, Line(0, "[1]"), factory);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--kafka BOOTSTRAP is required"), std::string::npos);
}

TEST(SliCommandTest, SendsThroughTheSinkAndReportsFailures) {
  SliSendFlags flags;
  flags.in = "-";
  flags.kafka = "localhost:9092";
  std::vector<v1::SliWindow> sent;
  int fail_at = -1;
  auto factory = [&](const std::string& bootstrap, const std::string& topic)
      -> absl::StatusOr<std::unique_ptr<SliSink>> {
    EXPECT_EQ(bootstrap, "localhost:9092");
    EXPECT_EQ(topic, "phaseloop.sli");
    return std::make_unique<FakeSink>(&sent, fail_at);
  };
  const std::string input = Line(0, "[1]") + Line(1, "[2]") + Line(2, "[3]");
  Result r = RunSend(flags, input, factory);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[2].window_start_ms(), 1700000020000);

  sent.clear();
  fail_at = 1;
  r = RunSend(flags, input, factory);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("sent 1 of 3 windows"), std::string::npos) << r.err;
}

TEST(SliCommandTest, SendsWindowsToKafkaKeyedByServiceAndGroup) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->CreateTopic("phaseloop.sli", 1, 1).ok());
  SliSendFlags flags;
  flags.in = "-";
  flags.kafka = (*cluster)->bootstrap_servers();
  Result r = RunSend(flags, Line(0, "[1, 2]") + Line(1, "[3]"));
  ASSERT_EQ(r.code, 0) << r.err;

  kafka::ConsumerOptions options;
  options.bootstrap_servers = flags.kafka;
  options.group_id = "sli-command-test";
  auto consumer = kafka::Consumer::Create(options);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_TRUE((*consumer)->AssignWithOffsets({{{"phaseloop.sli", 0}, 0}}).ok());
  std::vector<v1::SliWindow> received;
  for (int i = 0; i < 100 && received.size() < 2; ++i) {
    auto m = (*consumer)->Poll(std::chrono::milliseconds(100));
    ASSERT_TRUE(m.ok()) << m.status();
    if (!m->has_value()) continue;
    v1::SliWindow window;
    ASSERT_TRUE(window.ParseFromString((*m)->value));
    EXPECT_EQ((*m)->key, window.service());  // every group in one partition
    received.push_back(window);
  }
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[0].count() + received[1].count(), 3);
}

// `phaseloop sli send --in FILE` with no --kafka sends to $PHASELOOP_KAFKA,
// as every Kafka client command does (issue #15).
TEST(SliCommandTest, SendsToPhaseloopKafkaWithoutTheFlag) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->CreateTopic("phaseloop.sli", 1, 1).ok());
  const std::string file = testing::MakeTempDir() + "/windows.jsonl";
  std::ofstream(file) << Line(0, "[1, 2]") << Line(1, "[3]");
  ASSERT_EQ(
      setenv("PHASELOOP_KAFKA", (*cluster)->bootstrap_servers().c_str(), 1), 0);
  CLI::App app{"test"};
  int exit_code = -1;
  AddSliCommand(app, exit_code);
  std::vector<const char*> argv = {"phaseloop", "sli", "send", "--in",
                                   file.c_str()};
  app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  unsetenv("PHASELOOP_KAFKA");
  ASSERT_EQ(exit_code, 0);

  kafka::ConsumerOptions options;
  options.bootstrap_servers = (*cluster)->bootstrap_servers();
  options.group_id = "sli-command-env-test";
  auto consumer = kafka::Consumer::Create(options);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_TRUE((*consumer)->AssignWithOffsets({{{"phaseloop.sli", 0}, 0}}).ok());
  int received = 0;
  for (int i = 0; i < 100 && received < 2; ++i) {
    auto m = (*consumer)->Poll(std::chrono::milliseconds(100));
    ASSERT_TRUE(m.ok()) << m.status();
    if (m->has_value()) ++received;
  }
  EXPECT_EQ(received, 2);
}

TEST(SliCommandTest, HelpAndFlagErrorsThroughCli11) {
  CLI::App app{"test"};
  int exit_code = -1;
  AddSliCommand(app, exit_code);
  std::vector<std::string> args = {"sli", "send", "--help"};
  std::vector<const char*> argv = {"phaseloop"};
  for (const auto& a : args) argv.push_back(a.c_str());
  EXPECT_THROW(
      app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data())),
      CLI::CallForHelp);
  CLI::App app2{"test"};
  AddSliCommand(app2, exit_code);
  std::vector<const char*> missing = {"phaseloop", "sli", "send"};
  EXPECT_THROW(app2.parse(static_cast<int>(missing.size()),
                          const_cast<char**>(missing.data())),
               CLI::RequiredError);
}

}  // namespace
}  // namespace phaseloop::sli
