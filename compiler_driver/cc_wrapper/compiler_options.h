#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_COMPILER_OPTIONS_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_COMPILER_OPTIONS_H_

// What the wrapper knows about clang-16 driver options (ccache's compopt
// design): one sorted static table, each entry a spelling plus flags, and a
// lookup that resolves an argument to its entry. An argument the table does
// not know is never guessed at: the caller runs plain clang with it.

#include <cstddef>
#include <string_view>

namespace phaseloop::cc_wrapper {

enum OptionFlag : unsigned {
  // The value is the next argument: "-o X", "-Xclang X".
  kTakesArg = 1u << 0,
  // The entry also matches any argument it is a prefix of, the rest being
  // the joined value: "-Ifoo", "-ofoo", "-std=c11", "-Wall" (entry "-W"),
  // "-fsanitize=address" (entry "-fsanitize").
  kTakesConcatArg = 1u << 1,
  // The value (separate or joined) is a file-system path.
  kTakesPath = 1u << 2,
  // Changes the LLVM pipeline, the backend or the outputs in a way the
  // wrapper does not reproduce: the invocation runs plain clang.
  kTooHard = 1u << 3,
};

struct CompilerOption {
  std::string_view name;  // as spelled on the command line, e.g. "-MF"
  unsigned flags;         // OptionFlag bits
};

// The result of looking one argument up.
struct OptionMatch {
  const CompilerOption* option = nullptr;  // nullptr: not in the table
  // True when the argument carried its value ("-Ifoo" matched "-I"); a
  // separate value ("-I foo") is then not consumed.
  bool joined = false;
  std::string_view value;  // the joined value ("foo"); empty otherwise
};

// Resolves `arg` the way clang's option parser does for the spellings in the
// table: an exact match wins; otherwise the longest kTakesConcatArg entry
// that is a prefix of `arg`. Arguments that do not start with '-' (inputs)
// and unknown options give option == nullptr.
OptionMatch LookupOption(std::string_view arg);

// The whole table, sorted by name (for tests and documentation).
class OptionTable {
 public:
  const CompilerOption* begin() const;
  const CompilerOption* end() const;
  std::size_t size() const;
};
inline OptionTable AllOptions() { return OptionTable(); }

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_COMPILER_OPTIONS_H_
