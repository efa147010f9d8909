#include "staging_harness/correctness/output_compare.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "common/testing/test_util.h"

namespace phaseloop::correctness {
namespace {

class OutputCompareTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir(); }

  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  // Runs whose stdout holds `expected` and `got`.
  void SetStdout(const std::string& expected, const std::string& got) {
    reference_.stdout_path = Write("ref.out", expected);
    candidate_.stdout_path = Write("cand.out", got);
  }
  std::optional<Mismatch> Compare(const RunNames& names = {}) {
    auto result = CompareOutputs(reference_, candidate_, check_, names);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : std::nullopt;
  }

  std::string dir_;
  RunOutputs reference_, candidate_;
  workloads::Check check_;
};

TEST_F(OutputCompareTest, IdenticalOutputsMatch) {
  SetStdout("hello\nworld\n", "hello\nworld\n");
  EXPECT_EQ(Compare(), std::nullopt);
  SetStdout("", "");
  EXPECT_EQ(Compare(), std::nullopt);
}

TEST_F(OutputCompareTest, ExactNamesTheLineAndBothTexts) {
  SetStdout("pi\n3.14159\nend\n", "pi\n3.14160\nend\n");
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->what, "stdout");
  EXPECT_EQ(m->detail, "line 2: expected '3.14159', got '3.14160'");
}

TEST_F(OutputCompareTest, ExactFindsADifferenceFarIntoALargeOutput) {
  // Several read chunks of identical lines, then one differing byte.
  std::string same;
  for (int i = 0; i < 20000; ++i) same += "line of output\n";
  SetStdout(same + "tail A\n", same + "tail B\n");
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail, "line 20001: expected 'tail A', got 'tail B'");
}

TEST_F(OutputCompareTest, ExactReportsAShorterOutput) {
  SetStdout("a\nb\n", "a\n");
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail, "line 2: expected 'b', got the end of the output");
  SetStdout("abc", "abcd");
  m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail, "line 1: expected 'abc' (end of output), got 'abcd'");
}

TEST_F(OutputCompareTest, ExactShowsOnlyTheNeighbourhoodOfALongLine) {
  const std::string head(100, 'x');
  SetStdout(head + "1yyy\n", head + "2yyy\n");
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail, "line 1: expected '..." + std::string(20, 'x') +
                           "1yyy', got '..." + std::string(20, 'x') + "2yyy'");
}

TEST_F(OutputCompareTest, BinaryOutputIsReportedByByteOffset) {
  std::string a(
      "\x7f"
      "ELF\0\0\1\2",
      8);
  std::string b = a;
  b[6] = '\3';
  SetStdout(a, b);
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail, "byte 6: expected 0x01, got 0x03");
}

TEST_F(OutputCompareTest, NumericWithinTolerancesMatches) {
  check_.compare = workloads::Compare::kNumeric;
  check_.relative_tolerance = 1e-3;
  check_.absolute_tolerance = 1e-9;
  // Whitespace may differ; numbers within 0.1 % of the reference match.
  SetStdout("x = 1000.0  y = 2\nok\n", "x =\t1000.9 y = 2.0\n\nok");
  EXPECT_EQ(Compare(), std::nullopt);
}

TEST_F(OutputCompareTest, NumericBeyondToleranceNamesTheToken) {
  check_.compare = workloads::Compare::kNumeric;
  check_.relative_tolerance = 1e-6;
  SetStdout("pi\n3.14159\n", "pi\n3.14160\n");
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->what, "stdout");
  EXPECT_EQ(m->detail,
            "line 2, token 2: expected '3.14159', got '3.14160' (difference "
            "1e-05 > tolerance 3.14159e-06)");
}

TEST_F(OutputCompareTest, NumericAbsoluteToleranceCoversValuesNearZero) {
  check_.compare = workloads::Compare::kNumeric;
  check_.relative_tolerance = 1e-6;
  check_.absolute_tolerance = 1e-3;
  SetStdout("0.0\n", "0.0004\n");
  EXPECT_EQ(Compare(), std::nullopt);
  SetStdout("0.0\n", "0.002\n");
  EXPECT_TRUE(Compare().has_value());
}

