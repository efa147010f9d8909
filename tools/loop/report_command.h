#ifndef PHASELOOP_TOOLS_LOOP_REPORT_COMMAND_H_
#define PHASELOOP_TOOLS_LOOP_REPORT_COMMAND_H_

// `phaseloop report`: a loop's report (loop_report.h) as HTML and JSON.

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::loop {

struct ReportFlags {
  std::string loop_id;  // "": the newest loop
  std::string state_dir;
  std::string out;       // HTML; "": STATE/loops/<id>/report.html
  std::string json_out;  // JSON; "": beside the HTML
  bool json = false;     // print the JSON instead of the paths
};

int RunReport(const ReportFlags& flags, std::ostream& out, std::ostream& err);

void AddReportCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::loop

#endif  // PHASELOOP_TOOLS_LOOP_REPORT_COMMAND_H_
