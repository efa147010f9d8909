#ifndef PHASELOOP_OFFLINE_RL_LEARNER_GATE_METRICS_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_GATE_METRICS_H_

// The names of the publish gate's metric in `phaseloop train --json`
// ("gate": {"metric": ...}): written by the learner's train pipeline and
// read by the loop's train stage, so one spelling serves both.
namespace phaseloop::offline_rl {

// A speed gate that timed each held-out workload: the score is the
// geomean speedup against -O3.
inline constexpr char kGateMetricSpeedGeomean[] = "speed_gate_geomean_speedup";
// An untimed speed gate (--gate-untimed): outputs checked, nothing timed;
// its score is 1 by construction, not a measurement.
inline constexpr char kGateMetricSpeedOutputsOnly[] = "speed_gate_outputs_only";

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_GATE_METRICS_H_