TEST_F(OutputCompareTest, NumericComparesWordsExactlyAndCountsTokens) {
  check_.compare = workloads::Compare::kNumeric;
  check_.relative_tolerance = 1;  // any number matches any number
  SetStdout("sum 1\n", "total 1\n");
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail, "line 1, token 1: expected 'sum', got 'total'");
  SetStdout("1 2 3\n", "1 2\n");
  m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail,
            "line 1, token 3: expected '3', got the end of the output");
  // "nan" is a word: equal to itself, never to a number.
  SetStdout("nan inf\n", "nan inf\n");
  EXPECT_EQ(Compare(), std::nullopt);
  SetStdout("nan\n", "1\n");
  EXPECT_TRUE(Compare().has_value());
}

// Numbers inside a token (key=value, CSV, units) were compared as text:
// a float within the tolerance read as a miscompile.
TEST_F(OutputCompareTest, NumericComparesTheNumbersInsideATokenToo) {
  check_.compare = workloads::Compare::kNumeric;
  check_.relative_tolerance = 1e-3;
  SetStdout("v0=67.2182083 a,1.5,-2e3 12.5% x=-3.25\n",
            "v0=67.2431717 a,1.5001,-2.0001e3 12.501% x=-3.2501\n");
  EXPECT_EQ(Compare(), std::nullopt);
  // Only float literals take the tolerance: integers (checksums, counters,
  // IDs), hex, identifiers, dates and versions inside a token are text (the
  // review: a changed crc=0x1a2b3c4d passed as equal).
  for (const auto& [reference, candidate] :
       std::vector<std::pair<std::string, std::string>>{
           {"crc=0x1a2b3c4d", "crc=0x1a2b3c4e"},
           {"count=100000", "count=100001"},
           {"user1000", "user1001"},
           {"sha=ab123456789012cd", "sha=ab123456789013cd"},
           {"date=2023-01-05", "date=2023-1-5"},
           {"v=1.2.3", "v=1.2.4"},
           {"id:12345678901234567890", "id:12345678901234567891"},
           {"x.5", "x0.5"},
           // Whole tokens too: hex is not a number, nor a 20-digit ID.
           {"0x1a2b3c4d", "0x1a2b3c4e"},
           {"12345678901234567890", "12345678901234567891"}}) {
    SetStdout(reference + "\n", candidate + "\n");
    EXPECT_TRUE(Compare().has_value()) << reference << " vs " << candidate;
  }
  // Units, a sentence's full stop, %.17e's 18 printed digits.
  for (const auto& [reference, candidate] :
       std::vector<std::pair<std::string, std::string>>{
           {"0.5s", "0.50001s"},
           {"x=2.5.", "x=2.50001."},
           {"1.23456789012345670e+00", "1.23456789012345671e+00"}}) {
    SetStdout(reference + "\n", candidate + "\n");
    EXPECT_EQ(Compare(), std::nullopt) << reference << " vs " << candidate;
  }
  // A long token is walked, not copied: a 4 MB CSV row keeps its tolerance.
  std::string row, near;
  for (int i = 0; i < 400000; ++i) {
    row += "1.5,";
    near += "1.5001,";
  }
  SetStdout(row + "\n", near + "\n");
  EXPECT_EQ(Compare(), std::nullopt);
  SetStdout("v0=67.2\n", "v0=68.2\n");
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail,
            "line 1, token 1: expected 'v0=67.2', got 'v0=68.2' (a number in "
            "it differs by 1 > tolerance 0.0672)");
  // The text around the numbers must be the same.
  SetStdout("v0=1\n", "w0=1\n");
  EXPECT_TRUE(Compare().has_value());
  SetStdout("1,2\n", "1;2\n");
  EXPECT_TRUE(Compare().has_value());
  SetStdout("1,2\n", "1,2,3\n");
  EXPECT_TRUE(Compare().has_value());
}

