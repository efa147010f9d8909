#include "compiler_driver/cc_wrapper/object_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/policy.h"
#include "compiler_driver/cc_wrapper/tu_optimizer.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/testing/fixture_paths.h"

namespace phaseloop::cc_wrapper {
namespace {
namespace fs = std::filesystem;

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string SortingBitcode() {
  for (const std::string& path : testing::FixturePaths()) {
    if (path.find("sorting.c") == std::string::npos) continue;
    ir::FrontendOptions options;
    options.opt_level = ir::OptLevel::kO2;
    absl::StatusOr<std::string> bitcode = ir::CompileToBitcode(path, options);
    EXPECT_TRUE(bitcode.ok()) << bitcode.status();
    return bitcode.ok() ? *bitcode : "";
  }
  ADD_FAILURE() << "no fixture sorting.c";
  return "";
}

TEST(ObjectCacheKeyTest, EveryInputChangesTheKey) {
  const ObjectCacheKeyInput base{
      "phaseloop-cc-opt:abc", "0123", "O3", "default<O3>", {}};
  std::vector<ObjectCacheKeyInput> variants(10, base);
  variants[1].wrapper_identity = "phaseloop-cc-opt:abd";
  variants[2].module_hash = "0124";
  variants[3].opt_level = "O2";
  variants[4].pipeline = "default<O3>,codegen<machine-outliner>";
  variants[5].codegen.function_sections = true;
  variants[6].codegen.data_sections = true;
  variants[7].codegen.unique_section_names = false;
  variants[8].codegen.addrsig = false;
  variants[9].count_executed = true;  // an instrumented object
  std::set<std::string> keys;
  for (const ObjectCacheKeyInput& input : variants) {
    keys.insert(ObjectCacheKey(input));
  }
  EXPECT_EQ(keys.size(), variants.size());
  EXPECT_EQ(ObjectCacheKey(base), ObjectCacheKey(variants[0]));
  EXPECT_EQ(ObjectCacheKey(base).size(), 32u);
  // Fields are length-prefixed: moving a character from one to the next
  // is another key.
  ObjectCacheKeyInput shifted = base;
  shifted.module_hash = "0123O";
  shifted.opt_level = "3";
  EXPECT_NE(ObjectCacheKey(shifted), ObjectCacheKey(base));
}

TEST(WrapperIdentityTest, FollowsTheBinarysContentAndIsRemembered) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  const std::string exe = dir + "/phaseloop-cc-opt";
  const std::string memo = dir + "/identity";
  WriteFile(exe, "first build");
  absl::StatusOr<std::string> first = WrapperIdentity(exe, memo);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, WrapperIdentity(exe, "").value());  // the same unmemoised

  // The memo is what later calls read: a forged one is believed, which
  // shows the binary was not hashed again.
  ASSERT_EQ(std::distance(fs::directory_iterator(memo), {}), 1);
  const std::string memo_file = fs::directory_iterator(memo)->path().string();
  WriteFile(memo_file, std::string(32, 'a'));
  EXPECT_EQ(WrapperIdentity(exe, memo).value(),
            "phaseloop-cc-opt:" + std::string(32, 'a'));

  // A rebuilt binary (new bytes, new times) is a new identity.
  fs::remove(exe);
  WriteFile(exe, "second build");
  absl::StatusOr<std::string> second = WrapperIdentity(exe, memo);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(*second, *first);
  EXPECT_EQ(*second, WrapperIdentity(exe, "").value());

  EXPECT_FALSE(WrapperIdentity(dir + "/missing", memo).ok());
}

class ObjectCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bitcode_ = SortingBitcode();
    absl::StatusOr<std::unique_ptr<PolicyRunner>> policy =
        LoadPolicy("fixed:function(sroa,instcombine),default<O2>");
    ASSERT_TRUE(policy.ok()) << policy.status();
    policy_ = *std::move(policy);
    absl::StatusOr<TuResult> uncached =
        OptimizeTranslationUnit(bitcode_, "O2", {}, *policy_);
    ASSERT_TRUE(uncached.ok()) << uncached.status();
    uncached_ = *std::move(uncached);
  }

  absl::StatusOr<TuResult> Compile(const ObjectCache& cache) {
    return OptimizeTranslationUnit(bitcode_, "O2", {}, *policy_, false, &cache);
  }

  // The key the unit has in `cache`.
  std::string KeyIn(const ObjectCache& cache) {
    return cache
        .Lookup({"", uncached_.module_hash, "O2", uncached_.pipeline, {}})
        .key;
  }

  void ExpectSameAsUncached(const TuResult& r) {
    EXPECT_TRUE(r.object == uncached_.object) << "object bytes differ";
    EXPECT_EQ(r.module_hash, uncached_.module_hash);
    EXPECT_EQ(r.pipeline, uncached_.pipeline);
    EXPECT_EQ(r.ir_count_before, uncached_.ir_count_before);
    EXPECT_EQ(r.ir_count_after, uncached_.ir_count_after);
    EXPECT_EQ(r.text_size, uncached_.text_size);
    EXPECT_EQ(r.alloc_size, uncached_.alloc_size);
  }

  const std::string dir_ = phaseloop::testing::MakeTempDir();
  const ObjectCache cache_{dir_ + "/cache", std::string("test-identity")};
  std::string bitcode_;
  std::unique_ptr<PolicyRunner> policy_;
  TuResult uncached_;
};

