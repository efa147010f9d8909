// The shim keeps C11 semantics (a thread's int result reaches thrd_join;
// detached threads run), and under --config=tsan (tag tsan) a C11 thread
// that allocates and shares memory runs without TSan crashing or reporting.
#include <threads.h>

#include <atomic>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace {

int Doubled(void* raw) {
  auto* value = static_cast<int*>(raw);
  auto scratch = std::make_unique<std::vector<int>>(1000, *value);  // malloc
  *value = 2 * (*scratch)[999];
  return *value + 1;
}

TEST(TsanC11ThreadsTest, JoinGivesTheThreadsResultAndItsWrites) {
  int value = 21;
  thrd_t thread;
  ASSERT_EQ(thrd_create(&thread, Doubled, &value), thrd_success);
  int result = 0;
  ASSERT_EQ(thrd_join(thread, &result), thrd_success);
  EXPECT_EQ(result, 43);
  EXPECT_EQ(value, 42);  // ordered by the join (TSan would report otherwise)
}

std::atomic<int> ran{0};
int CountRun(void*) {
  ran.fetch_add(1);
  return 0;
}

TEST(TsanC11ThreadsTest, DetachedThreadsRun) {
  for (int i = 0; i < 4; ++i) {
    thrd_t thread;
    ASSERT_EQ(thrd_create(&thread, CountRun, nullptr), thrd_success);
    ASSERT_EQ(thrd_detach(thread), thrd_success);
  }
  while (ran.load() < 4) thrd_yield();
  EXPECT_EQ(ran.load(), 4);
}

}  // namespace
