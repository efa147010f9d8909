#ifndef PHASELOOP_COMMON_COMMAND_NUMBER_CHECKS_H_
#define PHASELOOP_COMMON_COMMAND_NUMBER_CHECKS_H_

// Number checks for command-line options whose refusals say what is
// wanted: CLI11's own PositiveNumber and NonNegativeNumber said "Value -1
// not in range 0.000000 to 179769313486231570814527..." (three hundred
// digits). NaN, infinities and out-of-range literals are refused too.

#include "CLI/CLI.hpp"

namespace phaseloop::command {

const CLI::Validator& PositiveNumber();     // "expected a number above 0"
const CLI::Validator& NonNegativeNumber();  // "expected a number of 0 or more"

// A finite number in [low, high] ("expected a number from LOW to HIGH"):
// CLI11's Range let NaN through (every comparison with it is false).
CLI::Validator NumberInRange(double low, double high);

}  // namespace phaseloop::command

#endif  // PHASELOOP_COMMON_COMMAND_NUMBER_CHECKS_H_
