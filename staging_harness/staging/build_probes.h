#ifndef PHASELOOP_STAGING_HARNESS_STAGING_BUILD_PROBES_H_
#define PHASELOOP_STAGING_HARNESS_STAGING_BUILD_PROBES_H_

// A build system's questions to the compiler, which go through the wrapper
// like the program's own compiles but are not the program: autoconf's
// conftest.c (compiled with -c and the user's CFLAGS, so at the level
// staging asks for), CMake's try_compile projects (CMakeFiles/CMakeTmp/,
// CMakeFiles/CMakeScratch/) and its compiler checks (CMakeCCompilerABI.c,
// compiled with -v; CMakeCCompilerId.c), meson's sanity checks
// (meson-private/), zlib's configure (ztest<pid>.c). Staging leaves them out
// of what it counts of the program: the units the policy reached
// (WrapperNotReached) and the units whose executed IR is not counted
// (UncountedUnits).

#include <string>

#include "proto/phaseloop/v1/decision.pb.h"

namespace phaseloop::staging {

// Whether `source`, a decision's source path as the command gave it, is
// such a probe.
bool IsBuildSystemProbe(const std::string& source);

// Whether `decision` is a probe's, or a question to the compiler with no
// input at all (`cc --version`, `cc -v`: configure asks several).
bool IsProbeOrQuery(const v1::Decision& decision);

}  // namespace phaseloop::staging

#endif  // PHASELOOP_STAGING_HARNESS_STAGING_BUILD_PROBES_H_
