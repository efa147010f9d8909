#include "common/command/command_line.h"

#include <cctype>
#include <ostream>
#include <vector>

#include "common/command/exit_code.h"

namespace phaseloop::command {
namespace {

// A command the parse chose and its full name ("phaseloop buffer stats").
struct Chosen {
  const CLI::App* app;
  std::string path;
};

// `app` and the chain of subcommands the parse chose below it.
std::vector<Chosen> ChosenCommands(const CLI::App& app) {
  std::vector<Chosen> chain = {{&app, app.get_name()}};
  while (true) {
    const std::vector<CLI::App*> chosen = chain.back().app->get_subcommands();
    if (chosen.empty()) break;
    chain.push_back(
        {chosen.front(), chain.back().path + " " + chosen.front()->get_name()});
  }
  return chain;
}

bool PassesArgumentsOn(const CLI::App& app) {
  return app.get_prefix_command() || app.get_allow_extras();
}

// Whether `arg` reads as an option: "-x", "--name", but not "-" or "-5".
bool LooksLikeOption(const std::string& arg) {
  if (arg.size() < 2 || arg[0] != '-') return false;
  return !(std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.');
}

// "a, b, c": the commands `app` offers.
std::string CommandList(const CLI::App& app) {
  std::string list;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) {
         return !s->get_name().empty() && !s->get_disabled();
       })) {
    if (!list.empty()) list += ", ";
    list += sub->get_name();
  }
  return list;
}

std::string SeeHelp(const std::string& path) {
  return "; see " + path + " --help";
}

// The message for the first argument no chosen command took; "".
std::string ExplainLeftover(const std::vector<Chosen>& chain) {
  for (const Chosen& command : chain) {
    if (PassesArgumentsOn(*command.app)) return "";
    const std::vector<std::string> left = command.app->remaining(false);
    if (left.empty()) continue;
    const std::string& arg = left.front();
    if (LooksLikeOption(arg)) {
      // "--name=value" names the option "--name".
      const std::string name =
          arg.rfind("--", 0) == 0 ? arg.substr(0, arg.find('=')) : arg;
      return command.path + ": unknown option '" + name + "'" +
             SeeHelp(command.path);
    }
    const bool offers_commands = !CommandList(*command.app).empty();
    if (offers_commands && command.app->get_subcommands().empty()) {
      return command.path + ": unknown command '" + arg +
             "'; commands: " + CommandList(*command.app) +
             SeeHelp(command.path);
    }
    return command.path + ": unexpected argument '" + arg + "'" +
           SeeHelp(command.path);
  }
  return "";
}

// One line per message: CLI11's end with a newline or not.
std::string OneLine(std::string message) {
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return message;
}

}  // namespace

std::string ExplainParseError(const CLI::App& app,
                              const CLI::ParseError& error) {
  const std::vector<Chosen> chain = ChosenCommands(app);
  std::string message = ExplainLeftover(chain);
  if (!message.empty()) return message;
  const Chosen& last = chain.back();
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr &&
      last.app->get_require_subcommand_min() > 0 &&
      last.app->get_subcommands().empty()) {
    return last.path + ": a command is required: " + CommandList(*last.app) +
           SeeHelp(last.path);
  }
  return last.path + ": " + OneLine(error.what()) + SeeHelp(last.path);
}

std::optional<int> ParseCommandLine(CLI::App& app, int argc,
                                    const char* const* argv, std::ostream& out,
                                    std::ostream& err) {
  if (argc <= 1 && app.get_require_subcommand_min() > 0) {
    out << app.help();
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A callback's way to exit with a code of its own, no message.
    if (e.get_name() == "RuntimeError") return e.get_exit_code();
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      // --help or --version, unless an argument was not understood.
      const std::string leftover = ExplainLeftover(ChosenCommands(app));
      if (!leftover.empty()) {
        err << leftover << "\n";
        return kExitBadInput;
      }
      app.exit(e, out, err);
      return kExitOk;
    }
    err << ExplainParseError(app, e) << "\n";
    return kExitBadInput;
  }
  return std::nullopt;
}

}  // namespace phaseloop::command
