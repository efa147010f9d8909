#include "common/command/exit_code.h"

#include "gtest/gtest.h"

namespace phaseloop::command {
namespace {

TEST(ExitCodeTest, InputErrorsAreTwoOthersOne) {
  EXPECT_EQ(ExitCodeOf(absl::OkStatus()), 0);
  EXPECT_EQ(ExitCodeOf(absl::InvalidArgumentError("x")), 2);
  EXPECT_EQ(ExitCodeOf(absl::NotFoundError("x")), 2);
  EXPECT_EQ(ExitCodeOf(absl::AlreadyExistsError("x")), 2);
  EXPECT_EQ(ExitCodeOf(absl::FailedPreconditionError("x")), 2);
  EXPECT_EQ(ExitCodeOf(absl::DataLossError("x")), 2);
  EXPECT_EQ(ExitCodeOf(absl::UnimplementedError("x")), 2);
  EXPECT_EQ(ExitCodeOf(absl::InternalError("x")), 1);
  EXPECT_EQ(ExitCodeOf(absl::UnavailableError("x")), 1);
  EXPECT_EQ(ExitCodeOf(absl::DeadlineExceededError("x")), 1);
}

}  // namespace
}  // namespace phaseloop::command
