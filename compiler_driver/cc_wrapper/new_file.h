#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_NEW_FILE_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_NEW_FILE_H_

#include <string>

namespace phaseloop::cc_wrapper {

// Creates `path` (which must not exist) holding `bytes`; false with `error`
// (and nothing left behind) when it cannot. Standard library only.
bool WriteNewFile(const std::string& path, const std::string& bytes,
                  std::string* error);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_NEW_FILE_H_
