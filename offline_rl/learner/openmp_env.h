#ifndef PHASELOOP_OFFLINE_RL_LEARNER_OPENMP_ENV_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_OPENMP_ENV_H_

// libtorch's OpenMP threads spin while they wait for work by default. On a
// machine whose cores are shared with other work (CI, builds, other
// learners) that collapses throughput: measured on 2 loaded cores, the
// step-wise CQL update ran at ~9k transitions/s with 2 threads spinning and
// ~40k with OMP_WAIT_POLICY=PASSIVE. libgomp reads the variable once, when
// it is loaded, so it must be in the environment before the process starts.

namespace phaseloop::offline_rl {

// Call first thing in main: when OMP_WAIT_POLICY is unset, sets it to
// PASSIVE and re-executes /proc/self/exe with the same argv (once; returns
// if that fails). When it is set (by the user, or by `phaseloop train`,
// which sets it before exec'ing phaseloop-train), does nothing.
void EnsurePassiveOpenMpWait(char** argv);

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_OPENMP_ENV_H_
