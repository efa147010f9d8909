#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CACHE_FIELDS_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CACHE_FIELDS_H_

// The field encoding of the wrapper's caches (object_cache's keys,
// outcome_cache's entries): "<name> <length>:<value>\n", so a value may
// hold any byte and a cut or foreign entry is told from a good one.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phaseloop::cc_wrapper {

// Appends one field to *text.
void AppendField(std::string* text, absl::string_view name,
                 absl::string_view value);

// Reads the field named `name` at *pos and moves *pos past it; DataLoss
// naming the field when another field is there or it is cut.
absl::StatusOr<std::string> ReadField(const std::string& bytes, size_t* pos,
                                      absl::string_view name);

// Whether `s` is a cache key as both caches name entries by it: 32
// lowercase hex digits (ir::ContentHash).
bool IsCacheKey(absl::string_view s);

// ReadField of a decimal int64; DataLoss when it is not one.
absl::StatusOr<int64_t> ReadNumberField(const std::string& bytes, size_t* pos,
                                        absl::string_view name);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CACHE_FIELDS_H_