TEST_F(OutputCompareTest, NumericInfinitiesAndOutOfRangeLiteralsAreWords) {
  check_.compare = workloads::Compare::kNumeric;
  check_.relative_tolerance = 1e-9;
  // An infinite expected value would scale the tolerance to infinity.
  SetStdout("inf\n", "5\n");
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail, "line 1, token 1: expected 'inf', got '5'");
  SetStdout("inf\n", "-inf\n");
  EXPECT_TRUE(Compare().has_value());
  // Two literals beyond double's range read as the same infinity.
  SetStdout("2e999\n", "1e999\n");
  EXPECT_TRUE(Compare().has_value());
  SetStdout("2e-999\n", "1e-999\n");
  EXPECT_TRUE(Compare().has_value());
  SetStdout("1e999 inf\n", "1e999 inf\n");
  EXPECT_EQ(Compare(), std::nullopt);
}

TEST_F(OutputCompareTest, RunsAreNamedAsTheCallerSays) {
  SetStdout("same\n", "same\n");
  candidate_.timed_out = true;
  std::optional<Mismatch> m = Compare({"baseline", "-O0 reference"});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail, "the -O0 reference run timed out");
}

TEST_F(OutputCompareTest, ExitStatusMustEqualTheChecksForBothRuns) {
  SetStdout("same\n", "same\n");
  candidate_.exit_status = 139;
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->what, "exit_status");
  EXPECT_EQ(m->detail,
            "the candidate run exited with 139 (128 + signal 11), expected 0");
  check_.exit_status = 139;  // now the reference is the one off
  m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail,
            "the reference run exited with 0, expected 139 (128 + signal 11)");
}

// A check expecting 139 (a shell's report of a crashed child) accepted a
// run the kernel killed with SIGSEGV: a signal is never an expected exit.
TEST_F(OutputCompareTest, ARunKilledByASignalNeverMatches) {
  SetStdout("same\n", "same\n");
  check_.exit_status = 139;
  reference_.exit_status = 139;  // the shell's exit code: matches
  candidate_.exit_status = 139;
  candidate_.term_signal = 11;  // killed itself
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->what, "exit_status");
  EXPECT_EQ(m->detail,
            "the candidate run was killed by signal 11, expected exit status "
            "139 (128 + signal 11)");
  candidate_.term_signal = 0;
  EXPECT_FALSE(Compare().has_value());
}

TEST_F(OutputCompareTest, ATimedOutRunNeverMatches) {
  SetStdout("same\n", "same\n");
  candidate_.timed_out = true;
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->what, "timed_out");
  EXPECT_EQ(m->detail, "the candidate run timed out");
}

TEST_F(OutputCompareTest, DeclaredFilesAreComparedAndMustBeWritten) {
  check_.compare_stdout = false;
  check_.files = {"out.txt", "out.bin"};
  reference_.files["out.txt"] = Write("ref.txt", "a\n");
  candidate_.files["out.txt"] = Write("cand.txt", "a\n");
  reference_.files["out.bin"] = Write("ref.bin", "0123");
  candidate_.files["out.bin"] = Write("cand.bin", "0124");
  std::optional<Mismatch> m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->what, "file:out.bin");
  EXPECT_EQ(m->detail, "line 1: expected '0123', got '0124'");

  candidate_.files["out.bin"] = "";
  m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail, "the candidate run did not write it");
  candidate_.files.erase("out.bin");
  reference_.files.erase("out.bin");
  m = Compare();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->detail, "neither run wrote it");
}

TEST_F(OutputCompareTest, AnUnreadableFileIsAnErrorNamingIt) {
  reference_.stdout_path = Write("ref.out", "x\n");
  candidate_.stdout_path = dir_ + "/missing.out";
  auto result = CompareOutputs(reference_, candidate_, check_);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(result.status().message().find("the candidate run's stdout"),
            std::string::npos)
      << result.status();
  EXPECT_NE(result.status().message().find(candidate_.stdout_path),
            std::string::npos);

  candidate_.stdout_path = "";
  result = CompareOutputs(reference_, candidate_, check_);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("no stdout_path"),
            std::string::npos);
}

}  // namespace
}  // namespace phaseloop::correctness
