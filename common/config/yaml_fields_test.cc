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
                             ": n: expected a whole number, got \"2.5\" "
                             "(docs.yaml documents every field)");
  s = fields.CheckKeys("", *root, {"n", "sect", "list"});
  EXPECT_NE(s.message().find(": typo: unknown field; expected one of: list, "
                             "n, sect"),
            std::string::npos)
      << s;
  s = fields.CheckKeys("", *root, {"n", "sect", "list"},
                       {{"typo", "typo is not supported; remove it"}});
  EXPECT_NE(s.message().find(": typo: typo is not supported; remove it"),
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

TEST(YamlFieldsTest, AKeyGivenTwiceIsAnError) {
  const std::string path = Write("n: 1\nsect: {a: 1, a: 2}\nn: 2\n");
  YamlFields fields(path, "docs.yaml");
  auto root = fields.LoadMapping();
  ASSERT_TRUE(root.ok());
  absl::Status s = fields.CheckKeys("", *root, {"n", "sect"});
  EXPECT_NE(s.message().find(": n: given twice; keep one"), std::string::npos)
      << s;
  s = fields.CheckKeys("sect", (*root)["sect"], {"a"});
  EXPECT_NE(s.message().find(": sect.a: given twice; keep one"),
            std::string::npos)
      << s;
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

TEST(YamlFieldsTest, RangesSayWhichEndsAreOpen) {
  const std::string path =
      Write("zero: 0\none: 1\nhalf: 0.5\nbig: 1e9\nwords: many\nlist: [1]\n");
  YamlFields fields(path, "docs.yaml");
  auto root = fields.LoadMapping();
  ASSERT_TRUE(root.ok());
  double x = -1;
  EXPECT_TRUE(
      fields.Number("", *root, "one", NumberRange::AboveUpTo(0, 1), x).ok());
  EXPECT_EQ(x, 1);
  struct Case {
    const char* key;
    NumberRange range;
    const char* message;
  } cases[] = {
      {"zero", NumberRange::AboveUpTo(0, 1), "zero: 0 is outside (0, 1]"},
      {"one", NumberRange::Between(0, 1), "one: 1 is outside (0, 1)"},
      {"zero", NumberRange::Above(0), "zero: must be above 0, got 0"},
      {"half", NumberRange::AtLeast(1), "half: must be at least 1, got 0.5"},
      {"words", NumberRange::AtLeast(1),
       "words: expected a number, got \"many\""},
      {"list", NumberRange::AtLeast(1),
       "list: expected a number, got a list or mapping"},
  };
  for (const Case& c : cases) {
    absl::Status s = fields.Number("", *root, c.key, c.range, x);
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s;
  }
  EXPECT_EQ(x, 1) << "a refused value leaves the field as it was";
  // Whole numbers: the int64 maximum means no upper end.
  int small = 0;
  absl::Status s =
      fields.Int("", *root, "one", 2, YamlFields::kNoUpperEnd, small);
  EXPECT_NE(s.message().find("one: must be at least 2, got 1"),
            std::string::npos)
      << s;
  ASSERT_TRUE(fields.Int("", *root, "big", 0, 2000000000, small).ok());
  EXPECT_EQ(small, 1000000000);
  int8_t tiny = 3;
  s = fields.Int("", *root, "big", 0, YamlFields::kNoUpperEnd, tiny);
  EXPECT_NE(s.message().find("big: 1000000000 is outside [-128, 127]"),
            std::string::npos)
      << s;
  EXPECT_EQ(tiny, 3);
  uint16_t port = 7;
  s = fields.Int("", *root, "one", -5, 5, port);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(port, 1);
  // Integer spellings are read exactly, past double's 2^53.
  const std::string seeds = Write("seed: 9007199254740993\nneg: -1\n");
  YamlFields seed_fields(seeds, "docs.yaml");
  auto seed_root = seed_fields.LoadMapping();
  ASSERT_TRUE(seed_root.ok());
  uint64_t seed = 0;
  ASSERT_TRUE(
      seed_fields.Int("", *seed_root, "seed", 0, YamlFields::kNoUpperEnd, seed)
          .ok());
  EXPECT_EQ(seed, 9007199254740993u);
  s = seed_fields.Int("", *seed_root, "neg", -10, 10, seed);
  EXPECT_NE(s.message().find("neg: -1 is outside [0, 10]"), std::string::npos)
      << s;
  auto item = fields.IntValue("list[0]", (*root)["list"][0], 0, 0);
  EXPECT_NE(item.status().message().find("list[0]: 1 is outside [0, 0]"),
            std::string::npos)
      << item.status();
}

TEST(YamlFieldsTest, WholeNumbersAreDecimalAndExact) {
  const std::string path = Write(
      "octal: 010\nnine: 09\nhex: 0x10\nsci: 1e3\nhuge: 9223372036854775808\n"
      "u64: 18446744073709551615\nempty:\n");
  YamlFields fields(path, "docs.yaml");
  auto root = fields.LoadMapping();
  ASSERT_TRUE(root.ok());
  const int64_t no_end = YamlFields::kNoUpperEnd;
  int64_t n = 0;
  ASSERT_TRUE(fields.Int("", *root, "octal", 0, no_end, n).ok());
  EXPECT_EQ(n, 10) << "YAML 1.2: a leading zero is not octal";
  ASSERT_TRUE(fields.Int("", *root, "nine", 0, no_end, n).ok());
  EXPECT_EQ(n, 9);
  ASSERT_TRUE(fields.Int("", *root, "sci", 0, no_end, n).ok());
  EXPECT_EQ(n, 1000);
  absl::Status s = fields.Int("", *root, "hex", 0, no_end, n);
  EXPECT_NE(s.message().find("hex: expected a number, got \"0x10\""),
            std::string::npos)
      << s;
  s = fields.Int("", *root, "huge", 0, no_end, n);
  EXPECT_NE(
      s.message().find("huge: must be at least 0, got 9223372036854775808"),
      std::string::npos)
      << s;
  s = fields.Int("", *root, "empty", 0, no_end, n);
  EXPECT_NE(s.message().find("empty: expected a number, got nothing (an "
                             "empty value)"),
            std::string::npos)
      << s;
  // A uint64_t takes its whole range when there is no upper end.
  uint64_t seed = 1;
  ASSERT_TRUE(fields.Int("", *root, "u64", 0, no_end, seed).ok());
  EXPECT_EQ(seed, 18446744073709551615u);
  ASSERT_TRUE(fields.Int("", *root, "huge", 0, no_end, seed).ok());
  EXPECT_EQ(seed, 9223372036854775808u);
  // An absent key leaves any default alone, whatever its value.
  uint64_t big_default = 17000000000000000000u;
  EXPECT_TRUE(fields.Int("", *root, "absent", 0, 10, big_default).ok());
  EXPECT_EQ(big_default, 17000000000000000000u);
}

TEST(YamlFieldsTest, ChoicesListTheirMeanings) {
  const std::string path = Write("mode: fast\nbad: slow\nlist: [fast]\n");
  YamlFields fields(path, "docs.yaml");
  auto root = fields.LoadMapping();
  ASSERT_TRUE(root.ok());
  const std::vector<ChoiceOption> options = {
      {"fast", "less checking"}, {"safe", ""}, {"exact", "slowest"}};
  std::string mode = "safe";
  ASSERT_TRUE(fields.Choice("", *root, "mode", options, mode).ok());
  EXPECT_EQ(mode, "fast");
  absl::Status s = fields.Choice("", *root, "bad", options, mode);
  EXPECT_NE(s.message().find("bad: \"slow\" is not a choice; use fast (less "
                             "checking), safe or exact (slowest)"),
            std::string::npos)
      << s;
  EXPECT_FALSE(fields.Choice("", *root, "list", options, mode).ok());
  EXPECT_EQ(mode, "fast");
}

TEST(YamlFieldsTest, AnEmptyTextParsesToNull) {
  YamlFields fields("inline.yaml", "docs.yaml");
  auto empty = fields.Parse("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(!*empty || empty->IsNull());
  EXPECT_NE(fields.Parse("a: [").status().message().find(
                "inline.yaml: not valid YAML"),
            std::string::npos);
}

TEST(YamlFieldsTest, MissingFileAndBadYamlAreNamed) {
  YamlFields missing("/nonexistent/x.yaml", "docs.yaml");
  EXPECT_EQ(missing.LoadMapping().status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.ReadText().status().message().find(
                "cannot read /nonexistent/x.yaml; give an existing file "
                "(docs.yaml is an example)"),
            std::string::npos);
  YamlFields bad(Write("a: [1,\n"), "docs.yaml");
  EXPECT_NE(bad.LoadMapping().status().message().find("not valid YAML"),
            std::string::npos);
  // A second document was ignored, whatever it held; a leading "---" and
  // a closing "..." are one document still.
  YamlFields two(Write("a: 1\n---\nbogus: 2\n"), "docs.yaml");
  EXPECT_NE(two.LoadMapping().status().message().find(
                ":2: a second YAML document begins here"),
            std::string::npos)
      << two.LoadMapping().status();
  YamlFields one(Write("# c\n---\na: 1\n...\n"), "docs.yaml");
  EXPECT_TRUE(one.LoadMapping().ok()) << one.LoadMapping().status();
  // A directive belongs to the document its "---" opens (the review: a
  // %YAML line read as a document of its own).
  YamlFields directive(Write("%YAML 1.2\n---\na: 1\n"), "docs.yaml");
  EXPECT_TRUE(directive.LoadMapping().ok()) << directive.LoadMapping().status();
  YamlFields scalar(Write("just text\n"), "docs.yaml");
  EXPECT_NE(scalar.LoadMapping().status().message().find("expected a mapping"),
            std::string::npos);
}

}  // namespace
}  // namespace phaseloop::config
