#include "compiler_driver/cc_wrapper/outcome_cache.h"

#include <gtest/gtest.h>
#include <utime.h>

#include <filesystem>
#include <fstream>

#include "common/testing/test_util.h"

namespace phaseloop::cc_wrapper {
namespace {

namespace fs = std::filesystem;

PolicyDecision Measured() {
  PolicyDecision d;
  d.pipeline = "default<Oz>,codegen<machine-outliner>";
  d.note = "topk: mo alloc_size 900 vs -Oz 1000 (2 measured of 2)";
  d.oz_alloc_size = 1000;
  d.measured_pipelines = {{"default<Oz>", 1000},
                          {"default<Oz>,codegen<machine-outliner>", 900}};
  return d;
}

TEST(OutcomeCacheTest, EntriesRoundTripAndBadOnesAreRefused) {
  const std::string key(32, 'a');
  const std::string bytes = SerializeOutcome(key, Measured());
  absl::StatusOr<PolicyDecision> back = ParseOutcome(key, bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->pipeline, Measured().pipeline);
  EXPECT_EQ(back->note, Measured().note);
  EXPECT_EQ(back->oz_alloc_size, 1000);
  EXPECT_EQ(back->measured_pipelines, Measured().measured_pipelines);
  EXPECT_FALSE(ParseOutcome(std::string(32, 'b'), bytes).ok());  // other key
  EXPECT_FALSE(ParseOutcome(key, bytes.substr(0, bytes.size() - 3)).ok());
  EXPECT_FALSE(ParseOutcome(key, bytes + "x").ok());
  EXPECT_FALSE(ParseOutcome(key, "phaseloop-object 1\n").ok());
  // An entry that contradicts itself was changed after it was written: it
  // would run a pipeline nothing measured (review: edited to default<O3>).
  PolicyDecision edited = Measured();
  edited.pipeline = "default<O3>";
  EXPECT_FALSE(ParseOutcome(key, SerializeOutcome(key, edited)).ok());
  edited = Measured();
  edited.measured_pipelines[1].second = 1100;  // the choice larger than -Oz
  EXPECT_FALSE(ParseOutcome(key, SerializeOutcome(key, edited)).ok());
  // -Oz kept although a candidate measured smaller is an entry topk writes
  // (its whole run failed or came out larger).
  edited = Measured();
  edited.pipeline = "default<Oz>";
  EXPECT_TRUE(ParseOutcome(key, SerializeOutcome(key, edited)).ok());
  edited = Measured();
  edited.oz_alloc_size = 999;
  EXPECT_FALSE(ParseOutcome(key, SerializeOutcome(key, edited)).ok());
  edited = Measured();
  std::swap(edited.measured_pipelines[0], edited.measured_pipelines[1]);
  EXPECT_FALSE(ParseOutcome(key, SerializeOutcome(key, edited)).ok());
  // -Oz kept unmeasured (over the budget) is an entry too; anything else
  // with nothing measured is not.
  PolicyDecision unmeasured;
  unmeasured.pipeline = "default<Oz>";
  EXPECT_TRUE(ParseOutcome(key, SerializeOutcome(key, unmeasured)).ok());
  unmeasured.pipeline = "default<Oz>,codegen<machine-outliner>";
  EXPECT_FALSE(ParseOutcome(key, SerializeOutcome(key, unmeasured)).ok());
}

TEST(OutcomeCacheTest, HitsOnlyForTheSameKey) {
  const std::string dir = testing::MakeTempDir();
  OutcomeCache cache(dir, std::string("opt:test"));
  OutcomeLookup miss = cache.Lookup("m1", "Oz", {}, "artifact v1 k=4");
  EXPECT_EQ(miss.outcome, "miss");
  ASSERT_FALSE(miss.key.empty());
  EXPECT_EQ(cache.Store(miss, Measured()), "");
  OutcomeLookup hit = cache.Lookup("m1", "Oz", {}, "artifact v1 k=4");
  EXPECT_EQ(hit.outcome, "hit");
  ASSERT_TRUE(hit.hit.has_value());
  EXPECT_EQ(hit.hit->pipeline, Measured().pipeline);
  // Anything that decides the choice is in the key.
  EXPECT_EQ(cache.Lookup("m2", "Oz", {}, "artifact v1 k=4").outcome, "miss");
  EXPECT_EQ(cache.Lookup("m1", "Os", {}, "artifact v1 k=4").outcome, "miss");
  EXPECT_EQ(cache.Lookup("m1", "Oz", {}, "artifact v1 k=2").outcome, "miss");
  codegen::CodegenSettings sections;
  sections.function_sections = true;
  EXPECT_EQ(cache.Lookup("m1", "Oz", sections, "artifact v1 k=4").outcome,
            "miss");
  OutcomeCache other_binary(dir, std::string("opt:other"));
  EXPECT_EQ(other_binary.Lookup("m1", "Oz", {}, "artifact v1 k=4").outcome,
            "miss");

  absl::StatusOr<OutcomeCacheStats> stats = ReadOutcomeCacheStats(dir);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->entries, 1);
  EXPECT_GT(stats->bytes, 0);
  ASSERT_TRUE(ClearOutcomeCache(dir).ok());
  EXPECT_EQ(ReadOutcomeCacheStats(dir)->entries, 0);
  EXPECT_EQ(cache.Lookup("m1", "Oz", {}, "artifact v1 k=4").outcome, "miss");
}

TEST(OutcomeCacheTest, ABadEntryIsAMissAndAnUnknownBinaryStoresNothing) {
  const std::string dir = testing::MakeTempDir();
  OutcomeCache cache(dir, std::string("opt:test"));
  OutcomeLookup miss = cache.Lookup("m", "Oz", {}, "s");
  fs::create_directories(fs::path(cache.EntryPath(miss.key)).parent_path());
  std::ofstream(cache.EntryPath(miss.key)) << "garbage";
  OutcomeLookup bad = cache.Lookup("m", "Oz", {}, "s");
  EXPECT_EQ(bad.outcome, "miss");
  EXPECT_NE(bad.note.find("bad entry"), std::string::npos) << bad.note;

  OutcomeCache unusable(dir, absl::NotFoundError("cannot stat exe"));
  OutcomeLookup none = unusable.Lookup("m", "Oz", {}, "s");
  EXPECT_TRUE(none.key.empty());
  EXPECT_NE(none.note.find("cannot stat exe"), std::string::npos);
  EXPECT_EQ(unusable.Store(none, Measured()), "");

  // A relative directory: each compile would resolve it in its own working
  // directory (cache folders in the source tree). Unused, said, nothing
  // made.
  OutcomeCache relative =
      OutcomeCache::ForRunningBinary("caches/outcomes", 1 << 20);
  OutcomeLookup unused = relative.Lookup("m", "Oz", {}, "s");
  EXPECT_TRUE(unused.key.empty());
  EXPECT_FALSE(unused.hit);
  EXPECT_NE(unused.note.find("'caches/outcomes' is a relative path"),
            std::string::npos)
      << unused.note;
  EXPECT_EQ(relative.Store(unused, Measured()), "");
  EXPECT_FALSE(fs::exists("caches"));
}

// Each subdirectory keeps max_bytes/256, the least recently used removed
// first, so the whole cache stays within max_bytes.
TEST(OutcomeCacheTest, StoresTrimTheOldestEntriesOfTheirSubdirectory) {
  const std::string dir = testing::MakeTempDir();
  const int64_t entry = static_cast<int64_t>(
      SerializeOutcome(std::string(32, '0'), Measured()).size());
  // Room for the new entry and one old file of the same size.
  OutcomeCache cache(dir, std::string("opt:test"), 256 * (2 * entry + 10));
  OutcomeLookup miss = cache.Lookup("m", "Oz", {}, "s");
  const fs::path subdir = fs::path(cache.EntryPath(miss.key)).parent_path();
  fs::create_directories(subdir);
  const std::string filler(entry, 'x');
  // Entries' names: 32 hex digits beginning with their subdirectory's two.
  const std::string sub = subdir.filename().string();
  const std::string older = sub + std::string(30, 'a');
  const std::string old = sub + std::string(30, 'b');
  for (const auto& [name, age] :
       std::vector<std::pair<std::string, int>>{{older, 200}, {old, 100}}) {
    std::ofstream((subdir / name).string()) << filler;
    struct utimbuf times;
    times.actime = times.modtime = time(nullptr) - age;
    ASSERT_EQ(utime((subdir / name).c_str(), &times), 0);
  }
  EXPECT_EQ(cache.Store(miss, Measured()), "");
  EXPECT_FALSE(fs::exists(subdir / older));
  EXPECT_TRUE(fs::exists(subdir / old));
  EXPECT_EQ(cache.Lookup("m", "Oz", {}, "s").outcome, "hit");
}

// A cap smaller than 256 entries left each subdirectory less room than one
// entry: every store evicted the entry it had just written ("0 choices",
// everything "measured and stored"). The newest is kept.
TEST(OutcomeCacheTest, ASmallCapKeepsTheEntryJustStored) {
  const std::string dir = testing::MakeTempDir();
  OutcomeCache cache(dir, std::string("opt:test"), /*max_bytes=*/1000);
  for (const char* module : {"m1", "m2", "m3"}) {
    EXPECT_EQ(cache.Store(cache.Lookup(module, "Oz", {}, "s"), Measured()), "");
    EXPECT_EQ(cache.Lookup(module, "Oz", {}, "s").outcome, "hit") << module;
  }
}

// A policy whose decision is cheap (no OutcomeSpec) is never cached.
class CountingPolicy : public PolicyRunner {
 public:
  explicit CountingPolicy(std::string spec) : spec_(std::move(spec)) {}
  const char* kind() const override { return "artifact"; }
  const std::string& version() const override { return version_; }
  std::string OutcomeSpec() const override { return spec_; }
  std::string Decide(const PolicyInput& input) const override {
    return DecideWithNote(input).pipeline;
  }
  PolicyDecision DecideWithNote(const PolicyInput&) const override {
    ++calls;
    return Measured();
  }
  bool MayChoose(const std::string& pipeline) const override {
    return pipeline != never_chooses;
  }
  mutable int calls = 0;
  std::string never_chooses;

