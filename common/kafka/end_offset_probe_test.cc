#include "common/kafka/end_offset_probe.h"

#include <chrono>
#include <memory>
#include <thread>

#include "common/kafka/embedded_cluster.h"
#include "gtest/gtest.h"

namespace phaseloop::kafka {
namespace {

// The probe learns a partition's end, and stops once its broker is gone
// (librdkafka 2.0's watermark query may never return then: the probe
// leaves its thread rather than hang the process; `rewards run` ignored
// SIGTERM after its broker was killed).
TEST(EndOffsetProbeTest, LearnsTheEndAndStopsWithItsBrokerGone) {
  absl::StatusOr<std::unique_ptr<EmbeddedCluster>> cluster =
      EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->CreateTopic("ends", 1, 1).ok());
  absl::StatusOr<std::unique_ptr<EndOffsetProbe>> probe =
      EndOffsetProbe::Start((*cluster)->bootstrap_servers(), "ends",
                            std::chrono::milliseconds(100));
  ASSERT_TRUE(probe.ok()) << probe.status();
  (*probe)->Watch({0});
  for (int i = 0; i < 600 && (*probe)->EndOffsets().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ((*probe)->EndOffsets().count(0), 1u);
  EXPECT_EQ((*probe)->EndOffsets().at(0), 0);
  cluster->reset();  // the broker is gone
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  probe->reset();  // returns, whether or not its query ever does
}

}  // namespace
}  // namespace phaseloop::kafka
