#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "absl/status/statusor.h"
#include <gtest/gtest.h>
TEST(Smoke, Llvm) { llvm::LLVMContext c; llvm::Module m("x", c); absl::StatusOr<int> s = 3; EXPECT_EQ(*s, 3); }
