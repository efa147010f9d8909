// The --exit-when-idle-ms rule, on a clock the test moves.
#include "common/kafka/idle_exit.h"

#include <gtest/gtest.h>

namespace phaseloop::kafka {
namespace {

using std::chrono::milliseconds;
using Clock = IdleExit::Clock;

TEST(IdleExitTest, IdleCountsFromTheLastInputOnlyWhileSettled) {
  const Clock::time_point t0{};
  IdleExit idle(milliseconds(500), t0, milliseconds(2000));
  // Joining the group, or a rebalance held up by a member that died: not
  // settled for any time is not idling.
  EXPECT_FALSE(idle.Due(false, t0 + milliseconds(1500)));
  EXPECT_FALSE(idle.Due(false, t0 + std::chrono::minutes(5)));
  EXPECT_FALSE(idle.Due(true, t0 + std::chrono::minutes(5)));
  idle.Input(t0 + std::chrono::minutes(5));
  EXPECT_FALSE(
      idle.Due(true, t0 + std::chrono::minutes(5) + milliseconds(400)));
  EXPECT_TRUE(idle.Due(true, t0 + std::chrono::minutes(5) + milliseconds(500)));
}

// Never settled for the whole grace since the start: check the broker; a
// consumer whose broker answered (a slow join) or whose group settled once
// is never asked again.
TEST(IdleExitTest, NeverSettledForTheGraceAsksWhetherABrokerAnswered) {
  const Clock::time_point t0{};
  IdleExit idle(milliseconds(500), t0, milliseconds(2000));
  EXPECT_FALSE(idle.ShouldCheckBroker(false, t0 + milliseconds(1999)));
  EXPECT_TRUE(idle.ShouldCheckBroker(false, t0 + milliseconds(2000)));
  EXPECT_EQ(idle.waited(t0 + milliseconds(2000)), milliseconds(2000));
  idle.ClusterAnswered();
  EXPECT_FALSE(idle.ShouldCheckBroker(false, t0 + milliseconds(9000)));

  IdleExit held(milliseconds(500), t0, milliseconds(2000));
  EXPECT_FALSE(held.ShouldCheckBroker(true, t0 + milliseconds(100)));
  EXPECT_FALSE(held.ShouldCheckBroker(false, t0 + milliseconds(9000)));
}

// The grace is never shorter than the idle time asked for, and 0 means no
// idle exit at all.
TEST(IdleExitTest, TheGraceIsAtLeastTheIdleTimeAndZeroIsOff) {
  const Clock::time_point t0{};
  IdleExit long_idle(milliseconds(5000), t0, milliseconds(2000));
  EXPECT_FALSE(long_idle.ShouldCheckBroker(false, t0 + milliseconds(4999)));
  EXPECT_TRUE(long_idle.ShouldCheckBroker(false, t0 + milliseconds(5000)));
  IdleExit off(milliseconds(0), t0, milliseconds(2000));
  EXPECT_FALSE(off.ShouldCheckBroker(false, t0 + std::chrono::hours(1)));
  EXPECT_FALSE(off.Due(true, t0 + std::chrono::hours(2)));
}

TEST(IdleExitTest, TheErrorNamesTheAddressAndTheWait) {
  const absl::Status error =
      NoBrokerAnswered("the ingest", "127.0.0.1:1", milliseconds(30500),
                       absl::UnavailableError("Local: Broker transport"));
  EXPECT_TRUE(absl::IsUnavailable(error));
  EXPECT_EQ(error.message(),
            "no Kafka broker at 127.0.0.1:1 answered the ingest in 30 s "
            "(Local: Broker transport); is the cluster running, and is "
            "--kafka its address?");
}

}  // namespace
}  // namespace phaseloop::kafka
