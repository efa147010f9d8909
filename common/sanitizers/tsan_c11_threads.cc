// ThreadSanitizer and C11 threads (issue 19).
//
// Debian's librdkafka 2.0.2 starts its threads with glibc's C11
// thrd_create, which makes the thread without going through the
// pthread_create TSan intercepts (google/sanitizers#1195). TSan does not
// know the thread, and the thread's first intercepted call (malloc) crashes
// on TSan's missing thread state: "ThreadSanitizer: SEGV on unknown address
// 0x000000000c38" in every test that starts a Kafka client. librdkafka's
// configure has --disable-c11threads for this reason; Debian's build does
// not use it.
//
// These definitions, linked into the executable, take the place of
// glibc's for librdkafka: the dynamic linker binds its references to the
// executable's symbols first. They create and join threads through
// pthread_create / pthread_join, which TSan sees. In glibc, thrd_t is
// pthread_t. @system_libs//:rdkafka links this only in TSan builds. C11
// mutexes and condition variables stay glibc's, so TSan cannot see
// librdkafka's locking; what it then reports from librdkafka's intercepted
// calls (malloc/free) is suppressed in tsan_suppressions.txt.

#include <pthread.h>
#include <threads.h>

#include <cerrno>
#include <cstdint>
#include <new>

namespace {

struct C11Start {
  thrd_start_t function;
  void* argument;
};

void* RunC11Thread(void* raw) {
  const C11Start start = *static_cast<C11Start*>(raw);
  delete static_cast<C11Start*>(raw);
  return reinterpret_cast<void*>(
      static_cast<intptr_t>(start.function(start.argument)));
}

}  // namespace

extern "C" {

int thrd_create(thrd_t* thread, thrd_start_t function, void* argument) {
  auto* start = new (std::nothrow) C11Start{function, argument};
  if (start == nullptr) return thrd_nomem;
  pthread_t id;
  const int error = pthread_create(&id, nullptr, RunC11Thread, start);
  if (error != 0) {
    delete start;
    return error == EAGAIN || error == ENOMEM ? thrd_nomem : thrd_error;
  }
  *thread = id;
  return thrd_success;
}

int thrd_join(thrd_t thread, int* result) {
  void* value = nullptr;
  if (pthread_join(thread, &value) != 0) return thrd_error;
  if (result != nullptr) {
    *result = static_cast<int>(reinterpret_cast<intptr_t>(value));
  }
  return thrd_success;
}

int thrd_detach(thrd_t thread) {
  return pthread_detach(thread) == 0 ? thrd_success : thrd_error;
}

}  // extern "C"
