// Compile decisions through Kafka as a user's CI job ships them (the real
// `phaseloop` binary against the embedded cluster on loopback):
// `decisions ship --kafka` produces every spooled record to
// phaseloop.decisions and marks the files shipped; `buffer ingest` stores
// them once, however often they were shipped; with Kafka unreachable the
// ship fails, names the files and the fix, and marks nothing.
#include <stdlib.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/test_util.h"
#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"
#include "gtest/gtest.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop {
namespace {

constexpr char kPhaseloop[] = "tools/phaseloop";

// A spool file of `count` decisions of build `build_id`; returns their ids.
std::vector<std::string> SpoolDecisions(const std::string& spool,
                                        const std::string& build_id,
                                        int count) {
  v1::DecisionBatch batch;
  std::vector<std::string> ids;
  for (int i = 0; i < count; ++i) {
    v1::Decision* d = batch.add_decisions();
    d->set_decision_id(cc_wrapper::NewDecisionId());
    d->set_build_id(build_id);
    d->set_outcome(v1::OPTIMIZED);
    d->set_module_hash(std::string(31, 'c') + static_cast<char>('0' + i % 10));
    ids.push_back(d->decision_id());
  }
  std::string error;
  EXPECT_TRUE(
      cc_wrapper::WriteSpoolFile(spool, batch.SerializeAsString(), &error))
      << error;
  return ids;
}

size_t Unshipped(const std::string& spool) {
  auto contents = cc_wrapper::ReadSpool(spool);
  EXPECT_TRUE(contents.ok()) << contents.status();
  return contents.ok() ? contents->files.size() : 0;
}

size_t StoredDecisions(const std::string& buffer, const std::string& build) {
  auto store = replay_buffer::OpenReplayStore(buffer);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return 0;
  replay_buffer::DecisionFilter filter;
  filter.build_id = build;
  auto decisions = (*store)->ReadDecisions(filter);
  EXPECT_TRUE(decisions.ok()) << decisions.status();
  return decisions.ok() ? decisions->size() : 0;
}

TEST(DecisionsKafkaTest, ShippedDecisionsAreIngestedOnce) {
  // The ingest's dead-letter spool and lost-records log stay in the test.
  const std::string state = testing::MakeTempDir() + "/state";
  setenv("PHASELOOP_STATE_DIR", state.c_str(), 1);
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  ASSERT_TRUE((*cluster)->CreateTopic("phaseloop.decisions", 4, 1).ok());
  ASSERT_TRUE((*cluster)->CreateTopic("phaseloop.search.episodes", 1, 1).ok());
  const std::string dir = testing::MakeTempDir();
  const std::string spool = dir + "/spool", buffer = dir + "/buffer.db";
  SpoolDecisions(spool, "ci-1", 7);
  SpoolDecisions(spool, "ci-1", 5);

  std::string output;
  ASSERT_EQ(testing::RunCommand({kPhaseloop, "decisions", "ship", "--spool",
                                 spool, "--kafka", bootstrap},
                                &output),
            0)
      << output;
  EXPECT_TRUE(absl::StrContains(output,
                                "shipped 12 decisions from 2 spool "
                                "files"))
      << output;
  EXPECT_EQ(Unshipped(spool), 0u);

  // The same files shipped again (as after a crash between delivery and
  // the rename): the buffer still holds each decision once. $PHASELOOP_KAFKA
  // stands for --kafka.
  std::string again = dir + "/again";
  SpoolDecisions(again, "ci-2", 3);
  setenv("PHASELOOP_KAFKA", bootstrap.c_str(), 1);
  ASSERT_EQ(testing::RunCommand(
                {kPhaseloop, "decisions", "ship", "--spool", again}, &output),
            0)
      << output;
  unsetenv("PHASELOOP_KAFKA");
  auto shipped = cc_wrapper::ReadSpool(spool, /*with_shipped=*/true);
  ASSERT_TRUE(shipped.ok());
  for (const cc_wrapper::SpoolFile& file : shipped->files) {
    std::string error;
    ASSERT_TRUE(cc_wrapper::WriteSpoolFile(
        again, file.batch.SerializeAsString(), &error))
        << error;
  }
  ASSERT_EQ(testing::RunCommand({kPhaseloop, "decisions", "ship", "--spool",
                                 again, "--kafka", bootstrap},
                                &output),
            0)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "shipped 12 decisions")) << output;

  ASSERT_EQ(
      testing::RunCommand({kPhaseloop, "buffer", "ingest", "--buffer", buffer,
                           "--kafka", bootstrap, "--exit-when-idle-ms", "3000"},
                          &output),
      0)
      << output;
  EXPECT_TRUE(absl::StrContains(output,
                                "ingested 0 episodes and 27 "
                                "decisions"))
      << output;
  EXPECT_EQ(StoredDecisions(buffer, "ci-1"), 12u);
  EXPECT_EQ(StoredDecisions(buffer, "ci-2"), 3u);
}

TEST(DecisionsKafkaTest, UnreachableKafkaMarksNothingAndNamesTheFix) {
  const std::string spool = testing::MakeTempDir() + "/spool";
  SpoolDecisions(spool, "ci-3", 2);
  SpoolDecisions(spool, "ci-3", 2);
  std::string output;
  EXPECT_EQ(testing::RunCommand({kPhaseloop, "decisions", "ship", "--spool",
                                 spool, "--kafka", "127.0.0.1:1"},
                                &output),
            1)
      << output;
  EXPECT_TRUE(absl::StrContains(output,
                                "2 of 2 spool files were not "
                                "delivered"))
      << output;
  EXPECT_TRUE(absl::StrContains(output,
                                "Check that Kafka answers at "
                                "127.0.0.1:1"))
      << output;
  EXPECT_TRUE(absl::StrContains(output, spool)) << output;
  EXPECT_EQ(Unshipped(spool), 2u);
}

TEST(DecisionsKafkaTest, BufferAndKafkaTogetherAreRefused) {
  const std::string dir = testing::MakeTempDir();
  SpoolDecisions(dir + "/spool", "ci-4", 1);
  std::string output;
  EXPECT_EQ(testing::RunCommand(
                {kPhaseloop, "decisions", "ship", "--spool", dir + "/spool",
                 "--kafka", "127.0.0.1:1", "--buffer", dir + "/buffer.db"},
                &output),
            2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "--buffer and --kafka both given"))
      << output;
  EXPECT_EQ(Unshipped(dir + "/spool"), 1u);
}

}  // namespace
}  // namespace phaseloop
