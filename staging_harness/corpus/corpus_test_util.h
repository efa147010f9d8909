#ifndef PHASELOOP_STAGING_HARNESS_CORPUS_CORPUS_TEST_UTIL_H_
#define PHASELOOP_STAGING_HARNESS_CORPUS_CORPUS_TEST_UTIL_H_

#include <filesystem>
#include <fstream>
#include <string>

namespace phaseloop::corpus::testing {

// Writes `text` to root/relative, creating directories.
inline void WriteSource(const std::filesystem::path& root,
                        const std::string& relative, const std::string& text) {
  const std::filesystem::path path = root / relative;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A fresh directory under $TEST_TMPDIR (or /tmp) named `name`.
inline std::filesystem::path FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::filesystem::path dir =
      std::filesystem::path(tmp != nullptr ? tmp : "/tmp") / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace phaseloop::corpus::testing

#endif  // PHASELOOP_STAGING_HARNESS_CORPUS_CORPUS_TEST_UTIL_H_
