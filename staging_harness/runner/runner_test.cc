#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "staging_harness/runner/runner_test_util.h"
#include "staging_harness/runner/workload_build.h"
#include "staging_harness/runner/workload_inputs.h"
#include "staging_harness/runner/workload_runs.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::runner {
namespace {
namespace fs = std::filesystem;

// The decision of the build's one compile (the link is a pass-through).
const v1::Decision* Compiled(const BuiltVariant& built) {
  for (const v1::Decision& d : built.decisions) {
    if (d.outcome() == v1::OPTIMIZED) return &d;
  }
  return nullptr;
}

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<workloads::Workload> loaded = ExampleWorkload();
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    workload_ = *loaded;
    absl::StatusOr<Compilers> compilers = RunfilesCompilers();
    ASSERT_TRUE(compilers.ok()) << compilers.status();
    compilers_ = *compilers;
    dir_ = testing::MakeTempDir();
  }

  absl::StatusOr<BuiltVariant> Build(const std::string& name,
                                     const std::string& policy) {
    Variant variant;
    variant.name = name;
    variant.policy = policy;
    return BuildVariant(workload_, workload_.source_dir, compilers_, variant,
                        dir_ + "/build-" + name, log_);
  }

  workloads::Workload workload_;
  Compilers compilers_;
  std::string dir_;
  std::ostringstream log_;
};

TEST_F(RunnerTest, FindsTheWrapperAndItsCxxBesideIt) {
  EXPECT_TRUE(fs::path(compilers_.cc).is_absolute());
  EXPECT_EQ(fs::path(compilers_.cxx).filename(), "phaseloop-c++");
  absl::StatusOr<Compilers> missing = FindCompilers(dir_ + "/no-such-cc", "");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("--cc"), std::string::npos);
}

