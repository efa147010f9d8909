#include "common/process/shell_quote.h"

namespace phaseloop::process {

std::string ShellQuote(const std::string& s) {
  std::string quoted = "'";
  for (char c : s) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string ShellWord(const std::string& s) {
  static constexpr char kLiteral[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=+,./"
      ":@%";
  if (!s.empty() && s.find_first_not_of(kLiteral) == std::string::npos) {
    return s;
  }
  return ShellQuote(s);
}

}  // namespace phaseloop::process
