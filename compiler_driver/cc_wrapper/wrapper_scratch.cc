#include "compiler_driver/cc_wrapper/wrapper_scratch.h"

#include <cstdlib>
#include <fstream>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "gtest/gtest.h"

namespace phaseloop::cc_wrapper::testing {

std::string AbsolutePath(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  std::string out = resolved ? resolved : path;
  free(resolved);
  return out;
}

WrapperScratch::WrapperScratch()
    : dir_(phaseloop::testing::MakeTempDir()), spool_(dir_ + "/spool") {
  std::ofstream(dir_ + "/empty.conf") << "# no settings: defaults\n";
}

int WrapperScratch::Run(const std::vector<std::string>& argv,
                        const std::map<std::string, std::string>& env,
                        std::string* output) const {
  std::vector<std::string> command = {
      "env", "-C", dir_, "PHASELOOP_SPOOL=" + spool_,
      "PHASELOOP_CONFIG=" + dir_ + "/empty.conf",
      // The outcome cache is on by default: each scratch has its own, so
      // one test's choices never answer another's.
      "PHASELOOP_OUTCOME_CACHE=" + dir_ + "/outcomes"};
  for (const auto& [k, v] : env) command.push_back(k + "=" + v);
  command.insert(command.end(), argv.begin(), argv.end());
  std::string ignored;
  return phaseloop::testing::RunCommand(command, output ? output : &ignored);
}

std::vector<v1::Decision> WrapperScratch::Decisions() const {
  std::vector<v1::Decision> out;
  auto contents = ReadSpool(spool_);
  EXPECT_TRUE(contents.ok()) << contents.status();
  if (!contents.ok()) return out;
  for (const auto& file : contents->files) {
    for (const auto& d : file.batch.decisions()) out.push_back(d);
  }
  return out;
}

}  // namespace phaseloop::cc_wrapper::testing
