#include "compiler_driver/cc_wrapper/policy.h"

#include <gtest/gtest.h>

#include <fstream>

#include "compiler_driver/testing/test_util.h"

namespace phaseloop::cc_wrapper {
namespace {

constexpr char kHash[] = "0123456789abcdef0123456789abcdef";

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = testing::MakeTempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

PolicyInput Input(const std::string& hash, const std::string& level) {
  return PolicyInput{hash, nullptr, level};
}

TEST(PolicyTest, BaselineRunsTheUsersLevel) {
  auto policy = LoadPolicy("baseline");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_STREQ((*policy)->kind(), "baseline");
  EXPECT_EQ((*policy)->Decide(Input(kHash, "O2")), "default<O2>");
  EXPECT_EQ((*policy)->Decide(Input(kHash, "Oz")), "default<Oz>");
  EXPECT_EQ((*policy)->version(), "baseline");
}

TEST(PolicyTest, FixedRunsItsPipelineWithAStableVersion) {
  auto a = LoadPolicy("fixed:default<Oz>");
  auto b = LoadPolicy("  fixed:default<Oz> ");
  auto c = LoadPolicy("fixed:default<O3>");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ((*a)->Decide(Input(kHash, "O2")), "default<Oz>");
  EXPECT_EQ((*a)->version(), (*b)->version());
  EXPECT_NE((*a)->version(), (*c)->version());
  EXPECT_EQ((*a)->version().size(), 32u);
}

TEST(PolicyTest, PolicyFileHoldsOneSpecLine) {
  auto from_file = LoadPolicy(
      WriteTemp("p", "# our policy\n\nfixed:default<Oz>\n"));
  auto inline_spec = LoadPolicy("fixed:default<Oz>");
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ((*from_file)->version(), (*inline_spec)->version());
}

TEST(PolicyTest, TableMapsModulesAndFallsBackToBaseline) {
  std::string table = std::string(kTableHeader) + "\n" + kHash +
                      "\tfunction(instcombine),default<Oz>\n";
  for (const std::string& spec :
       {WriteTemp("t", table), "table:" + WriteTemp("t2", table)}) {
    auto policy = LoadPolicy(spec);
    ASSERT_TRUE(policy.ok()) << policy.status();
    EXPECT_STREQ((*policy)->kind(), "table");
    EXPECT_EQ((*policy)->Decide(Input(kHash, "Oz")),
              "function(instcombine),default<Oz>");
    EXPECT_EQ((*policy)->Decide(Input(std::string(32, 'f'), "O2")),
              "default<O2>");
  }
}

TEST(PolicyTest, BadPoliciesAreClearErrors) {
  struct Case {
    std::string spec;
    std::string expected;  // part of the message
  } cases[] = {
      {"/no/such/policy", "/no/such/policy"},
      {"table:/no/such/table", "/no/such/table"},
      {"fixed:", "needs a pipeline"},
      {"", "empty policy"},
      {WriteTemp("empty", "# nothing\n"), "is empty"},
      {WriteTemp("two", "baseline\nfixed:default<O2>\n"), "more than one"},
      {WriteTemp("bogus", "learned-v9\n"), "unknown policy"},
      {WriteTemp("ref", "table:/x\n"), "refers to another file"},
      {WriteTemp("v2", "# phaseloop policy table v2\n"), "v1"},
      {WriteTemp("row", std::string(kTableHeader) + "\nnot-a-hash\tx\n"),
       "line 2"},
      {WriteTemp("nopipe", std::string(kTableHeader) + "\n" + kHash + "\n"),
       "line 2"},
  };
  for (const Case& c : cases) {
    auto policy = LoadPolicy(c.spec);
    ASSERT_FALSE(policy.ok()) << c.spec;
    EXPECT_NE(policy.status().message().find(c.expected), std::string::npos)
        << c.spec << ": " << policy.status();
  }
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
