#include "common/fuzzing/fuzz_target.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace phaseloop::fuzzing {

void InvariantFailed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "invariant failed: %s (%s:%d)\n", what, file, line);
  std::fflush(stderr);
  std::abort();
}

std::vector<std::string> SplitAll(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    if (end == std::string_view::npos) {
      parts.emplace_back(text.substr(start));
      return parts;
    }
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
}

void CheckClearRefusal(const absl::Status& status, std::string_view named) {
  if (status.ok()) return;
  FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  // absl's string_view is not std's in Debian's build: compare as strings.
  FUZZ_CHECK(std::string(status.message()).find(named) != std::string::npos);
}

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") +
                        "/phaseloop-fuzz-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    InvariantFailed("mkdtemp for a scratch directory", __FILE__, __LINE__);
  }
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void ScratchDir::Write(const std::string& name, std::string_view bytes) const {
  std::ofstream out(path_ + "/" + name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> ScratchDir::Entries() const {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(path_, error)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace phaseloop::fuzzing
