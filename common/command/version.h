#ifndef PHASELOOP_COMMON_COMMAND_VERSION_H_
#define PHASELOOP_COMMON_COMMAND_VERSION_H_

// phaseloop's version, in one place: `phaseloop --version` prints it (with
// the LLVM version the binary links).
namespace phaseloop::command {

inline constexpr char kPhaseloopVersion[] = "0.1.0";

}  // namespace phaseloop::command

#endif  // PHASELOOP_COMMON_COMMAND_VERSION_H_
