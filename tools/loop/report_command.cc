#include "tools/loop/report_command.h"

#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "canary/controller/canary_state_store.h"
#include "common/command/exit_code.h"
#include "common/command/subcommand.h"
#include "common/files/atomic_file.h"
#include "common/files/report_output.h"
#include "common/kafka/state_dir.h"
#include "tools/loop/loop_report.h"
#include "tools/loop/loop_state.h"

namespace phaseloop::loop {
namespace {

constexpr char kName[] = "phaseloop report: ";

}  // namespace

int RunReport(const ReportFlags& flags, std::ostream& out, std::ostream& err) {
  const std::string state_dir =
      flags.state_dir.empty() ? kafka::DefaultStateDir() : flags.state_dir;
  if (state_dir.empty()) {
    err << kName
        << "no state directory: pass --state-dir DIR or set "
           "PHASELOOP_STATE_DIR\n";
    return command::kExitBadInput;
  }
  const LoopStateStore store(state_dir);
  v1::LoopRun run;
  if (flags.loop_id.empty()) {
    auto runs = store.List();
    if (!runs.ok()) {
      err << kName << runs.status().message() << "\n";
      return command::ExitCodeOf(runs.status());
    }
    if (runs->empty()) {
      err << kName << "no loop under " << state_dir
          << "/loops: run `phaseloop loop` first (or give --state-dir)\n";
      return command::kExitBadInput;
    }
    run = runs->front();
  } else {
    auto loaded = store.Load(flags.loop_id);
    if (!loaded.ok()) {
      err << kName << loaded.status().message() << "\n";
      return absl::IsNotFound(loaded.status())
                 ? command::kExitBadInput
                 : command::ExitCodeOf(loaded.status());
    }
    run = *std::move(loaded);
  }
  std::map<std::string, v1::CanaryRun> canaries;
  const canary::CanaryStateStore canary_store(state_dir);
  for (const v1::LoopIteration& it : run.iterations()) {
    if (it.canary_id().empty()) continue;
    auto canary = canary_store.Load(it.canary_id());
    if (canary.ok()) {
      canaries[it.canary_id()] = *std::move(canary);
    } else if (!absl::IsNotFound(canary.status())) {
      err << kName << canary.status().message() << "\n";
      return command::ExitCodeOf(canary.status());
    }
  }
  const std::string html_path =
      flags.out.empty() ? store.LoopDir(run.loop_id()) + "/report.html"
                        : flags.out;
  std::string json_path = flags.json_out;
  if (json_path.empty()) {
    json_path = absl::EndsWith(html_path, ".html")
                    ? html_path.substr(0, html_path.size() - 5) + ".json"
                    : html_path + ".json";
  }
  if (absl::Status s = files::CheckReportOutputs(
          {{"--out", html_path}, {"--json-out", json_path}}, state_dir);
      !s.ok()) {
    err << kName << s.message() << "\n";
    return command::kExitBadInput;
  }
  const std::string json_text = LoopReportJson(run, canaries);
  for (const auto& [path, text] :
       {std::pair<std::string, std::string>{html_path,
                                            LoopReportHtml(run, canaries)},
        {json_path, json_text}}) {
    if (auto s = files::WriteFileAtomically(path, text); !s.ok()) {
      err << kName << "cannot write " << path << ": " << s.message() << "\n";
      return command::kExitBadInput;
    }
  }
  if (flags.json) {
    out << json_text;
  } else {
    out << "loop " << run.loop_id() << " (" << run.phase() << ", "
        << run.iterations_size() << " iterations)\n"
        << "report: " << html_path << "\n"
        << "json:   " << json_path << "\n";
  }
  return command::kExitOk;
}

void AddReportCommand(CLI::App& app, int& exit_code) {
  auto report = command::AddSubcommand<ReportFlags>(
      app, "report",
      "A loop's report: a self-contained HTML page (rewards, staging, error "
      "budget and each canary's steps drawn in the page; no network at view "
      "time) and the same figures as JSON",
      exit_code, [](const ReportFlags& flags) {
        return RunReport(flags, std::cout, std::cerr);
      });
  CLI::App& cmd = *report.app;
  ReportFlags& flags = *report.flags;
  cmd.add_option("--loop-id", flags.loop_id,
                 "the loop (default: the newest under the state directory)");
  command::AddStateDirOption(cmd, flags.state_dir);
  cmd.add_option("--out", flags.out,
                 "HTML file to write (default STATE/loops/ID/report.html)");
  cmd.add_option("--json-out", flags.json_out,
                 "JSON file to write (default: the HTML's name with .json)");
  cmd.add_flag("--json", flags.json, "print the JSON too");
}

}  // namespace phaseloop::loop
