#include "common/config/yaml_documents.h"

#include "gtest/gtest.h"

namespace phaseloop::config {
namespace {

TEST(YamlDocuments, SplitsAtDocumentMarkers) {
  const auto docs = LoadYamlDocuments(
      "# leading comment\n---\na: 1\n---\nb: |\n  text\n--- 3\n...\n---\n");
  ASSERT_EQ(docs.size(), 4u);
  EXPECT_EQ(docs[0]["a"].as<int>(), 1);
  EXPECT_EQ(docs[1]["b"].as<std::string>(), "text\n");
  EXPECT_EQ(docs[2].as<int>(), 3);
  EXPECT_TRUE(docs[3].IsNull());
}

TEST(YamlDocuments, AStreamWithoutMarkersIsOneDocument) {
  const auto docs = LoadYamlDocuments("a: 1\nb: [2, 3]\n");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["b"][1].as<int>(), 3);
  EXPECT_TRUE(LoadYamlDocuments("").empty());
  EXPECT_TRUE(LoadYamlDocuments("# only a comment\n\n").empty());
}

TEST(YamlDocuments, DashesInsideAValueAreNotMarkers) {
  const auto docs = LoadYamlDocuments("a: '---'\nb: x---y\n  ---c\n");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["a"].as<std::string>(), "---");
}

// yaml-cpp 0.7's LoadAll never returns on these (issue #1040).
TEST(YamlDocuments, MalformedStreamsEndInAnExceptionOrANode) {
  for (const char* text : {",", "\n,\n", "---\n,\n---\n,", "- !+(.,.)"}) {
    try {
      (void)LoadYamlDocuments(text);
    } catch (const YAML::Exception&) {
    }
  }
}

TEST(YamlDocuments, ErrorsKeepTheStreamsLineNumbers) {
  try {
    LoadYamlDocuments("---\na: 1\n---\nb: [\n");
    FAIL() << "no exception";
  } catch (const YAML::Exception& e) {
    EXPECT_GE(e.mark.line, 3) << e.what();  // 0-based: the 4th line or later
  }
}

}  // namespace
}  // namespace phaseloop::config
