#include "canary/controller/canary_list_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "canary/controller/canary_report.h"
#include "canary/controller/canary_state_store.h"
#include "common/command/exit_code.h"
#include "common/command/subcommand.h"
#include "common/files/atomic_file.h"
#include "common/files/file_lock.h"
#include "common/files/report_output.h"
#include "common/kafka/state_dir.h"
#include "nlohmann/json.hpp"

namespace phaseloop::canary {
namespace {

constexpr char kNoStateDir[] =
    "no state directory: pass --state-dir DIR or set PHASELOOP_STATE_DIR "
    "(canary runs keep their state under DIR/canaries/)";

}  // namespace

std::string CanaryStateDir(const std::string& flag) {
  return flag.empty() ? kafka::DefaultStateDir() : flag;
}

int RunCanaryList(const CanaryListFlags& flags, std::ostream& out,
                  std::ostream& err) {
  const std::string dir = CanaryStateDir(flags.state_dir);
  if (dir.empty()) {
    err << "phaseloop canary list: " << kNoStateDir << "\n";
    return command::kExitBadInput;
  }
  // A mistyped state directory read as one with no runs yet.
  if (std::error_code error; !std::filesystem::is_directory(dir, error)) {
    err << "phaseloop canary list: state directory " << dir
        << (std::filesystem::exists(dir, error) ? " is not a directory"
                                                : " does not exist")
        << ": give the --state-dir (or PHASELOOP_STATE_DIR) your runs used\n";
    return command::kExitBadInput;
  }
  // The readable runs are listed; each unreadable one is named (and makes
  // the exit status that of its error).
  std::vector<absl::Status> unreadable;
  auto runs = CanaryStateStore(dir).List(&unreadable);
  if (!runs.ok()) {
    err << "phaseloop canary list: " << runs.status().message() << "\n";
    return command::ExitCodeOf(runs.status());
  }
  // An unfinished run whose controller lock nobody holds was stopped (or
  // its controller died): its saved phase is where a rerun resumes, not
  // what is happening.
  const CanaryStateStore store(dir);
  std::set<std::string> stopped;
  for (const auto& run : *runs) {
    if (!IsFinalPhase(run.phase()) &&
        !files::FileLock::IsHeld(store.ControllerLockPath(run.canary_id()))) {
      stopped.insert(run.canary_id());
    }
  }
  if (flags.json) {
    std::vector<std::string> items;
    for (const auto& run : *runs) {
      nlohmann::json item = nlohmann::json::parse(CanaryRunToJson(run));
      if (!IsFinalPhase(run.phase())) {
        item["stopped"] = stopped.count(run.canary_id()) > 0;
      }
      items.push_back(
          item.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    out << "[" << absl::StrJoin(items, ",\n") << "]\n";
  } else {
    out << CanaryRunsTable(*runs, stopped);
  }
  for (const absl::Status& status : unreadable) {
    err << "phaseloop canary list: not listed: " << status.message() << "\n";
  }
  return unreadable.empty() ? command::kExitOk
                            : command::ExitCodeOf(unreadable.front());
}

int RunCanaryReport(const CanaryReportFlags& flags, std::ostream& out,
                    std::ostream& err) {
  const std::string dir = CanaryStateDir(flags.state_dir);
  if (dir.empty()) {
    err << "phaseloop canary report: " << kNoStateDir << "\n";
    return command::kExitBadInput;
  }
  CanaryStateStore store(dir);
  auto run = store.Load(flags.canary_id);
  if (!run.ok()) {
    err << "phaseloop canary report: " << run.status().message()
        << (absl::IsNotFound(run.status())
                ? "; `phaseloop canary list` shows the runs there"
                : "")
        << "\n";
    return absl::IsNotFound(run.status()) ? command::kExitBadInput
                                          : command::ExitCodeOf(run.status());
  }
  if (!flags.out.empty()) {
    if (absl::Status s = files::CheckReportOutput("--out", flags.out, dir);
        !s.ok()) {
      err << "phaseloop canary report: " << s.message() << "\n";
      return command::kExitBadInput;
    }
    if (auto s = files::WriteFileAtomically(flags.out, CanaryReportHtml(*run));
        !s.ok()) {
      err << "error: cannot write --out " << flags.out << ": " << s.message()
          << "\n";
      return command::kExitBadInput;
    }
    out << flags.out << "\n";
    return command::kExitOk;
  }
  auto path = WriteCanaryReport(store, *run);
  if (!path.ok()) {
    err << "phaseloop canary report: " << path.status().message() << "\n";
    return command::ExitCodeOf(path.status());
  }
  out << *path << "\n";
  return command::kExitOk;
}

void AddCanaryListCommands(CLI::App& canary, int& exit_code) {
  auto list = command::AddSubcommand<CanaryListFlags>(
      canary, "list",
      "List canary runs (newest first): service, candidate, phase, steps "
      "judged, final reward",
      exit_code, [](const CanaryListFlags& flags) {
        return RunCanaryList(flags, std::cout, std::cerr);
      });
  command::AddStateDirOption(*list.app, list.flags->state_dir);
  list.app->add_flag("--json", list.flags->json,
                     "print every run's full state as JSON");
  auto report = command::AddSubcommand<CanaryReportFlags>(
      canary, "report",
      "Write a canary run's report (self-contained HTML, and JSON beside the "
      "state) and print its path",
      exit_code, [](const CanaryReportFlags& flags) {
        return RunCanaryReport(flags, std::cout, std::cerr);
      });
  report.app
      ->add_option("--canary-id", report.flags->canary_id,
                   "the run (`phaseloop canary list` shows them)")
      ->required();
  command::AddStateDirOption(*report.app, report.flags->state_dir);
  report.app->add_option("--out", report.flags->out,
                         "write the HTML here instead of beside the state");
}

}  // namespace phaseloop::canary
