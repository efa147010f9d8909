#include "common/command/subcommand.h"

#include <ostream>

namespace phaseloop::command {

CLI::App* AddCommandGroup(CLI::App& parent, const std::string& name,
                          const std::string& description) {
  CLI::App* group = parent.add_subcommand(name, description);
  group->require_subcommand(1);
  return group;
}

CLI::Option* AddKafkaOption(CLI::App& command, std::string& bootstrap) {
  return command
      .add_option("--kafka", bootstrap,
                  "Kafka bootstrap servers, host:port[,host:port...] (a real "
                  "cluster, or what `phaseloop kafka serve` prints)")
      ->envname(kKafkaEnv);
}

CLI::Option* AddStateDirOption(CLI::App& command, std::string& state_dir) {
  return command.add_option(
      "--state-dir", state_dir,
      "state directory (default $PHASELOOP_STATE_DIR, else "
      "$XDG_STATE_HOME/phaseloop, else ~/.local/state/phaseloop)");
}

void MarkDeprecatedName(CLI::App& command, CLI::Option& option,
                        const CLI::Option& renamed, const std::string& old_name,
                        std::ostream& notes) {
  // Listed apart in --help. (Not hidden: CLI11 names a hidden option "" in
  // its errors.)
  option.group("Deprecated");
  const CLI::App* app = &command;
  const CLI::Option* current = &renamed;
  const std::string name = renamed.get_name();
  // (Rather than excludes(), whose message is CLI11's.)
  option.check(CLI::Validator(
      [app, current, old_name, name, &notes](std::string&) {
        if (current->count() > 0) {
          return "give " + name + " once (" + old_name +
                 " is its deprecated name)";
        }
        // The command's path, e.g. "phaseloop rewards run", found at parse
        // time (the top-level command may be named after this is added).
        std::string path;
        for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) {
          if (a->get_name().empty()) continue;
          path = a->get_name() + (path.empty() ? "" : " ") + path;
        }
        notes << path << ": " << old_name << " is deprecated; use " << name
              << "\n";
        return std::string();
      },
      ""));
}

}  // namespace phaseloop::command
