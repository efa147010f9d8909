#include "offline_rl/learner/openmp_env.h"

#include <unistd.h>

#include <cstdlib>

namespace phaseloop::offline_rl {

void EnsurePassiveOpenMpWait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  if (setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // exec failed: carry on with the spinning default.
}

}  // namespace phaseloop::offline_rl
