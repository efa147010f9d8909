#ifndef PHASELOOP_COMMON_PROCESS_SHELL_QUOTE_H_
#define PHASELOOP_COMMON_PROCESS_SHELL_QUOTE_H_

// One word for POSIX sh, for the scripts and command lines phaseloop
// writes (the Bazel toolchain's wrapper, a workload build's CC script, a
// command printed for the user to copy).

#include <string>

namespace phaseloop::process {

// `s` single-quoted, each ' in it written as '\''.
std::string ShellQuote(const std::string& s);

// `s` as it is when it holds only characters sh takes literally (letters,
// digits and -_=+,./:@%), else ShellQuote(s): for lines people read.
std::string ShellWord(const std::string& s);

}  // namespace phaseloop::process

#endif  // PHASELOOP_COMMON_PROCESS_SHELL_QUOTE_H_
