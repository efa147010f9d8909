#include "compiler_driver/env_command.h"

#include <gtest/gtest.h>

#include <sstream>

#include "nlohmann/json.hpp"

namespace phaseloop::compiler_driver {
namespace {

struct Result {
  int code;
  std::string out, err;
};

Result RunCmd(EnvFlags flags) {
  std::ostringstream out, err;
  int code = RunEnv(flags, out, err);
  return {code, out.str(), err.str()};
}

TEST(EnvCommand, JsonHasObservationsAndBaselines) {
  EnvFlags flags;
  flags.input = "compiler_driver/fixtures/strings.c";
  flags.passes = "sroa,instcombine";
  flags.observe = "ir_count,autophase,inst_count,text_size,module_hash";
  flags.baselines = true;
  flags.json = true;
  Result r = RunCmd(flags);
  ASSERT_EQ(r.code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["passes"].size(), 2u);
  EXPECT_GT(json["observations"]["ir_count"].get<int64_t>(), 0);
  EXPECT_EQ(json["observations"]["autophase"].size(), 56u);
  EXPECT_EQ(json["observations"]["inst_count"].size(), 70u);
  EXPECT_EQ(json["observations"]["autophase"]["TotalInsts"],
            json["observations"]["ir_count"]);
  EXPECT_EQ(json["observations"]["module_hash"].get<std::string>().size(), 32u);
  ASSERT_EQ(json["baselines"].size(), 6u);
  EXPECT_EQ(json["baselines"][5]["level"], "Oz");
}

TEST(EnvCommand, TableForPeople) {
  EnvFlags flags;
  flags.input = "compiler_driver/fixtures/strings.c";
  flags.baselines = true;
  Result r = RunCmd(flags);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("ir_count"), std::string::npos);
  EXPECT_NE(r.out.find("baselines"), std::string::npos);
}

TEST(EnvCommand, BadInputIsOneClearMessageAndExitTwo) {
  EnvFlags missing;
  missing.input = "nope/missing.c";
  Result r = RunCmd(missing);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nope/missing.c"), std::string::npos);

  EnvFlags unknown_pass;
  unknown_pass.input = "compiler_driver/fixtures/strings.c";
  unknown_pass.passes = "sroa,frobnicate";
  r = RunCmd(unknown_pass);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("'frobnicate'"), std::string::npos);

  const std::string bad_ir = std::string(getenv("TEST_TMPDIR")) + "/bad.ll";
  FILE* f = fopen(bad_ir.c_str(), "w");
  fputs("define i32 @f() {\n  ret i64 0\n}\n", f);
  fclose(f);
  EnvFlags malformed;
  malformed.input = bad_ir;
  r = RunCmd(malformed);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not valid LLVM IR"), std::string::npos) << r.err;

  EnvFlags bad_observation;
  bad_observation.input = "compiler_driver/fixtures/strings.c";
  bad_observation.observe = "ir_count,speed";
  r = RunCmd(bad_observation);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("'speed'"), std::string::npos);
}

}  // namespace
}  // namespace phaseloop::compiler_driver