TEST_F(RunnerTest, GeneratedInputsAreTheSameBytesForTheSameSeed) {
  absl::StatusOr<PreparedInputs> first =
      PrepareInputs(workload_, workload_.source_dir, dir_ + "/in1", log_);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<PreparedInputs> second =
      PrepareInputs(workload_, workload_.source_dir, dir_ + "/in2", log_);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->files.size(), 2u);
  EXPECT_EQ(first->hash, second->hash);
  EXPECT_GT(fs::file_size(dir_ + "/in1/generated.txt"), 100000u);

  workloads::Workload reseeded = workload_;
  reseeded.inputs[1].seed = 2;
  absl::StatusOr<PreparedInputs> other =
      PrepareInputs(reseeded, workload_.source_dir, dir_ + "/in3", log_);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(other->hash, first->hash);

  // A generator whose bytes are not its seed's alone is refused, named.
  workloads::Workload unseeded = workload_;
  unseeded.inputs[1].generate = "date +%N > \"$OUTPUT\"";
  absl::StatusOr<PreparedInputs> varying =
      PrepareInputs(unseeded, workload_.source_dir, dir_ + "/in4", log_);
  ASSERT_FALSE(varying.ok());
  EXPECT_EQ(varying.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(varying.status().message().find(
                "inputs[1] (generated.txt): the generator is not "
                "deterministic: two runs with SEED="),
            std::string::npos)
      << varying.status();

  // A run that writes into its inputs is caught.
  EXPECT_TRUE(InputsUnchanged(*first, dir_ + "/in1", "run").ok());
  std::ofstream(dir_ + "/in1/generated.txt", std::ios::app) << "more";
  EXPECT_EQ(InputsUnchanged(*first, dir_ + "/in1", "the run").code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(RunnerTest, BuildsThroughTheWrapperWithThePolicyAndReadsItsDecisions) {
  absl::StatusOr<BuiltVariant> a = Build("a", "baseline");
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<BuiltVariant> b = Build("b", "baseline");
  ASSERT_TRUE(b.ok()) << b.status();
  // Same policy, same program; each build has its own id.
  EXPECT_EQ(a->artifacts_hash, b->artifacts_hash);
  EXPECT_NE(a->build_id, b->build_id);
  const v1::Decision* compiled = Compiled(*a);
  ASSERT_NE(compiled, nullptr);
  EXPECT_EQ(a->decisions.size(), 2u);  // wordfreq.c, then the link
  EXPECT_EQ(compiled->build_id(), a->build_id);
  EXPECT_EQ(compiled->pipeline(), "default<O3>");
  EXPECT_EQ(compiled->opt_level(), "O3");
  EXPECT_TRUE(fs::is_regular_file(a->artifacts_dir + "/wordfreq"));

  absl::StatusOr<BuiltVariant> other = Build("o1", "fixed:default<O1>");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(other->artifacts_hash, a->artifacts_hash);
  ASSERT_NE(Compiled(*other), nullptr);
  EXPECT_EQ(Compiled(*other)->pipeline(), "default<O1>");
  EXPECT_EQ(Compiled(*other)->module_hash(), compiled->module_hash());
}

// The build runs in its scratch copy: a work directory given relative to
// the caller's (`search --work-dir scratch`) put the decision spool relative
// to the copy, and every decision was lost.
TEST_F(RunnerTest, ARelativeWorkDirectoryKeepsTheDecisions) {
  const fs::path before = fs::current_path();
  const std::string source = fs::absolute(workload_.source_dir).string();
  fs::current_path(dir_);
  Variant variant;
  variant.name = "relative";
  variant.policy = "baseline";
  absl::StatusOr<BuiltVariant> built = BuildVariant(
      workload_, source, compilers_, variant, "scratch/relative", log_);
  fs::current_path(before);
  ASSERT_TRUE(built.ok()) << built.status() << log_.str();
  EXPECT_EQ(built->decisions.size(), 2u);
  ASSERT_NE(Compiled(*built), nullptr);
  EXPECT_EQ(Compiled(*built)->pipeline(), "default<O3>");
  EXPECT_TRUE(fs::path(built->artifacts_dir).is_absolute());
  EXPECT_TRUE(fs::is_regular_file(built->artifacts_dir + "/wordfreq"));
}

// Builds sharing the wrapper's object cache: a variant that changes one
// unit's pipeline compiles that unit only, and its program is the one an
// uncached build gives.
TEST_F(RunnerTest, BuildsSharingTheObjectCacheRecompileOnlyWhatChanged) {
  absl::StatusOr<workloads::Workload> two = TwoUnitExampleWorkload(dir_);
  ASSERT_TRUE(two.ok()) << two.status();
  auto build = [&](const std::string& name, const std::string& policy,
                   const std::string& cache) {
    Variant variant;
    variant.name = name;
    variant.policy = policy;
    variant.object_cache_dir = cache;
    return BuildVariant(*two, two->source_dir, compilers_, variant,
                        dir_ + "/build-" + name, log_);
  };
  const std::string cache = dir_ + "/object-cache";
  absl::StatusOr<BuiltVariant> base = build("base", "baseline", cache);
  ASSERT_TRUE(base.ok()) << base.status() << log_.str();
  EXPECT_EQ(base->objects_compiled, 2);
  EXPECT_EQ(base->objects_reused, 0);
  std::string wordfreq_hash;
  for (const v1::Decision& d : base->decisions) {
    if (d.source() == "wordfreq.c") wordfreq_hash = d.module_hash();
  }
  ASSERT_EQ(wordfreq_hash.size(), 32u);
  const std::string table = dir_ + "/one.table";
  std::ofstream(table) << "# phaseloop policy table v1\n"
                       << wordfreq_hash << "\tdefault<O1>\n";
  const std::string policy = "table:" + table;

  absl::StatusOr<BuiltVariant> cached = build("cached", policy, cache);
  ASSERT_TRUE(cached.ok()) << cached.status() << log_.str();
  EXPECT_EQ(cached->objects_reused, 1);  // extra.c
  EXPECT_EQ(cached->objects_compiled, 1);
  for (const v1::Decision& d : cached->decisions) {
    if (d.source() == "extra.c") {
      EXPECT_EQ(d.object_cache(), "hit");
    }
    if (d.source() == "wordfreq.c") {
      EXPECT_EQ(d.object_cache(), "miss");
      EXPECT_EQ(d.pipeline(), "default<O1>");
    }
  }
  absl::StatusOr<BuiltVariant> uncached = build("uncached", policy, "");
  ASSERT_TRUE(uncached.ok()) << uncached.status() << log_.str();
  EXPECT_EQ(uncached->objects_reused, 0);
  EXPECT_EQ(uncached->objects_compiled, 2);
  EXPECT_EQ(cached->artifacts_hash, uncached->artifacts_hash);
  EXPECT_NE(cached->artifacts_hash, base->artifacts_hash);
  // Again: everything from the cache, the same program.
  absl::StatusOr<BuiltVariant> again = build("again", policy, cache);
  ASSERT_TRUE(again.ok()) << again.status() << log_.str();
  EXPECT_EQ(again->objects_reused, 2);
  EXPECT_EQ(again->artifacts_hash, uncached->artifacts_hash);
}

// Link flags reach the link command (which here also gets CFLAGS, but a
// build need not pass them) and no compile command: the map file is
// written, clang warns of no unused argument, and the program is the one a
// build without them links. A word with a space and a quote stays one word,
// and so does a wrapper path with them.
TEST_F(RunnerTest, LinkFlagsReachEveryLinkAndNoCompile) {
  absl::StatusOr<workloads::Workload> two = TwoUnitExampleWorkload(dir_);
  ASSERT_TRUE(two.ok()) << two.status();
  // extra.c compiled through a response file and a header precompiled,
  // both under -Werror: neither links, so neither may get the flags.
  std::ofstream(two->source_dir + "/extra.h")
      << "int extra_checksum(const char *s);\n";
  // The link also names a header, as -include's argument: still a link.
  std::ofstream(two->source_dir + "/Makefile")
      << "wordfreq: wordfreq.o extra.o extra.h.pch other.h.pch\n"
         "\t$(CC) $(CFLAGS) -include extra.h -o $@ wordfreq.o extra.o\n"
         "wordfreq.o: wordfreq.c\n\t$(CC) $(CFLAGS) -c wordfreq.c\n"
         "extra.o: extra.c\n\tprintf '%s\\n' -c extra.c > extra.rsp\n"
         "\t$(CC) $(CFLAGS) -Werror @extra.rsp\n"
         "extra.h.pch: extra.h\n"
         "\t$(CC) $(CFLAGS) -Werror -x c-header extra.h -o extra.h.pch\n"
         "other.h.pch: extra.h\n"
         "\t$(CC) $(CFLAGS) -Werror extra.h -o other.h.pch\n";
  const std::string odd = dir_ + "/it's the wrapper";
  fs::create_directories(odd);
  fs::create_symlink(fs::absolute(compilers_.cc), odd + "/phaseloop-cc");
  fs::create_symlink(fs::absolute(compilers_.cxx), odd + "/phaseloop-c++");
  auto build = [&](const std::string& name, std::vector<std::string> flags) {
    Variant variant;
    variant.name = name;
    variant.policy = "baseline";
    variant.link_flags = std::move(flags);
    const Compilers compilers =
        variant.link_flags.empty()
            ? compilers_
            : Compilers{odd + "/phaseloop-cc", odd + "/phaseloop-c++"};
    return BuildVariant(*two, two->source_dir, compilers, variant,
                        dir_ + "/build-" + name, log_);
  };
  absl::StatusOr<BuiltVariant> plain = build("plain", {});
  ASSERT_TRUE(plain.ok()) << plain.status() << log_.str();
  absl::StatusOr<BuiltVariant> mapped =
      build("mapped", {"-Wl,-Map,it's a map.txt", "-Wl,--no-undefined"});
  ASSERT_TRUE(mapped.ok()) << mapped.status() << log_.str();
  EXPECT_TRUE(fs::is_regular_file(mapped->build_dir + "/it's a map.txt"));
  EXPECT_TRUE(fs::is_regular_file(mapped->build_dir + "/extra.h.pch"));
  EXPECT_TRUE(fs::is_regular_file(mapped->build_dir + "/other.h.pch"));
  EXPECT_FALSE(fs::exists(plain->build_dir + "/it's a map.txt"));
  const std::string build_log = testing::ReadFileOrEmpty(mapped->log_path);
  EXPECT_EQ(build_log.find("unused"), std::string::npos) << build_log;
  EXPECT_EQ(mapped->artifacts_hash, plain->artifacts_hash);
  EXPECT_EQ(mapped->objects_compiled, 2);
}

TEST_F(RunnerTest, AFailedBuildNamesTheWorkloadTheVariantAndTheLog) {
  workload_.build.command = "echo 'wordfreq.c:1: error: no' >&2; exit 3";
  absl::StatusOr<BuiltVariant> failed = Build("broken", "baseline");
  ASSERT_EQ(failed.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(failed.status().message());
  EXPECT_NE(message.find("example.yaml"), std::string::npos) << message;
  EXPECT_NE(message.find("'broken'"), std::string::npos) << message;
  EXPECT_NE(message.find("exited 3"), std::string::npos) << message;
  EXPECT_NE(message.find("error: no"), std::string::npos) << message;
  EXPECT_NE(message.find("build.log"), std::string::npos) << message;

  workload_.build.command = "true";
  failed = Build("no-artifact", "baseline");
  ASSERT_EQ(failed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(failed.status().message().find("no artifact 'wordfreq'"),
            std::string::npos)
      << failed.status();
}

TEST_F(RunnerTest, RunsEveryCommandMeasuredAndKeepsItsOutputs) {
  absl::StatusOr<BuiltVariant> built = Build("a", "baseline");
  ASSERT_TRUE(built.ok()) << built.status();
  absl::StatusOr<PreparedInputs> inputs =
      PrepareInputs(workload_, workload_.source_dir, dir_ + "/inputs", log_);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  const std::string run_dir = dir_ + "/run";
  ASSERT_TRUE(PrepareRunDirectory(workload_, *built, *inputs, run_dir).ok());
  PassOptions options;
  options.keep_outputs_dir = dir_ + "/kept";
  absl::StatusOr<std::vector<CommandRun>> pass =
      RunPass(workload_, run_dir, options);
  ASSERT_TRUE(pass.ok()) << pass.status();
  ASSERT_EQ(pass->size(), 2u);
  EXPECT_EQ((*pass)[0].name, "small");
  for (const CommandRun& run : *pass) {
    EXPECT_EQ(run.outputs.exit_status, 0);
    EXPECT_FALSE(run.outputs.timed_out);
    EXPECT_GT(run.measurement.wall_s, 0);
    EXPECT_FALSE(testing::ReadFileOrEmpty(run.outputs.stdout_path).empty());
    EXPECT_EQ(run.outputs.stdout_path.rfind(dir_ + "/kept/", 0), 0u);
  }
  EXPECT_NE((*pass)[0].outputs.stdout_path, (*pass)[1].outputs.stdout_path);
  EXPECT_TRUE(InputsUnchanged(*inputs, run_dir, "the pass").ok());

  // A command over its time limit is a result, not an error.
  workload_.runs[0].command = "sleep 5";
  workload_.runs[0].timeout_s = 0.2;
  pass = RunPass(workload_, run_dir, PassOptions{});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE((*pass)[0].outputs.timed_out);
  PassTotals totals = Totals(*pass);
  EXPECT_GT(totals.wall_s, 0.2);
}

TEST_F(RunnerTest, TheScratchCopyKeepsModificationTimesSoMakeRebuildsNothing) {
  // A generated file newer than its source, as a release tarball ships a
  // yacc parser: make must not try to regenerate it in the copy.
  const std::string tree = dir_ + "/tree";
  fs::create_directories(tree + "/sub");
  std::ofstream(tree + "/sub/parse.y") << "grammar\n";
  std::ofstream(tree + "/sub/parse.c") << "int main(void) { return 0; }\n";
  fs::last_write_time(
      tree + "/sub/parse.y",
      fs::last_write_time(tree + "/sub/parse.c") - std::chrono::hours(24));
  std::ofstream(tree + "/Makefile")
      << "prog: sub/parse.c\n\t$(CC) $(CFLAGS) -c sub/parse.c -o parse.o"
         " && $(CC) -o prog parse.o\n"
         "sub/parse.c: sub/parse.y\n\tfalse regenerating sub/parse.c\n";
  workloads::Workload workload = workload_;
  workload.build.command = "make prog";
  workload.build.artifacts = {"prog"};
  Variant variant;
  variant.name = "times";
  variant.policy = "baseline";
  absl::StatusOr<BuiltVariant> built = BuildVariant(
      workload, tree, compilers_, variant, dir_ + "/build-times", log_);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(fs::last_write_time(built->build_dir + "/sub/parse.y"),
            fs::last_write_time(tree + "/sub/parse.y"));
}

TEST_F(RunnerTest, LinksOutOfTheTreeAreCopiedAsFilesLinksWithinItAsLinks) {
  const std::string tree = dir_ + "/linked";
  fs::create_directories(tree);
  std::ofstream(dir_ + "/outside.c") << "int x;\n";
  std::ofstream(tree + "/inside.c") << "int y;\n";
  fs::create_symlink(dir_ + "/outside.c", tree + "/out.c");
  fs::create_symlink("inside.c", tree + "/in.c");
  workloads::Workload workload = workload_;
  workload.build.command = "echo changed > out.c && touch prog";
  workload.build.artifacts = {"prog"};
  Variant variant;
  variant.name = "links";
  variant.policy = "baseline";
  absl::StatusOr<BuiltVariant> built = BuildVariant(
      workload, tree, compilers_, variant, dir_ + "/build-links", log_);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_FALSE(fs::is_symlink(built->build_dir + "/out.c"));
  EXPECT_TRUE(fs::is_symlink(built->build_dir + "/in.c"));
  // The build wrote into its copy, not through a link to the original.
  EXPECT_EQ(testing::ReadFileOrEmpty(dir_ + "/outside.c"), "int x;\n");
}

}  // namespace
}  // namespace phaseloop::runner
