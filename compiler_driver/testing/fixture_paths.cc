#include "compiler_driver/testing/fixture_paths.h"

#include <algorithm>
#include <filesystem>

namespace phaseloop::testing {

std::vector<std::string> FixturePaths() {
  std::vector<std::string> paths;
  for (const auto& entry :
       std::filesystem::directory_iterator("compiler_driver/fixtures")) {
    std::string p = entry.path().string();
    if (p.size() > 2 &&
        (p.substr(p.size() - 2) == ".c" || p.substr(p.size() - 3) == ".cc")) {
      paths.push_back(p);
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace phaseloop::testing
