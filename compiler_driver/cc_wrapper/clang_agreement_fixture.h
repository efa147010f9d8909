#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CLANG_AGREEMENT_FIXTURE_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CLANG_AGREEMENT_FIXTURE_H_

// The fixture of the clang agreement tests (clang_agreement_test.cc,
// clang_agreement_backend_test.cc): the same command line run with clang-16
// and with phaseloop-cc, each in a scratch directory of its own holding
// copies of the inputs; exit status, output and every file left behind
// compared byte for byte.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/wrapper_scratch.h"

namespace phaseloop::cc_wrapper {

namespace clang_agreement {
namespace fs = std::filesystem;
using ::phaseloop::cc_wrapper::testing::AbsolutePath;
using ::phaseloop::cc_wrapper::testing::WrapperScratch;

struct Side {
  int exit_code = -1;
  std::string output;                        // stdout + stderr
  std::map<std::string, std::string> files;  // relative path -> bytes
};

// Every file and directory under `dir` but the scratch's own (spool,
// config): relative path -> contents ("<dir>" for a directory).
inline std::map<std::string, std::string> Tree(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string name = fs::relative(entry.path(), dir).string();
    if (name == "empty.conf" || name.rfind("spool", 0) == 0) continue;
    files[name] = entry.is_directory()
                      ? "<dir>"
                      : phaseloop::testing::ReadFileOrEmpty(entry.path());
  }
  return files;
}

class ClangAgreementTest : public ::testing::Test {
 protected:
  // Runs `args` with `driver` in `scratch`, after copying `inputs` (fixture
  // names) and writing `extra` files (relative path -> contents) there.
  Side RunIn(const WrapperScratch& scratch, const std::string& driver,
             const std::vector<std::string>& args,
             const std::vector<std::string>& inputs,
             const std::map<std::string, std::string>& extra) {
    for (const std::string& input : inputs) {
      fs::copy_file(AbsolutePath("compiler_driver/fixtures/" + input),
                    scratch.dir() + "/" + input,
                    fs::copy_options::overwrite_existing);
    }
    for (const auto& [name, contents] : extra) {
      const fs::path path = scratch.dir() + "/" + name;
      fs::create_directories(path.parent_path());
      if (contents == "<dir>") {
        fs::create_directories(path);
      } else {
        std::ofstream(path, std::ios::binary) << contents;
      }
    }
    std::vector<std::string> argv = {driver};
    argv.insert(argv.end(), args.begin(), args.end());
    Side side;
    side.exit_code = scratch.Run(argv, {}, &side.output);
    side.files = Tree(scratch.dir());
    return side;
  }

  // clang-16 and the wrapper (baseline policy) on the same command line
  // agree in every respect; the wrapper's decisions are in wrapper_.
  void ExpectAgreement(const std::vector<std::string>& args,
                       const std::vector<std::string>& inputs,
                       const std::map<std::string, std::string>& extra = {}) {
    std::string line;
    for (const std::string& arg : args) line += " " + arg;
    SCOPED_TRACE("clang-16" + line);
    const Side theirs = RunIn(clang_, "clang-16", args, inputs, extra);
    std::vector<std::string> ours_args = {"--phaseloop-policy=baseline"};
    ours_args.insert(ours_args.end(), args.begin(), args.end());
    const Side ours =
        RunIn(wrapper_, AbsolutePath(kWrapper), ours_args, inputs, extra);
    EXPECT_EQ(ours.exit_code, theirs.exit_code);
    EXPECT_EQ(ours.output, theirs.output);
    std::vector<std::string> our_names, their_names;
    for (const auto& [name, bytes] : ours.files) our_names.push_back(name);
    for (const auto& [name, bytes] : theirs.files) their_names.push_back(name);
    EXPECT_EQ(our_names, their_names);
    EXPECT_TRUE(ours.files == theirs.files) << "some file's bytes differ";
  }

  // The reasons of the wrapper's decisions so far, in order.
  std::vector<std::string> Reasons() const {
    std::vector<std::string> reasons;
    for (const v1::Decision& d : wrapper_.Decisions()) {
      reasons.push_back(d.reason());
    }
    return reasons;
  }

  static constexpr char kWrapper[] = "compiler_driver/cc_wrapper/phaseloop-cc";
  WrapperScratch clang_, wrapper_;
};

}  // namespace clang_agreement
}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CLANG_AGREEMENT_FIXTURE_H_
