#include "tools/config/config_check_command.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/command/exit_code.h"
#include "common/command/subcommand.h"
#include "nlohmann/json.hpp"
#include "tools/config/config_check.h"

namespace phaseloop::config_check {
namespace {

using nlohmann::json;

constexpr char kName[] = "phaseloop config check: ";

// The kind column of the table: what was checked, or "?" when it was not
// told.
std::string KindText(const CheckedConfig& checked) {
  return checked.kind ? ConfigKindName(*checked.kind) : "?";
}

}  // namespace

int RunConfigCheck(const ConfigCheckFlags& flags, std::ostream& out,
                   std::ostream& err) {
  // Nothing checked: the message on stderr and, with --json, as JSON.
  auto refuse = [&](const std::string& message) {
    err << kName << message << "\n";
    if (flags.json) {
      const json doc = {
          {"ok", false}, {"error", message}, {"files", json::array()}};
      out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    }
    return command::kExitBadInput;
  };
  std::optional<ConfigKind> kind;
  if (!flags.kind.empty()) {
    kind = ConfigKindFromName(flags.kind);
    if (!kind) {
      return refuse(absl::StrCat("--kind ", flags.kind,
                                 " is not a kind; use one of ",
                                 absl::StrJoin(ConfigKindNames(), ", ")));
    }
  }
  auto files = ConfigFiles(flags.paths);
  if (!files.ok()) return refuse(std::string(files.status().message()));
  if (files->empty()) {
    return refuse(absl::StrCat("no *.yaml or *.yml files under ",
                               absl::StrJoin(flags.paths, ", ")));
  }
  std::vector<CheckedConfig> checked;
  std::vector<bool> skipped;
  size_t bad = 0, skips = 0;
  for (const ConfigFile& file : *files) {
    checked.push_back(CheckConfig(file.path, kind));
    // Another tool's manifest beside the configs (a Kubernetes Deployment
    // in the service's directory) is listed, not counted against them;
    // named on the command line, it is an error.
    skipped.push_back(file.found_in_directory && checked.back().foreign);
    if (skipped.back()) {
      ++skips;
    } else if (!checked.back().status.ok()) {
      ++bad;
    }
  }
  if (flags.json) {
    json doc = {{"ok", bad == 0}, {"files", json::array()}};
    for (size_t i = 0; i < checked.size(); ++i) {
      const CheckedConfig& c = checked[i];
      json entry = {{"path", c.path}, {"ok", c.status.ok()}};
      entry["kind"] = c.kind ? json(ConfigKindName(*c.kind)) : json(nullptr);
      if (skipped[i]) entry["skipped"] = true;
      if (c.status.ok()) {
        entry["summary"] = c.summary;
      } else {
        entry["error"] = std::string(c.status.message());
      }
      doc["files"].push_back(entry);
    }
    // Errors repeat the file's own keys and values, which may not be UTF-8.
    out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    size_t path_width = 0, kind_width = 0;
    for (const CheckedConfig& c : checked) {
      path_width = std::max(path_width, c.path.size());
      kind_width = std::max(kind_width, KindText(c).size());
    }
    for (size_t i = 0; i < checked.size(); ++i) {
      const CheckedConfig& c = checked[i];
      if (skipped[i]) {
        out << "skip " << KindText(c)
            << std::string(kind_width - KindText(c).size() + 2, ' ')
            << c.status.message() << "\n";
        continue;
      }
      out << (c.status.ok() ? "ok   " : "BAD  ") << KindText(c)
          << std::string(kind_width - KindText(c).size() + 2, ' ') << c.path;
      if (c.status.ok()) {
        out << std::string(path_width - c.path.size() + 2, ' ') << c.summary
            << "\n";
      } else {
        // A workload file lists every problem, one per line.
        out << "\n    "
            << absl::StrReplaceAll(c.status.message(), {{"\n", "\n    "}})
            << "\n";
      }
    }
  }
  const size_t read = checked.size() - skips;
  err << read << " config file" << (read == 1 ? "" : "s") << ": " << read - bad
      << " valid, " << bad << " not";
  if (skips > 0) {
    err << "; " << skips << " other tool"
        << (skips == 1 ? "'s manifest" : "s' manifests") << " skipped";
  }
  err << "\n";
  return bad == 0 ? command::kExitOk : command::kExitBadInput;
}

void AddConfigCommand(CLI::App& app, int& exit_code) {
  CLI::App* config = command::AddCommandGroup(
      app, "config", "phaseloop's config files (services, SLOs, ...)");
  auto check = command::AddSubcommand<ConfigCheckFlags>(
      *config, "check",
      "Check config files offline with the parsers their commands use "
      "(service, judge, budget-policy, load, slo, learner, loop, workload; "
      "the kind told by each file's keys), and the files a service or loop "
      "names. Exit 0 all valid, 2 any not",
      exit_code, [](const ConfigCheckFlags& flags) {
        return RunConfigCheck(flags, std::cout, std::cerr);
      });
  check.app
      ->add_option("FILE_OR_DIR", check.flags->paths,
                   "config files, or directories whose *.yaml/*.yml are "
                   "checked, all the way down (e.g. configs; links to "
                   "directories followed; other tools' manifests found there, "
                   "such as a Kubernetes Deployment, are skipped)")
      ->required();
  check.app->add_option("--kind", check.flags->kind,
                        "check every file as this kind (" +
                            absl::StrJoin(ConfigKindNames(), ", ") +
                            ") instead of telling it by its keys");
  check.app->add_flag("--json", check.flags->json, "print JSON");
}

}  // namespace phaseloop::config_check
