#include "common/command/exit_code.h"

namespace phaseloop::command {

int ExitCodeOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kUnimplemented:
      return kExitBadInput;
    default:
      return kExitInternal;
  }
}

}  // namespace phaseloop::command
