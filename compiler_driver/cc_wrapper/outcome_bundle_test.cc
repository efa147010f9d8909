// Outcome cache bundles: one machine's topk choices exported to a file and
// imported into another machine's cache, every entry verified on the way in.
#include "compiler_driver/cc_wrapper/outcome_bundle.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/cache_command.h"
#include "compiler_driver/cc_wrapper/outcome_cache.h"

namespace phaseloop::cc_wrapper {
namespace {

// A cache at `dir` holding topk's choice for modules m1..m3, as the
// wrapper of identity "opt:test" stores it.
OutcomeCache FilledCache(const std::string& dir) {
  OutcomeCache cache(dir, std::string("opt:test"));
  PolicyDecision decision;
  decision.pipeline = "default<Oz>,function(instcombine)";
  decision.oz_alloc_size = 100;
  decision.measured_pipelines = {{"default<Oz>", 100}, {decision.pipeline, 90}};
  for (const char* module : {"m1", "m2", "m3"}) {
    EXPECT_EQ(cache.Store(cache.Lookup(module, "Oz", {}, "s"), decision), "");
  }
  return cache;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(OutcomeBundleTest, ExportedChoicesHitOnTheOtherMachine) {
  const std::string here = testing::MakeTempDir();
  const std::string there = testing::MakeTempDir();
  const std::string bundle = here + "/outcomes.bundle";
  FilledCache(here);
  auto exported = ExportOutcomeBundle(here, bundle);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->entries, 3);
  // The same cache gives the same bundle.
  ASSERT_TRUE(ExportOutcomeBundle(here, here + "/again.bundle").ok());
  EXPECT_EQ(Read(bundle), Read(here + "/again.bundle"));

  auto imported = ImportOutcomeBundle(bundle, there, 16 << 20);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->entries, 3);
  EXPECT_EQ(imported->imported, 3);
  EXPECT_TRUE(imported->refused.empty());
  // The other machine (the same optimizer) now finds the choice, with the
  // bytes the first machine stored.
  OutcomeCache other(there, std::string("opt:test"));
  OutcomeLookup hit = other.Lookup("m2", "Oz", {}, "s");
  ASSERT_TRUE(hit.hit.has_value()) << hit.note;
  EXPECT_EQ(hit.hit->pipeline, "default<Oz>,function(instcombine)");
  EXPECT_EQ(
      Read(other.EntryPath(hit.key)),
      Read(OutcomeCache(here, std::string("opt:test")).EntryPath(hit.key)));
  // Another optimizer binary never hits them.
  OutcomeCache newer(there, std::string("opt:newer"));
  EXPECT_FALSE(newer.Lookup("m2", "Oz", {}, "s").hit.has_value());

  // Importing again adds nothing: the entries are there.
  imported = ImportOutcomeBundle(bundle, there, 16 << 20);
  ASSERT_TRUE(imported.ok());
  EXPECT_EQ(imported->imported, 0);
  EXPECT_EQ(imported->present, 3);
}

// A bundle from elsewhere is checked entry by entry: a pipeline no policy
// may run, an entry for another key, or a key that is no key is refused
// and named; the good entries are imported. And a hit never runs a refused
// pipeline, however the entry got into the cache.
TEST(OutcomeBundleTest, EntriesAreVerifiedOnTheWayIn) {
  const std::string here = testing::MakeTempDir();
  const std::string there = testing::MakeTempDir();
  OutcomeCache cache = FilledCache(here);
  const std::string key = cache.Lookup("m1", "Oz", {}, "s").key;
  const std::string good = Read(cache.EntryPath(key));

  PolicyDecision evil;
  evil.pipeline = "internalize";  // changes every symbol's linkage
  // (Consistent with itself, so the pipeline check is what refuses it.)
  evil.measured_pipelines = {{"default<Oz>", 100}, {"internalize", 90}};
  const std::string evil_key = cache.Lookup("m9", "Oz", {}, "s").key;
  const std::string evil_entry = SerializeOutcome(evil_key, evil);
  const std::string other_key = cache.Lookup("m8", "Oz", {}, "s").key;

  std::string bundle = kOutcomeBundleMagic;
  auto add = [&](const std::string& k, const std::string& bytes) {
    bundle += k + " " + std::to_string(bytes.size()) + "\n" + bytes;
  };
  add(key, good);
  add(evil_key, evil_entry);
  add(other_key, good);  // m1's entry under m8's key
  add("../../etc/passwd", good);
  const std::string path = here + "/mixed.bundle";
  std::ofstream(path, std::ios::binary) << bundle;

  auto imported = ImportOutcomeBundle(path, there, 16 << 20);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->entries, 4);
  EXPECT_EQ(imported->imported, 1);
  ASSERT_EQ(imported->refused.size(), 3u);
  EXPECT_NE(imported->refused[0].find("internalize"), std::string::npos)
      << imported->refused[0];
  EXPECT_NE(imported->refused[1].find("another key"), std::string::npos)
      << imported->refused[1];
  EXPECT_NE(imported->refused[2].find("32 hex digits"), std::string::npos)
      << imported->refused[2];

