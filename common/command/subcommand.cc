#include "common/command/subcommand.h"

#include <cctype>
#include <ostream>
#include <string>

namespace phaseloop::command {

CLI::App* AddCommandGroup(CLI::App& parent, const std::string& name,
                          const std::string& description) {
  CLI::App* group = parent.add_subcommand(name, description);
  group->require_subcommand(1);
  return group;
}

namespace {

bool IsPort(const std::string& text) {
  if (text.empty() || text.size() > 5) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  const int port = std::stoi(text);
  return port >= 1 && port <= 65535;
}

bool IsHostName(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' &&
        c != '_') {
      return false;
    }
  }
  return true;
}

// "" when `entry` is [PLAINTEXT://]host[:port] or [PLAINTEXT://][ipv6][:port].
// phaseloop's clients speak plaintext (no security.protocol is set):
// librdkafka drops an SSL:// or SASL_SSL:// address and retries for ever.
std::string BootstrapEntryError(std::string entry) {
  const size_t scheme_end = entry.find("://");
  if (scheme_end != std::string::npos) {
    std::string scheme = entry.substr(0, scheme_end);
    for (char& c : scheme) c = std::toupper(static_cast<unsigned char>(c));
    if (scheme != "PLAINTEXT") {
      return "a plaintext listener (phaseloop's Kafka clients speak "
             "plaintext: give the broker's PLAINTEXT address, with or "
             "without PLAINTEXT://)";
    }
    entry = entry.substr(scheme_end + 3);
  }
  std::string host = entry, port;
  if (!entry.empty() && entry[0] == '[') {
    const size_t close = entry.find(']');
    if (close == std::string::npos || close == 1) return "an IPv6 address";
    host = "";  // (checked by the brackets)
    const std::string rest = entry.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return "host:port";
      port = rest.substr(1);
      if (!IsPort(port)) return "a port from 1 to 65535";
    }
    return "";
  }
  const size_t colon = entry.find(':');
  if (colon != std::string::npos) {
    host = entry.substr(0, colon);
    port = entry.substr(colon + 1);
    if (port.find(':') != std::string::npos)
      return "host:port (an IPv6 address goes in brackets: [::1]:9092)";
    if (!IsPort(port)) return "a port from 1 to 65535";
  }
  if (!IsHostName(host)) return "a host name or address";
  return "";
}

}  // namespace

std::string BootstrapServersError(const std::string& bootstrap) {
  if (bootstrap.empty()) return "";  // not given: each command says so
  auto is_space = [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
  };
  auto refused = [&](const std::string& why) {
    return "'" + bootstrap +
           "' is not a list of Kafka bootstrap servers: " + why +
           "; give host:port[,host:port...], e.g. 127.0.0.1:9092";
  };
  int entries = 0;
  size_t start = 0;
  while (true) {
    const size_t comma = bootstrap.find(',', start);
    std::string entry = bootstrap.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    // As librdkafka reads it: blanks around an entry (a value read from a
    // file ends in a newline) and empty entries are nothing.
    while (!entry.empty() && is_space(entry.front())) entry.erase(0, 1);
    while (!entry.empty() && is_space(entry.back())) entry.pop_back();
    if (!entry.empty()) {
      ++entries;
      const std::string expected = BootstrapEntryError(entry);
      if (!expected.empty()) {
        return refused("'" + entry + "' is not " + expected);
      }
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return entries > 0 ? "" : refused("it names no server");
}

CLI::Option* AddKafkaOption(CLI::App& command, std::string& bootstrap) {
  return command
      .add_option("--kafka", bootstrap,
                  "Kafka bootstrap servers, host:port[,host:port...] (a real "
                  "cluster, or what `phaseloop kafka serve` prints)")
      ->envname(kKafkaEnv)
      ->check(CLI::Validator(
          [](std::string& value) { return BootstrapServersError(value); },
          "HOST:PORT[,...]"));
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
