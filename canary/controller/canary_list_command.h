#ifndef PHASELOOP_CANARY_CONTROLLER_CANARY_LIST_COMMAND_H_
#define PHASELOOP_CANARY_CONTROLLER_CANARY_LIST_COMMAND_H_

// `phaseloop canary list` (every canary run under the state directory, a
// table or --json) and `phaseloop canary report --canary-id ID` (writes the
// run's HTML page and JSON, prints the page's path).

#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace phaseloop::canary {

struct CanaryListFlags {
  std::string state_dir;  // "" = kafka::DefaultStateDir()
  bool json = false;
};

struct CanaryReportFlags {
  std::string state_dir;
  std::string canary_id;
  std::string out;  // "" = beside the run's state
};

int RunCanaryList(const CanaryListFlags& flags, std::ostream& out,
                  std::ostream& err);
int RunCanaryReport(const CanaryReportFlags& flags, std::ostream& out,
                    std::ostream& err);

// Adds `list` and `report` to the `canary` command group.
void AddCanaryListCommands(CLI::App& canary, int& exit_code);

// The state directory a canary command uses: `flag`, else the default
// (kafka::DefaultStateDir()); "" when neither is set.
std::string CanaryStateDir(const std::string& flag);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CONTROLLER_CANARY_LIST_COMMAND_H_
