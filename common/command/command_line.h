#ifndef PHASELOOP_COMMON_COMMAND_COMMAND_LINE_H_
#define PHASELOOP_COMMON_COMMAND_COMMAND_LINE_H_

// How a phaseloop binary parses its command line so that every parse error
// names the input and the fix. CLI11 checks required options (and --help)
// before it looks at arguments nobody took, so on its own
// `phaseloop env --bogus-flag` says "--input is required" and
// `phaseloop nosuchcommand` says "A subcommand is required". Here an
// argument no command took is reported first, naming the command it was
// given to:
//   phaseloop env: unknown option '--bogus-flag'; see phaseloop env --help
//   phaseloop: unknown command 'loop'; commands: env, actions, ...
// and a group given no command lists its commands.

#include <iosfwd>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::command {

// Parses argc/argv into `app` (the top-level command; name it first, e.g.
// app.name("phaseloop"), as messages use it) and runs the chosen commands'
// callbacks, as CLI::App::parse does. Returns std::nullopt when the parse
// succeeded, else the exit code after writing the message: 0 for --help and
// --version (on `out`), 2 for every error (on `err`). With no arguments at
// all, a command that requires a subcommand prints its help on `out` and
// returns 2 (no command given is a usage error).
std::optional<int> ParseCommandLine(CLI::App& app, int argc,
                                    const char* const* argv, std::ostream& out,
                                    std::ostream& err);

// The message for `error`, a failed parse of `app` (not --help or
// --version), naming the command and the input: the first argument no
// command took (an unknown option, an unknown command, an extra argument);
// else, for a command group given no command, its commands; else CLI11's
// message, prefixed with the command and followed by where its help is.
// Commands that pass their arguments on (prefix_command, allow_extras) are
// not second-guessed.
std::string ExplainParseError(const CLI::App& app,
                              const CLI::ParseError& error);

}  // namespace phaseloop::command

#endif  // PHASELOOP_COMMON_COMMAND_COMMAND_LINE_H_