  // Written into the cache by hand, the refused pipeline is a miss.
  OutcomeCache other(there, std::string("opt:test"));
  std::filesystem::create_directories(
      std::filesystem::path(other.EntryPath(evil_key)).parent_path());
  std::ofstream(other.EntryPath(evil_key), std::ios::binary) << evil_entry;
  OutcomeLookup lookup = other.Lookup("m9", "Oz", {}, "s");
  EXPECT_FALSE(lookup.hit.has_value());
  EXPECT_NE(lookup.note.find("internalize"), std::string::npos) << lookup.note;

  // The command says what it refused and exits 2, the good entry stored.
  std::ostringstream out, err;
  CacheFlags flags;
  flags.dir = testing::MakeTempDir();
  flags.bundle = path;
  EXPECT_EQ(RunCacheImport(flags, out, err), 2);
  EXPECT_NE(out.str().find("imported 1 of 4 choices"), std::string::npos)
      << out.str();
  EXPECT_NE(err.str().find("refused entry"), std::string::npos) << err.str();
}

TEST(OutcomeBundleTest, BadInputNamesTheFileAndTheFix) {
  const std::string dir = testing::MakeTempDir();
  CacheFlags flags;
  flags.dir = dir;
  std::ostringstream out, err;
  // Nothing to export from an empty cache.
  flags.bundle = dir + "/b";
  EXPECT_EQ(RunCacheExport(flags, out, err), 2);
  EXPECT_NE(err.str().find("holds no entry to export"), std::string::npos);
  // A missing bundle, a file that is not one, one cut short.
  flags.bundle = dir + "/missing.bundle";
  EXPECT_EQ(RunCacheImport(flags, out, err), 2);
  EXPECT_NE(err.str().find("cannot read the bundle " + flags.bundle),
            std::string::npos)
      << err.str();
  flags.bundle = dir + "/not.bundle";
  std::ofstream(flags.bundle) << "hello\n";
  EXPECT_EQ(RunCacheImport(flags, out, err), 2);
  EXPECT_NE(err.str().find("not.bundle is not an outcome bundle"),
            std::string::npos)
      << err.str();
  flags.bundle = dir + "/short.bundle";
  std::ofstream(flags.bundle)
      << kOutcomeBundleMagic << "0123456789abcdef0123456789abcdef 500\nxy";
  EXPECT_EQ(RunCacheImport(flags, out, err), 2);
  EXPECT_NE(err.str().find("entry 1 is cut short"), std::string::npos)
      << err.str();
  EXPECT_EQ(ReadOutcomeCacheStats(dir)->entries, 0);

  // The command round trip: export, then import into another cache.
  FilledCache(dir);
  flags.bundle = dir + "/all.bundle";
  out.str("");
  ASSERT_EQ(RunCacheExport(flags, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("exported 3 choices"), std::string::npos);
  flags.dir = testing::MakeTempDir();
  flags.json = true;
  out.str("");
  ASSERT_EQ(RunCacheImport(flags, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("\"imported\":3"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
