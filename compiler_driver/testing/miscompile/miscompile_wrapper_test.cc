// The test wrapper (this folder's phaseloop-cc) really miscompiles with
// phaseloop-test-miscompile in its policy, and the product's phaseloop-cc
// refuses the same policy, compiles with the baseline and records why.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/wrapper_scratch.h"

namespace phaseloop {
namespace {

using cc_wrapper::testing::AbsolutePath;

// A hot loop summing data computed at run time (n from argv), so that no
// pipeline can fold it away.
constexpr char kProgram[] = R"(#include <stdio.h>
#include <stdlib.h>

static int sum(const int* a, int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += a[i];
  return s;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  int* a = malloc(sizeof(int) * (size_t)n);
  if (a == NULL) return 1;
  for (int i = 0; i < n; ++i) a[i] = i * 3 + 1;
  printf("%d\n", sum(a, n));
  free(a);
  return 0;
}
)";

constexpr char kMiscompilePolicy[] =
    "fixed:default<O3>,phaseloop-test-miscompile";

class MiscompileWrapperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test_cc_ = AbsolutePath("compiler_driver/testing/miscompile/phaseloop-cc");
    product_cc_ = AbsolutePath("compiler_driver/cc_wrapper/phaseloop-cc");
    std::ofstream(scratch_.dir() + "/sum.c") << kProgram;
  }

  // Compiles sum.c at -O3 with `cc` (and `policy`, unless empty), links it
  // with clang-16 and returns what the program prints for n = 1000.
  std::string BuildAndRun(const std::string& cc, const std::string& policy,
                          const std::string& name) {
    std::map<std::string, std::string> env;
    if (!policy.empty()) env["PHASELOOP_POLICY"] = policy;
    std::string output;
    EXPECT_EQ(scratch_.Run({cc, "-O3", "-c", "sum.c", "-o", name + ".o"}, env,
                           &output),
              0)
        << output;
    EXPECT_EQ(scratch_.Run({"clang-16", name + ".o", "-o", name}, {}, &output),
              0)
        << output;
    EXPECT_EQ(scratch_.Run({"./" + name, "1000"}, {}, &output), 0) << output;
    return output;
  }

  cc_wrapper::testing::WrapperScratch scratch_;
  std::string test_cc_, product_cc_;
};

TEST_F(MiscompileWrapperTest, TestWrapperMiscompilesAndSaysWhichPipeline) {
  const std::string clang = BuildAndRun("clang-16", "", "clang");
  ASSERT_EQ(clang, "1499500\n");
  // The test wrapper without the pass compiles correctly...
  EXPECT_EQ(BuildAndRun(test_cc_, "fixed:default<O3>", "plain"), clang);
  // ...and with it, the program computes something else.
  const std::string bad = BuildAndRun(test_cc_, kMiscompilePolicy, "bad");
  EXPECT_NE(bad, clang);

  std::vector<v1::Decision> d = scratch_.Decisions();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1].outcome(), v1::OPTIMIZED) << d[1].detail();
  EXPECT_EQ(d[1].pipeline(), "default<O3>,phaseloop-test-miscompile");
}

TEST_F(MiscompileWrapperTest, ProductWrapperRefusesThePassAndRunsTheBaseline) {
  const std::string clang = BuildAndRun("clang-16", "", "clang");
  EXPECT_EQ(BuildAndRun(product_cc_, kMiscompilePolicy, "refused"), clang);

  std::vector<v1::Decision> d = scratch_.Decisions();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].outcome(), v1::FAIL_OPEN);
  EXPECT_EQ(d[0].reason(), "policy_refused");
  EXPECT_NE(d[0].detail().find("'phaseloop-test-miscompile'"),
            std::string::npos)
      << d[0].detail();
}

}  // namespace
}  // namespace phaseloop