 private:
  std::string spec_;
  std::string version_ = "v1";
};

TEST(OutcomeCacheTest, TheCachingPolicyMeasuresOncePerKey) {
  const std::string dir = testing::MakeTempDir();
  OutcomeCache cache(dir, std::string("opt:test"));
  CountingPolicy topk("artifact v1 mode=topk k=4");
  OutcomeCachingPolicy caching(topk, cache, {});
  PolicyInput input;
  input.module_hash = "m";
  input.opt_level = "Oz";
  PolicyDecision first = caching.DecideWithNote(input);
  EXPECT_EQ(first.outcome_cache, "miss");
  EXPECT_EQ(first.measured_pipelines.size(), 2u);
  // A miss is stored only when the compile says its object is written (a
  // compile that fell back to clang stores nothing): until then, a miss.
  EXPECT_EQ(caching.DecideWithNote(input).outcome_cache, "miss");
  EXPECT_EQ(topk.calls, 2);
  caching.StorePending();
  EXPECT_EQ(caching.StorePending(), "");  // nothing pending any more
  PolicyDecision second = caching.DecideWithNote(input);
  EXPECT_EQ(topk.calls, 2);
  EXPECT_EQ(second.outcome_cache, "hit");
  EXPECT_EQ(second.pipeline, first.pipeline);
  EXPECT_EQ(second.oz_alloc_size, first.oz_alloc_size);
  EXPECT_TRUE(second.measured_pipelines.empty());  // shipped once
  EXPECT_NE(second.note.find("outcome cache hit"), std::string::npos);

  CountingPolicy cheap("");
  OutcomeCachingPolicy not_cached(cheap, cache, {});
  not_cached.DecideWithNote(input);
  PolicyDecision again = not_cached.DecideWithNote(input);
  EXPECT_EQ(cheap.calls, 2);
  EXPECT_EQ(again.outcome_cache, "");
}

TEST(OutcomeCacheTest, AnEntryKeepingAPipelineThePolicyNeverChoosesIsAMiss) {
  // An entry consistent in itself (its pipeline among its measurements,
  // no larger than -Oz) under a policy whose candidates do not hold that
  // pipeline: edited on its way, or from another policy. Measured again,
  // and the policy's own choice replaces it.
  const std::string dir = testing::MakeTempDir();
  OutcomeCache cache(dir, std::string("opt:test"));
  CountingPolicy writer("artifact v1 mode=topk k=4");
  OutcomeCachingPolicy writing(writer, cache, {});
  PolicyInput input;
  input.module_hash = "m";
  input.opt_level = "Oz";
  writing.DecideWithNote(input);
  ASSERT_EQ(writing.StorePending(), "");
  ASSERT_EQ(writing.DecideWithNote(input).outcome_cache, "hit");

  CountingPolicy reader("artifact v1 mode=topk k=4");
  reader.never_chooses = Measured().pipeline;
  OutcomeCachingPolicy reading(reader, cache, {});
  PolicyDecision d = reading.DecideWithNote(input);
  EXPECT_EQ(reader.calls, 1);
  EXPECT_EQ(d.outcome_cache, "miss");
  EXPECT_NE(d.note.find("keeps a pipeline the policy never chooses"),
            std::string::npos)
      << d.note;
  EXPECT_FALSE(reading.MayChoose(Measured().pipeline));
  EXPECT_TRUE(reading.MayChoose("default<Oz>"));
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
