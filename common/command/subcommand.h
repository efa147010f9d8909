#ifndef PHASELOOP_COMMON_COMMAND_SUBCOMMAND_H_
#define PHASELOOP_COMMON_COMMAND_SUBCOMMAND_H_

// How a component adds its subcommands to the `phaseloop` binary: a group
// (`phaseloop buffer ...`) requires one of its own subcommands; a leaf owns a
// fresh flags value, bound to its options, and when it is chosen its run
// function's result becomes the process's exit code (common/command/
// exit_code.h). Single-threaded, at start-up.

#include <functional>
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
CLI::Option* AddKafkaOption(CLI::App& command, std::string& bootstrap);

}  // namespace phaseloop::command

#endif  // PHASELOOP_COMMON_COMMAND_SUBCOMMAND_H_