TEST_F(ObjectCacheTest, UncachedCompilesAreDeterministic) {
  absl::StatusOr<TuResult> again =
      OptimizeTranslationUnit(bitcode_, "O2", {}, *policy_);
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectSameAsUncached(*again);
  EXPECT_EQ(again->object_cache, "");  // no cache, nothing said
}

TEST_F(ObjectCacheTest, MissStoresAndHitReturnsTheSameObject) {
  absl::StatusOr<TuResult> miss = Compile(cache_);
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_EQ(miss->object_cache, "miss");
  EXPECT_EQ(miss->object_cache_note, "");
  ExpectSameAsUncached(*miss);
  const std::string entry = cache_.EntryPath(KeyIn(cache_));
  ASSERT_TRUE(fs::exists(entry)) << entry;

  absl::StatusOr<TuResult> hit = Compile(cache_);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->object_cache, "hit") << hit->object_cache_note;
  ExpectSameAsUncached(*hit);
  EXPECT_EQ(hit->policy_note, uncached_.policy_note);

  // Another pipeline, another entry.
  absl::StatusOr<std::unique_ptr<PolicyRunner>> other =
      LoadPolicy("fixed:default<O1>");
  ASSERT_TRUE(other.ok());
  absl::StatusOr<TuResult> elsewhere =
      OptimizeTranslationUnit(bitcode_, "O2", {}, **other, false, &cache_);
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.status();
  EXPECT_EQ(elsewhere->object_cache, "miss");
}

TEST_F(ObjectCacheTest, BadEntriesAreMissesAndAreRewritten) {
  ASSERT_TRUE(Compile(cache_).ok());
  const std::string key = KeyIn(cache_);
  const std::string entry = cache_.EntryPath(key);
  const std::string good = phaseloop::testing::ReadFileOrEmpty(entry);
  ASSERT_FALSE(good.empty());

  std::string flipped = good;
  flipped[flipped.size() - 10] ^= 0x20;
  std::string not_elf = SerializeEntry(key, {"NOT AN ELF OBJECT", 1, 2, 3});
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"truncated", good.substr(0, good.size() - 100)},
      {"content hash", flipped},
      {"not ELF", not_elf},
      {"another key",
       SerializeEntry(std::string(32, '0'), {uncached_.object, 1, 2, 3})},
      {"no header", "garbage"},
  };
  for (const auto& [what, bytes] : bad) {
    SCOPED_TRACE(what);
    WriteFile(entry, bytes);
    absl::StatusOr<TuResult> again = Compile(cache_);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->object_cache, "miss");
    EXPECT_NE(again->object_cache_note.find("bad entry"), std::string::npos)
        << again->object_cache_note;
    ExpectSameAsUncached(*again);
    EXPECT_TRUE(phaseloop::testing::ReadFileOrEmpty(entry) == good)
        << "the entry was not rewritten";
  }
  EXPECT_FALSE(ParseEntry(key, not_elf).ok());
  EXPECT_TRUE(ParseEntry(key, good).ok());
}

TEST_F(ObjectCacheTest, AnUnusableCacheNeverFailsACompile) {
  // A cache directory that cannot be created (under a regular file; root
  // ignores permission bits, not that).
  const std::string file = dir_ + "/a-file";
  WriteFile(file, "x");
  const ObjectCache unwritable(file + "/cache", std::string("test-identity"));
  absl::StatusOr<TuResult> r = Compile(unwritable);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->object_cache, "miss");
  EXPECT_NE(r->object_cache_note.find("not stored"), std::string::npos)
      << r->object_cache_note;
  ExpectSameAsUncached(*r);

  // No identity for the binary: a miss saying so, nothing written.
  const ObjectCache anonymous(dir_ + "/anonymous",
                              absl::NotFoundError("cannot stat /x"));
  r = Compile(anonymous);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->object_cache, "miss");
  EXPECT_NE(r->object_cache_note.find("cannot stat /x"), std::string::npos)
      << r->object_cache_note;
  ExpectSameAsUncached(*r);
  EXPECT_FALSE(fs::exists(dir_ + "/anonymous"));
}

TEST_F(ObjectCacheTest, FaultInjectionKeepsTheCacheOut) {
  setenv(kInjectFaultEnv, "none", 1);
  absl::StatusOr<TuResult> r = Compile(cache_);
  unsetenv(kInjectFaultEnv);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->object_cache, "bypassed");
  ExpectSameAsUncached(*r);
  EXPECT_FALSE(fs::exists(cache_.EntryPath(KeyIn(cache_))));  // not written

  ASSERT_TRUE(Compile(cache_).ok());  // stored now
  setenv(kInjectFaultEnv, "none", 1);
  r = Compile(cache_);
  unsetenv(kInjectFaultEnv);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->object_cache, "bypassed");  // not served
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
