// Policy store throughput: new pushes (each fsyncs an artifact and the
// index), repeated pushes, promotes (an index write each; the row includes
// an already-stored push) and verified pulls, called directly on the
// directory store and through gRPC on loopback in the same run; prints
// operations/s and the gRPC/direct time ratio.
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "common/timing/elapsed.h"
#include "offline_rl/policy_store/directory_policy_store.h"
#include "offline_rl/policy_store/policy_store.h"
#include "offline_rl/policy_store/policy_store_client.h"
#include "offline_rl/policy_store/policy_store_service.h"
#include "offline_rl/policy_store/test_policies.h"

namespace phaseloop::policy_store {
namespace {

// Seconds per call of `op(i)` over `n` calls; aborts on the first failure.
double TimePerCall(int n, const std::function<bool(int)>& op) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    if (!op(i)) {
      std::fprintf(stderr, "operation %d failed\n", i);
      std::exit(1);
    }
  }
  return phaseloop::timing::SecondsSince(start) / n;
}

void Run() {
  constexpr int kVersions = 50;
  constexpr int kRepeats = 200;
  std::vector<std::string> files;
  for (int i = 0; i < 2 * kVersions; ++i) {
    files.push_back(testing::TinyPolicyFile(i));
  }
  std::printf("artifact file: %zu bytes\n", files[0].size());
  auto direct = std::move(*OpenPolicyStore(phaseloop::testing::MakeTempDir()));
  auto served = std::move(*OpenPolicyStore(phaseloop::testing::MakeTempDir()));
  auto server =
      std::move(*PolicyStoreServer::Start(served.get(), "127.0.0.1:0"));
  auto remote = std::move(*ConnectPolicyStore(server->address()));

  struct Row {
    const char* name;
    int n;
    std::function<bool(PolicyStore&, int)> op;
  };
  const std::vector<Row> rows = {
      {"push (new version)", kVersions,
       [&](PolicyStore& s, int i) {
         return s.Push(files[i + (&s == remote.get() ? kVersions : 0)], "", "")
             .ok();
       }},
      {"push (already stored)", kRepeats,
       [&](PolicyStore& s, int i) {
         return s
             .Push(files[i % kVersions + (&s == remote.get() ? kVersions : 0)],
                   "", "")
             .ok();
       }},
      {"promote (candidate)", kVersions,
       [&](PolicyStore& s, int i) {
         const std::string& file =
             files[i + (&s == remote.get() ? kVersions : 0)];
         return s.Promote(s.Push(file, "", "")->policy_version, "candidate")
             .ok();
       }},
      {"pull (channel, verified)", kRepeats,
       [&](PolicyStore& s, int) { return s.GetChannel("candidate").ok(); }},
      {"list", kRepeats, [&](PolicyStore& s, int) { return s.List().ok(); }},
  };
  std::printf("%-26s %12s %12s %8s\n", "operation", "direct/s", "gRPC/s",
              "ratio");
  for (const Row& row : rows) {
    const double d =
        TimePerCall(row.n, [&](int i) { return row.op(*direct, i); });
    const double g =
        TimePerCall(row.n, [&](int i) { return row.op(*remote, i); });
    std::printf("%-26s %12.0f %12.0f %8.2f\n", row.name, 1 / d, 1 / g, g / d);
  }
}

}  // namespace
}  // namespace phaseloop::policy_store

int main() {
  phaseloop::policy_store::Run();
  return 0;
}
