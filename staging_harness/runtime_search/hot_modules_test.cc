// Where the time goes: perf's samples mapped to translation units, on a real
// two-unit Makefile build through the wrapper, and the pure parts (perf
// script parsing, attribution, the hot set) on hand-written input.
#include "staging_harness/runtime_search/hot_modules.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::runtime_search {
namespace {
namespace fs = std::filesystem;

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(ParsePerfScriptTest, CountsTheProgramsSamplesBySymbol) {
  const std::string text =
      "    5652421cc186 spin (/runs/r/prog)\n"
      "    5652421cc1cd spin (/runs/r/prog)\n"
      "    5652421cc1a0 main+0x10 (/runs/r/prog)\n"
      "    7f00000001 [unknown] (/runs/r/prog)\n"
      "    7f00000002 __memcpy_avx (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
      "    7f00000003 spin (/runs/r2/prog)\n";
  SymbolSamples samples = ParsePerfScript(text, "/runs/r");
  EXPECT_EQ(samples.total, 6);
  EXPECT_EQ(samples.program, 4);  // not libc, not the sibling /runs/r2
  EXPECT_EQ(samples.unknown, 1);
  EXPECT_EQ(samples.by_symbol["spin"], 2);
  EXPECT_EQ(samples.by_symbol["main"], 1);
}

TEST(AttributeTest, SharedSymbolsAreSplitAndModulesRankedByShare) {
  SymbolSamples samples;
  samples.total = samples.program = 100;
  samples.by_symbol = {{"a", 60}, {"helper", 20}, {"b", 10}, {"libc", 10}};
  std::vector<UnitSymbols> units = {
      {"hash_a", "a.c", "a.o", {"a", "helper"}},
      {"hash_b", "b.c", "b.o", {"b", "helper"}},
  };
  Profile profile = Attribute(samples, units);
  EXPECT_EQ(profile.attributed, 90);
  EXPECT_EQ(profile.ambiguous_symbols, 1);
  ASSERT_EQ(profile.modules.size(), 2u);
  EXPECT_EQ(profile.modules[0].module_hash, "hash_a");
  EXPECT_DOUBLE_EQ(profile.modules[0].samples, 70);
  EXPECT_DOUBLE_EQ(profile.modules[1].samples, 20);
  EXPECT_NEAR(profile.modules[0].share, 70.0 / 90, 1e-12);
  EXPECT_EQ(profile.modules[0].top_symbols[0].first, "a");

  EXPECT_EQ(HotSet(profile, 0.5, 3).size(), 1u);
  EXPECT_EQ(HotSet(profile, 0.9, 3).size(), 2u);
  EXPECT_EQ(HotSet(profile, 0.9, 1).size(), 1u);
}

// hot.c holds the loop, cold.c main and a little start-up work.
TEST(ProfileBaselineTest, MapsSamplesToTheTranslationUnitThatHoldsTheLoop) {
  const std::string dir = testing::MakeTempDir();
  const std::string src = dir + "/src";
  fs::create_directories(src);
  Write(src + "/Makefile",
        "prog: hot.o cold.o\n\t$(CC) $(CFLAGS) -o $@ hot.o cold.o\n"
        "hot.o: hot.c\n\t$(CC) $(CFLAGS) -c hot.c\n"
        "cold.o: cold.c\n\t$(CC) $(CFLAGS) -c cold.c\n");
  Write(src + "/hot.c",
        "unsigned long spin(unsigned long n) {\n"
        "  unsigned long h = 1;\n"
        "  for (unsigned long i = 0; i < n; i++) h = h * 6364136223846793005u"
        " + (i ^ (h >> 29));\n"
        "  return h;\n}\n");
  Write(src + "/cold.c",
        "#include <stdio.h>\n#include <stdlib.h>\n"
        "unsigned long spin(unsigned long n);\n"
        "int main(int argc, char **argv) {\n"
        "  unsigned long n = strtoul(argv[1], 0, 10);\n"
        "  printf(\"%lu\\n\", spin(n));\n  return 0;\n}\n");
  Write(dir + "/w.yaml",
        "name: two_units\nsplit: train\nsource: src\n"
        "build:\n  kind: make\n  command: make prog\n  artifacts: [prog]\n"
        "run:\n  - name: spin\n    command: ./prog 300000000\n"
        "    timeout_s: 60\n"
        "check:\n  exit_status: 0\n  stdout: true\n");
  absl::StatusOr<workloads::Workload> workload =
      workloads::LoadWorkload(dir + "/w.yaml");
  ASSERT_TRUE(workload.ok()) << workload.status();
  absl::StatusOr<runner::Compilers> compilers = runner::FindCompilers(
      fs::absolute("compiler_driver/cc_wrapper/phaseloop-cc"), "");
  ASSERT_TRUE(compilers.ok()) << compilers.status();
  std::ostringstream log;
  runner::Variant variant;
  variant.name = "baseline";
  variant.policy = "baseline";
  absl::StatusOr<runner::BuiltVariant> built = runner::BuildVariant(
      *workload, src, *compilers, variant, dir + "/build", log);
  ASSERT_TRUE(built.ok()) << built.status() << log.str();
  absl::StatusOr<runner::PreparedInputs> inputs =
      runner::PrepareInputs(*workload, src, dir + "/inputs", log);
  ASSERT_TRUE(inputs.ok()) << inputs.status();

  std::vector<std::string> notes;
  absl::StatusOr<std::vector<UnitSymbols>> units =
      UnitsOf(*built, "llvm-nm-16", &notes);
  ASSERT_TRUE(units.ok()) << units.status();
  ASSERT_EQ(units->size(), 2u) << (notes.empty() ? "" : notes[0]);

  ProfileOptions options;
  options.work_dir = dir + "/profile";
  absl::StatusOr<Profile> profile =
      ProfileBaseline(*workload, *built, *inputs, options, log);
  ASSERT_TRUE(profile.ok()) << profile.status() << log.str();
  ASSERT_FALSE(profile->modules.empty());
  const HotModule& hottest = profile->modules[0];
  EXPECT_EQ(hottest.source, "hot.c");
  EXPECT_GT(hottest.share, 0.9);
  EXPECT_EQ(hottest.top_symbols[0].first, "spin");
  std::string hot_hash;
  for (const v1::Decision& d : built->decisions) {
    if (d.source() == "hot.c") hot_hash = d.module_hash();
  }
  EXPECT_EQ(hottest.module_hash, hot_hash);
  EXPECT_GT(profile->attributed, 100);  // ~0.3 s at 2 kHz
  EXPECT_EQ(HotSet(*profile, 0.9, 3).size(), 1u);
}

}  // namespace
}  // namespace phaseloop::runtime_search
