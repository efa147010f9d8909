// The object cache through the real phaseloop-cc binaries: a second compile
// of a translation unit is a hit whose object is byte-identical to an
// uncached compile's, the decisions say where each object came from and are
// otherwise the same, and a cache the wrapper cannot write never fails the
// compile.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/wrapper_scratch.h"

namespace phaseloop {
namespace {
namespace fs = std::filesystem;

using cc_wrapper::testing::AbsolutePath;

class ObjectCacheWrapperTest : public ::testing::Test {
 protected:
  int Compile(const std::string& object, const std::string& cache,
              std::string* output = nullptr) {
    std::map<std::string, std::string> env = {{"PHASELOOP_POLICY", policy_}};
    if (!cache.empty()) env["PHASELOOP_OBJECT_CACHE"] = cache;
    return scratch_.Run({cc_, "-O2", "-c", source_, "-o", object}, env, output);
  }
  std::string Object(const std::string& name) {
    return testing::ReadFileOrEmpty(scratch_.dir() + "/" + name);
  }

  cc_wrapper::testing::WrapperScratch scratch_;
  const std::string cc_ =
      AbsolutePath("compiler_driver/cc_wrapper/phaseloop-cc");
  const std::string source_ =
      AbsolutePath("compiler_driver/fixtures/sorting.c");
  const std::string policy_ = "fixed:function(sroa,instcombine),default<O2>";
  const std::string cache_ = scratch_.dir() + "/object-cache";
};

TEST_F(ObjectCacheWrapperTest, SecondCompileIsAHitWithTheSameObject) {
  std::string output;
  ASSERT_EQ(Compile("plain.o", "", &output), 0) << output;
  ASSERT_EQ(Compile("first.o", cache_, &output), 0) << output;
  ASSERT_EQ(Compile("second.o", cache_, &output), 0) << output;
  const std::string plain = Object("plain.o");
  ASSERT_EQ(plain.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_TRUE(Object("first.o") == plain) << "miss differs from uncached";
  EXPECT_TRUE(Object("second.o") == plain) << "hit differs from uncached";

  const std::vector<v1::Decision> d = scratch_.Decisions();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].object_cache(), "");
  EXPECT_EQ(d[1].object_cache(), "miss") << d[1].detail();
  EXPECT_EQ(d[2].object_cache(), "hit") << d[2].detail();
  for (const v1::Decision& decision : d) {
    EXPECT_EQ(decision.outcome(), v1::OPTIMIZED) << decision.detail();
    EXPECT_EQ(decision.pipeline(), d[0].pipeline());
    EXPECT_EQ(decision.module_hash(), d[0].module_hash());
    EXPECT_EQ(decision.ir_count_before(), d[0].ir_count_before());
    EXPECT_EQ(decision.ir_count_after(), d[0].ir_count_after());
    EXPECT_EQ(decision.text_size(), d[0].text_size());
    EXPECT_EQ(decision.alloc_size(), d[0].alloc_size());
    EXPECT_EQ(decision.detail(), d[0].detail());  // nothing went wrong
  }
  // One entry, and the optimizer binary's identity remembered.
  EXPECT_TRUE(fs::is_directory(cache_ + "/objects"));
  EXPECT_EQ(std::distance(fs::directory_iterator(cache_ + "/identity"), {}), 1);
}

// Under -flto the wrapper writes bitcode; its entries were refused as "not
// ELF", so every compile missed and rewrote its entry.
TEST_F(ObjectCacheWrapperTest, LtoBitcodeIsCachedToo) {
  for (const char* lto : {"-flto", "-flto=thin"}) {
    const std::string name = std::string(lto).substr(1);
    for (const char* which : {"plain", "first", "second"}) {
      std::map<std::string, std::string> env = {{"PHASELOOP_POLICY", policy_}};
      if (std::string(which) != "plain") env["PHASELOOP_OBJECT_CACHE"] = cache_;
      std::string output;
      ASSERT_EQ(scratch_.Run({cc_, "-O2", lto, "-c", source_, "-o",
                              name + "-" + which + ".o"},
                             env, &output),
                0)
          << output;
    }
    const std::string plain = Object(name + "-plain.o");
    ASSERT_FALSE(plain.empty());
    EXPECT_TRUE(Object(name + "-second.o") == plain) << lto;
    const std::vector<v1::Decision> d = scratch_.Decisions();
    ASSERT_GE(d.size(), 2u);
    EXPECT_EQ(d[d.size() - 2].object_cache(), "miss")
        << d[d.size() - 2].detail();
    EXPECT_EQ(d.back().object_cache(), "hit") << d.back().detail();
  }
}

// An object whose making printed a backend warning is not cached: a hit
// would skip the backend and its warning, and pass a -Werror build clang
// fails (every compile of it goes to clang, which fails it).
TEST_F(ObjectCacheWrapperTest, NothingIsCachedWhenTheBackendWarned) {
  const std::string frame = scratch_.dir() + "/frame.c";
  std::ofstream(frame) << "void use(char *);\n"
                          "void big(void) { char b[4096]; use(b); }\n";
  const std::map<std::string, std::string> env = {
      {"PHASELOOP_POLICY", policy_}, {"PHASELOOP_OBJECT_CACHE", cache_}};
  std::string output;
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(scratch_.Run({cc_, "-O2", "-c", frame, "-Werror",
                            "-Wframe-larger-than=100", "-o", "frame.o"},
                           env, &output),
              1)
        << output;
    EXPECT_NE(output.find("frame.c:2:6: error: stack frame size"),
              std::string::npos)
        << output;
  }
  for (const v1::Decision& d : scratch_.Decisions()) {
    EXPECT_EQ(d.reason(), "backend_diagnostics") << d.detail();
    EXPECT_NE(d.object_cache(), "hit");
  }
}

TEST_F(ObjectCacheWrapperTest, AnUnwritableCacheStillCompiles) {
  std::string output;
  ASSERT_EQ(Compile("plain.o", "", &output), 0) << output;
  const std::string file = scratch_.dir() + "/not-a-directory";
  std::ofstream(file) << "x";
  ASSERT_EQ(Compile("cached.o", file + "/cache", &output), 0) << output;
  EXPECT_TRUE(Object("cached.o") == Object("plain.o"));
  const std::vector<v1::Decision> d = scratch_.Decisions();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1].outcome(), v1::OPTIMIZED) << d[1].detail();
  EXPECT_EQ(d[1].object_cache(), "miss");
  EXPECT_NE(d[1].detail().find("object cache: not stored"), std::string::npos)
      << d[1].detail();
}

}  // namespace
}  // namespace phaseloop
