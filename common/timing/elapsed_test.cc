#include "common/timing/elapsed.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace phaseloop::timing {
namespace {

// Lower bounds only: a loaded machine may take longer, never less.
TEST(SecondsSinceTest, CountsSecondsOfTheSteadyClock) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_GE(SecondsSince(start), 0.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GE(SecondsSince(start), 0.020);
  EXPECT_GE(SecondsSince(start - std::chrono::seconds(3)), 3.0);
}

}  // namespace
}  // namespace phaseloop::timing
