#include "common/protobuf/utf8_strings.h"

#include <string>

#include "common/protobuf/protobuf_logs.h"
#include "gtest/gtest.h"
#include "phaseloop/v1/decision.pb.h"
#include "phaseloop/v1/loop.pb.h"
#include "phaseloop/v1/policy.pb.h"

namespace phaseloop::protobuf {
namespace {

TEST(Utf8StringsTest, ValidTextIsUnchanged) {
  for (const std::string text : std::initializer_list<std::string>{
           "", "plain ascii", "caf\xc3\xa9", "\xe2\x80\x98quoted\xe2\x80\x99",
           "\xf0\x9f\x98\x80", std::string("nul\0inside", 10)}) {
    EXPECT_TRUE(IsValidUtf8(text)) << text;
    EXPECT_EQ(ValidUtf8(text), text);
  }
}

TEST(Utf8StringsTest, EachInvalidByteBecomesAnEscape) {
  EXPECT_EQ(ValidUtf8("caf\xe9.c"), "caf\\xe9.c");  // Latin-1
  // A character cut in half (a message cut at a byte count).
  EXPECT_EQ(ValidUtf8("ab\xe2\x80"), "ab\\xe2\\x80");
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(ValidUtf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // >10FFFF
  EXPECT_EQ(ValidUtf8("\xff\xc3\xa9"), "\\xff\xc3\xa9");  // valid after it kept
  for (const std::string bad : std::initializer_list<std::string>{
           "caf\xe9", "ab\xe2\x80", "\xc0\xaf", "\xff"}) {
    EXPECT_FALSE(IsValidUtf8(bad));
    EXPECT_TRUE(IsValidUtf8(ValidUtf8(bad)));
  }
}

// The record of a compile whose source is named in Latin-1 could be written
// but never read back: made valid, it round-trips.
TEST(Utf8StringsTest, ARecordIsMadeValidEverywhereAndThenParses) {
  DropProtobufLogs();  // the broken record's serialisation would log
  v1::Decision decision;
  decision.set_decision_id("d1");
  decision.set_source("src/caf\xe9.c");
  decision.set_detail("cut in \xe2\x80");
  decision.add_topk_measured()->set_pipeline("default<Oz>\xff");
  std::string broken;
  ASSERT_TRUE(decision.SerializeToString(&broken));
  v1::Decision parsed;
  EXPECT_FALSE(parsed.ParseFromString(broken));  // what the fix is for

  EXPECT_TRUE(HasInvalidUtf8(decision));
  EXPECT_EQ(MakeStringsValidUtf8(&decision), 3);
  EXPECT_FALSE(HasInvalidUtf8(decision));
  EXPECT_EQ(decision.source(), "src/caf\\xe9.c");
  EXPECT_EQ(decision.topk_measured(0).pipeline(), "default<Oz>\\xff");
  EXPECT_EQ(decision.decision_id(), "d1");
  ASSERT_TRUE(parsed.ParseFromString(decision.SerializeAsString()));
  EXPECT_EQ(parsed.detail(), "cut in \\xe2\\x80");
  EXPECT_EQ(MakeStringsValidUtf8(&decision), 0);  // already valid
}

TEST(Utf8StringsTest, SerializeAsValidUtf8LeavesTheMessageAlone) {
  v1::Decision decision;
  decision.set_source("caf\xe9.c");
  v1::Decision parsed;
  ASSERT_TRUE(parsed.ParseFromString(SerializeAsValidUtf8(decision)));
  EXPECT_EQ(parsed.source(), "caf\\xe9.c");
  EXPECT_EQ(decision.source(), "caf\xe9.c");
  decision.set_source("ok.c");
  EXPECT_EQ(SerializeAsValidUtf8(decision), decision.SerializeAsString());
}

TEST(Utf8StringsTest, RepeatedStringsAndMapKeysToo) {
  v1::LoopIteration iteration;
  iteration.add_gate_lines("ok");
  iteration.add_gate_lines("bad \xfe");
  EXPECT_TRUE(HasInvalidUtf8(iteration));
  EXPECT_EQ(FirstInvalidUtf8Field(iteration), "gate_lines[1]");
  v1::LoopRun run;
  *run.add_iterations() = iteration;
  run.set_buffer_path("ok.db");
  EXPECT_EQ(FirstInvalidUtf8Field(run), "iterations[0].gate_lines[1]");
  EXPECT_EQ(MakeStringsValidUtf8(&iteration), 1);
  EXPECT_EQ(FirstInvalidUtf8Field(iteration), std::nullopt);
  EXPECT_EQ(iteration.gate_lines(1), "bad \\xfe");

  v1::PolicyMetadata artifact;
  (*artifact.mutable_metrics())["size\xe9"] = 1.5;
  EXPECT_TRUE(HasInvalidUtf8(artifact));
  EXPECT_EQ(FirstInvalidUtf8Field(artifact), "metrics[0].key");
  EXPECT_EQ(MakeStringsValidUtf8(&artifact), 1);
  EXPECT_EQ(artifact.metrics().count("size\\xe9"), 1u);
  EXPECT_EQ(artifact.metrics().at("size\\xe9"), 1.5);
}

}  // namespace
}  // namespace phaseloop::protobuf
