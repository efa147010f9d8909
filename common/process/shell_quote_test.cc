#include "common/process/shell_quote.h"

#include <array>
#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace phaseloop::process {
namespace {

// What sh makes of `word`, echoed back.
std::string ThroughSh(const std::string& word) {
  const std::string command = "printf '%s' " + word;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "<popen failed>";
  std::string out;
  std::array<char, 256> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    out.append(buffer.data(), n);
  }
  ::pclose(pipe);
  return out;
}

TEST(ShellQuoteTest, ShReadsBackWhatWasQuoted) {
  for (const std::string s :
       {"plain", "two words", "it's", "'", "$HOME `x` \"y\" \\z", "a*b?[c]",
        "-Wl,-Map,it's a map.txt", ""}) {
    EXPECT_EQ(ThroughSh(ShellQuote(s)), s) << s;
    EXPECT_EQ(ThroughSh(ShellWord(s)), s) << s;
  }
}

TEST(ShellQuoteTest, WordsShTakesLiterallyStayBare) {
  EXPECT_EQ(ShellWord("-fuse-ld=/usr/bin/ld.lld-16"),
            "-fuse-ld=/usr/bin/ld.lld-16");
  EXPECT_EQ(ShellWord("-flto -g"), "'-flto -g'");
  EXPECT_EQ(ShellWord(""), "''");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
}

}  // namespace
}  // namespace phaseloop::process
