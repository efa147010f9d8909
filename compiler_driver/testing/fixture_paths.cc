#include "compiler_driver/testing/fixture_paths.h"

#include <algorithm>
#include <filesystem>

#include "gtest/gtest.h"

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

std::string FixturePath(const std::string& name) {
  for (const std::string& path : FixturePaths()) {
    if (path.size() >= name.size() + 1 &&
        path.compare(path.size() - name.size() - 1, std::string::npos,
                     "/" + name) == 0) {
      return path;
    }
  }
  ADD_FAILURE() << "no fixture " << name << " in compiler_driver/fixtures";
  return name;
}

}  // namespace phaseloop::testing
