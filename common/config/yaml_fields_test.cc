#include "common/config/yaml_fields.h"

#include <fstream>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::config {
namespace {

std::string Write(const std::string& text) {
  const std::string path = testing::MakeTempDir() + "/c.yaml";
  std::ofstream(path) << text;
  return path;
}

TEST(YamlFieldsTest, ReadsFieldsAndResolvesPaths) {
  const std::string path =
      Write("name: demo\nn: 3\nx: 0.5\nlist: [a, b]\nfile: sub/f.yaml\n");
  YamlFields fields(path, "docs.yaml");
  auto root = fields.LoadMapping();
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_TRUE(
      fields.CheckKeys("", *root, {"name", "n", "x", "list", "file"}).ok());
  std::string name, file;
  int64_t n = 0;
  double x = 0;
  std::vector<std::string> list;
  ASSERT_TRUE(fields.Text("", *root, "name", name, true).ok());
  ASSERT_TRUE(fields.Int("", *root, "n", 1, 10, n).ok());
  ASSERT_TRUE(fields.Number("", *root, "x", 0, 1, x).ok());
  ASSERT_TRUE(fields.TextList("", *root, "list", list).ok());
  ASSERT_TRUE(fields.Text("", *root, "file", file).ok());
  EXPECT_EQ(name, "demo");
  EXPECT_EQ(n, 3);
  EXPECT_EQ(x, 0.5);
  EXPECT_EQ(list, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(fields.Resolve(file),
            path.substr(0, path.rfind('/')) + "/sub/f.yaml");
  EXPECT_EQ(fields.Resolve("/abs"), "/abs");
  // Absent optional fields leave the default.
  int64_t kept = 7;
  EXPECT_TRUE(fields.Int("", *root, "missing", 0, 9, kept).ok());
  EXPECT_EQ(kept, 7);
}

TEST(YamlFieldsTest, ErrorsNameFileFieldAndDocs) {
  const std::string path =
      Write("n: 2.5\ntypo: 1\nsect: {budget_s: 0}\nlist: a\n");
  YamlFields fields(path, "docs.yaml");
  auto root = fields.LoadMapping();
  ASSERT_TRUE(root.ok());
  int64_t n = 0;
  absl::Status s = fields.Int("", *root, "n", 0, 10, n);
  EXPECT_EQ(s.message(), path +
                             ": n: expected a whole number (docs.yaml "
                             "documents every field)");
  s = fields.CheckKeys("", *root, {"n", "sect", "list"});
  EXPECT_NE(s.message().find(": typo: unknown field; expected one of: list, "
                             "n, sect"),
            std::string::npos)
      << s;
  double budget = 1;
  s = fields.Number("sect", (*root)["sect"], "budget_s", 1, 100, budget);
  EXPECT_NE(s.message().find("sect.budget_s: 0 is outside [1, 100]"),
            std::string::npos)
      << s;
  std::vector<std::string> list;
  EXPECT_FALSE(fields.TextList("", *root, "list", list).ok());
  std::string required;
  s = fields.Text("", *root, "absent", required, true);
  EXPECT_NE(s.message().find("absent: required"), std::string::npos) << s;
}

TEST(YamlFieldsTest, BoolsAreTrueOrFalseOnly) {
  const std::string path = Write("on: true\noff: false\nyes: yes\nn: 1\n");
  YamlFields fields(path, "docs.yaml");
  auto root = fields.LoadMapping();
  ASSERT_TRUE(root.ok());
  bool on = false, off = true, kept = true;
  ASSERT_TRUE(fields.Bool("", *root, "on", on).ok());
  ASSERT_TRUE(fields.Bool("", *root, "off", off).ok());
  ASSERT_TRUE(fields.Bool("", *root, "absent", kept).ok());
  EXPECT_TRUE(on);
  EXPECT_FALSE(off);
  EXPECT_TRUE(kept);
  for (const char* key : {"yes", "n"}) {
    bool value = false;
    absl::Status s = fields.Bool("", *root, key, value);
    EXPECT_NE(s.message().find(std::string(key) + ": expected true or false"),
              std::string::npos)
        << s;
  }
}

TEST(YamlFieldsTest, MissingFileAndBadYamlAreNamed) {
  YamlFields missing("/nonexistent/x.yaml", "docs.yaml");
  EXPECT_EQ(missing.LoadMapping().status().code(), absl::StatusCode::kNotFound);
  YamlFields bad(Write("a: [1,\n"), "docs.yaml");
  EXPECT_NE(bad.LoadMapping().status().message().find("not valid YAML"),
            std::string::npos);
  YamlFields scalar(Write("just text\n"), "docs.yaml");
  EXPECT_NE(scalar.LoadMapping().status().message().find("expected a mapping"),
            std::string::npos);
}

}  // namespace
}  // namespace phaseloop::config
