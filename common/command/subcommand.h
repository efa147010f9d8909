#ifndef PHASELOOP_COMMON_COMMAND_SUBCOMMAND_H_
#define PHASELOOP_COMMON_COMMAND_SUBCOMMAND_H_

// How a component adds its subcommands to the `phaseloop` binary: a group
// (`phaseloop buffer ...`) requires one of its own subcommands; a leaf owns a
// fresh flags value, bound to its options, and when it is chosen its run
// function's result becomes the process's exit code (common/command/
// exit_code.h). Single-threaded, at start-up.

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::command {

// `parent NAME ...`: a command that only groups subcommands.
CLI::App* AddCommandGroup(CLI::App& parent, const std::string& name,
                          const std::string& description);

// A leaf command and the flags its options write to.
template <typename Flags>
struct Subcommand {
  CLI::App* app;
  std::shared_ptr<Flags> flags;
};

// `parent NAME`: flags default-constructed; `run(flags)` runs when NAME is
// chosen and its result is stored in `exit_code` (which must outlive the
// parse, as main's does).
template <typename Flags>
Subcommand<Flags> AddSubcommand(CLI::App& parent, const std::string& name,
                                const std::string& description, int& exit_code,
                                std::function<int(const Flags&)> run) {
  auto flags = std::make_shared<Flags>();
  CLI::App* app = parent.add_subcommand(name, description);
  app->callback(
      [flags, run = std::move(run), &exit_code] { exit_code = run(*flags); });
  return {app, flags};
}

// Environment variable of the Kafka bootstrap servers every client takes.
inline constexpr char kKafkaEnv[] = "PHASELOOP_KAFKA";

// `--kafka BOOTSTRAP` (host:port[,host:port...]; default $PHASELOOP_KAFKA),
// the option of every command that talks to Kafka.
// The value (flag or environment) is checked with BootstrapServersError.
CLI::Option* AddKafkaOption(CLI::App& command, std::string& bootstrap);

// "" when `bootstrap` is empty or a comma-separated list of
// [PROTOCOL://]host[:port] (an IPv6 address in brackets), as librdkafka
// reads bootstrap.servers; else what is wrong, naming the entry and the form
// expected. (librdkafka itself only logs a bad entry and retries for ever.)
std::string BootstrapServersError(const std::string& bootstrap);

// `--state-dir DIR`: where durable state lives (canaries, loops, spools);
// "" means kafka::DefaultStateDir(): $PHASELOOP_STATE_DIR, else
// $XDG_STATE_HOME/phaseloop, else ~/.local/state/phaseloop.
CLI::Option* AddStateDirOption(CLI::App& command, std::string& state_dir);

// One name per idea across phaseloop's commands (README "Commands"): an
// option renamed to the shared name keeps its old spelling for one release.
// `NAME` is the option; `OLD_NAME` sets the same `value`, is listed in
// --help under "Deprecated" (and NAME's description ends "(alias: OLD_NAME,
// deprecated)"), and when used writes one line to `notes` (std::cerr in the
// binaries):
//   phaseloop rewards run: --group-id is deprecated; use --group
// Giving both is a parse error naming both. Returns NAME's option for
// further settings (capture_default_str, check). Those apply to NAME only:
// the command checks the value it gets as well (a value given as OLD_NAME
// skips NAME's check() validators), and instead of required() it checks
// for a missing value (OLD_NAME alone would not satisfy it).
template <typename T>
CLI::Option* AddRenamedOption(CLI::App& command, const std::string& name,
                              const std::string& old_name, T& value,
                              const std::string& description,
                              std::ostream& notes);

// How the renamed options' old names are announced (used by the template).
void MarkDeprecatedName(CLI::App& command, CLI::Option& option,
                        const CLI::Option& renamed, const std::string& old_name,
                        std::ostream& notes);

template <typename T>
CLI::Option* AddRenamedOption(CLI::App& command, const std::string& name,
                              const std::string& old_name, T& value,
                              const std::string& description,
                              std::ostream& notes) {
  CLI::Option* option = command.add_option(
      name, value, description + " (alias: " + old_name + ", deprecated)");
  CLI::Option* old =
      command.add_option(old_name, value, "deprecated name of " + name);
  MarkDeprecatedName(command, *old, *option, old_name, notes);
  return option;
}

}  // namespace phaseloop::command

#endif  // PHASELOOP_COMMON_COMMAND_SUBCOMMAND_H_
