#include "common/command/number_checks.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

namespace phaseloop::command {
namespace {

// `text` as a finite number, all of it (no trailing characters, no
// overflow, no NaN or infinity).
bool ParseFinite(const std::string& text, double* value) {
  char* end = nullptr;
  errno = 0;
  *value = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() &&
         errno != ERANGE && std::isfinite(*value);
}

CLI::Validator NumberCheck(bool zero_allowed) {
  const std::string wanted =
      zero_allowed ? "a number of 0 or more" : "a number above 0";
  return CLI::Validator(
      [zero_allowed, wanted](std::string& text) -> std::string {
        double value = 0;
        const bool number = ParseFinite(text, &value);
        if (number && (zero_allowed ? value >= 0 : value > 0)) return "";
        return "expected " + wanted + ", got '" + text + "'";
      },
      zero_allowed ? "NUMBER >= 0" : "NUMBER > 0");
}

}  // namespace

CLI::Validator NumberInRange(double low, double high) {
  std::ostringstream range;
  range << low << " to " << high;
  const std::string wanted = range.str();
  return CLI::Validator(
      [low, high, wanted](std::string& text) -> std::string {
        double value = 0;
        const bool number = ParseFinite(text, &value);
        if (number && value >= low && value <= high) return "";
        return "expected a number from " + wanted + ", got '" + text + "'";
      },
      "NUMBER in [" + wanted + "]");
}

const CLI::Validator& PositiveNumber() {
  static const CLI::Validator* check = new CLI::Validator(NumberCheck(false));
  return *check;
}

const CLI::Validator& NonNegativeNumber() {
  static const CLI::Validator* check = new CLI::Validator(NumberCheck(true));
  return *check;
}

}  // namespace phaseloop::command
