#ifndef PHASELOOP_TOOLS_LOOP_LOOP_REPORT_H_
#define PHASELOOP_TOOLS_LOOP_LOOP_REPORT_H_

// What a loop did, for people and for machines: a self-contained HTML page
// (common/report: inline SVG charts, no network at view time, checked in a
// real browser by tools/check_report.sh) and JSON, from the loop's state and
// its canaries' states. Pure: the same states give the same bytes.

#include <map>
#include <string>

#include "phaseloop/v1/canary.pb.h"
#include "phaseloop/v1/loop.pb.h"

namespace phaseloop::loop {

// canaries: each iteration's rollout by canary id (missing ones are
// reported as such).
std::string LoopReportHtml(
    const v1::LoopRun& run,
    const std::map<std::string, v1::CanaryRun>& canaries);
std::string LoopReportJson(
    const v1::LoopRun& run,
    const std::map<std::string, v1::CanaryRun>& canaries);

}  // namespace phaseloop::loop

#endif  // PHASELOOP_TOOLS_LOOP_LOOP_REPORT_H_
