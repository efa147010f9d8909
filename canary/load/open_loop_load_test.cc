#include "canary/load/open_loop_load.h"

#include <cmath>
#include <memory>
#include <string>
#include <thread>

#include "canary/load/load_test_server.h"
#include "gtest/gtest.h"

namespace phaseloop::canary::load {
namespace {

LoadSpec Spec(const std::string& kind, double rate, int64_t max_requests,
              double duration_s = 0) {
  LoadSpec spec;
  spec.rate = rate;
  spec.max_requests = max_requests;
  spec.duration_s = duration_s;
  spec.max_in_flight = 4;
  MixEntry entry;
  entry.kind = kind;
  entry.min_payload_bytes = 100;
  entry.max_payload_bytes = 300;
  spec.mix = {entry};
  return spec;
}

TargetSet Targets(std::vector<Target> targets) {
  auto set = TargetSet::Create(std::move(targets));
  EXPECT_TRUE(set.ok()) << set.status();
  return *set;
}

Target At(const std::string& name, int port, double weight = 1) {
  return Target{name, "127.0.0.1", port, weight};
}

LoadResults RunToEnd(const LoadSpec& spec, const TargetSet& targets) {
  auto load = OpenLoopLoad::Start(spec, targets);
  EXPECT_TRUE(load.ok()) << load.status();
  if (!load.ok()) return {};
  (*load)->Wait();
  return (*load)->Snapshot();
}

// Every intended request is sent or counted not_sent; every sent one ends
// ok or with an error.
void ExpectConsistent(const TargetResults& r) {
  auto not_sent = r.errors.find(kErrorNotSent);
  const int64_t unsent = not_sent == r.errors.end() ? 0 : not_sent->second;
  EXPECT_EQ(r.intended, r.sent + unsent) << r.name;
  EXPECT_EQ(r.sent, r.ok + r.error_count() - unsent) << r.name;
  EXPECT_EQ(r.latency.count(), r.ok) << r.name;
  EXPECT_EQ(r.start_delay.count(), r.sent) << r.name;
}

std::unique_ptr<LoadTestServer> Server(int keep_alive_max = 5) {
  auto server = LoadTestServer::Start(keep_alive_max);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

TEST(OpenLoopLoadTest, SendsExactlyMaxRequests) {
  auto server = Server();
  const LoadResults r = RunToEnd(Spec("echo", 500, 50),
                                 Targets({At("baseline", server->port())}));
  EXPECT_EQ(r.overall.intended, 50);
  EXPECT_EQ(r.overall.sent, 50);
  EXPECT_EQ(r.overall.ok, 50);
  EXPECT_TRUE(r.overall.errors.empty());
  EXPECT_EQ(server->Received("echo"), 50);
  ASSERT_EQ(r.targets.size(), 1u);
  EXPECT_EQ(r.targets[0].name, "baseline");
  ExpectConsistent(r.overall);
}

// Uniform arrivals at 200/s are intended at 0, 5, ..., 245 ms: 50 of them
// before 247.5 ms.
TEST(OpenLoopLoadTest, DurationBoundsTheIntendedTimes) {
  auto server = Server();
  const LoadResults r = RunToEnd(Spec("echo", 200, /*max_requests=*/0, 0.2475),
                                 Targets({At("baseline", server->port())}));
  EXPECT_EQ(r.overall.intended, 50);
  EXPECT_EQ(r.overall.ok, 50);
  EXPECT_EQ(server->Received("echo"), 50);
}

TEST(OpenLoopLoadTest, TheFirstBoundReachedEndsTheRun) {
  auto server = Server();
  const LoadResults r = RunToEnd(Spec("echo", 200, 30, /*duration_s=*/600),
                                 Targets({At("baseline", server->port())}));
  EXPECT_EQ(r.overall.intended, 30);
  EXPECT_EQ(server->Received("echo"), 30);
}

// Poisson arrivals: the count in a duration is Poisson(rate × duration),
// here mean 400 and sd 20; the same seed gives the same arrivals.
TEST(OpenLoopLoadTest, PoissonArrivalsAreSeeded) {
  auto server = Server();
  LoadSpec spec = Spec("echo", 1000, 0, 0.4);
  spec.arrival = Arrival::kPoisson;
  spec.seed = 7;
  const TargetSet targets = Targets({At("baseline", server->port())});
  const LoadResults first = RunToEnd(spec, targets);
  const LoadResults second = RunToEnd(spec, targets);
  EXPECT_EQ(first.overall.intended, second.overall.intended);
  EXPECT_NEAR(first.overall.intended, 400, 5 * 20);
  EXPECT_EQ(first.overall.ok, first.overall.intended);
}

TEST(OpenLoopLoadTest, ZeroWeightGetsNothing) {
  auto baseline = Server();
  auto canary = Server();
  const LoadResults r = RunToEnd(Spec("echo", 1000, 200),
                                 Targets({At("baseline", baseline->port(), 0),
                                          At("canary", canary->port(), 100)}));
  EXPECT_EQ(r.targets[0].intended, 0);
  EXPECT_EQ(r.targets[1].intended, 200);
  EXPECT_EQ(r.targets[1].ok, 200);
  EXPECT_EQ(baseline->Received("echo"), 0);
  EXPECT_EQ(canary->Received("echo"), 200);
}

// 1000 requests split 30/70: the baseline's count is Binomial(1000, 0.3),
// mean 300 and sd sqrt(1000 × 0.3 × 0.7) = 14.5; ±5 sd (73) fails a fair
// split with probability < 1e-6. The split is seeded, so it repeats.
TEST(OpenLoopLoadTest, WeightsSplitTheTrafficRepeatably) {
  auto baseline = Server(1000);
  auto canary = Server(1000);
  const TargetSet targets = Targets(
      {At("baseline", baseline->port(), 30), At("canary", canary->port(), 70)});
  const LoadResults r = RunToEnd(Spec("echo", 4000, 1000), targets);
  EXPECT_NEAR(r.targets[0].intended, 300, 73);
  EXPECT_EQ(r.targets[0].intended + r.targets[1].intended, 1000);
  EXPECT_EQ(baseline->Received("echo"), r.targets[0].ok);
  EXPECT_EQ(canary->Received("echo"), r.targets[1].ok);
  EXPECT_EQ(r.overall.ok, 1000);
  const LoadResults again = RunToEnd(Spec("echo", 4000, 1000), targets);
  EXPECT_EQ(again.targets[0].intended, r.targets[0].intended);
}

// The controller shifts the split while the run goes on: requests intended
// after SetWeights follow the new weights.
TEST(OpenLoopLoadTest, SetWeightsShiftsTheSplitWhileRunning) {
  auto baseline = Server(1000);
  auto canary = Server(1000);
  auto load = OpenLoopLoad::Start(
      Spec("echo", 200, 200), Targets({At("baseline", baseline->port(), 100),
                                       At("canary", canary->port(), 0)}));
  ASSERT_TRUE(load.ok()) << load.status();
  while ((*load)->Snapshot().overall.ok < 20) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE((*load)->SetWeights({{"baseline", 0}, {"canary", 1}}).ok());
  EXPECT_FALSE((*load)->SetWeights({{"nosuch", 1}}).ok());
  (*load)->Wait();
  const LoadResults r = (*load)->Snapshot();
  EXPECT_GE(r.targets[0].intended, 20);
  EXPECT_GE(r.targets[1].intended, 1);
  EXPECT_EQ(r.overall.intended, 200);
  EXPECT_EQ((*load)->targets()[1].weight, 1);
}

// Coordinated omission. One worker; requests intended every 10 ms; the
// server stalls the 11th for 300 ms. Requests 12..26 are intended at most
// 150 ms after the 11th was (>= its intended time), so cannot be sent
// before the stall ends (>= 300 ms after it), and their latencies from the
// intended time are >= 150 ms: with the 11th, at least 16 latencies
// >= 150 ms. A closed-loop measurement (from the actual send) would see
// one slow request.
TEST(OpenLoopLoadTest, LatencyCountsTheWaitBehindAStall) {
  auto server = Server(1000);
  server->StallNth(11, std::chrono::milliseconds(300));
  LoadSpec spec = Spec("stall", 100, 40);
  spec.max_in_flight = 1;
  const LoadResults r =
      RunToEnd(spec, Targets({At("baseline", server->port())}));
  ASSERT_EQ(r.overall.ok, 40);
  // 0.14: below 150 ms by more than the sketch's 0.5 %.
  const int64_t slow =
      r.overall.latency.count() - r.overall.latency.CountAtOrBelow(0.14);
  EXPECT_GE(slow, 16);
  EXPECT_GE(r.overall.late_starts, 15);
  EXPECT_GE(r.overall.start_delay.max(), 0.14);
  ExpectConsistent(r.overall);
}

TEST(OpenLoopLoadTest, CountsServerErrorsByReason) {
  auto server = Server();
  const LoadResults r = RunToEnd(Spec("fail", 500, 20),
                                 Targets({At("baseline", server->port())}));
  EXPECT_EQ(r.overall.ok, 0);
  EXPECT_EQ(r.overall.errors.at("http_500"), 20);
  EXPECT_EQ(r.overall.latency.count(), 0);
  const LoadResults unknown = RunToEnd(
      Spec("nosuchkind", 500, 5), Targets({At("baseline", server->port())}));
  EXPECT_EQ(unknown.overall.errors.at("http_404"), 5);
}

TEST(OpenLoopLoadTest, CountsClosedAndRefusedConnections) {
  auto closer = RawTcpServer::Start("");
  ASSERT_TRUE(closer.ok()) << closer.status();
  RefusingPort refusing;
  const LoadResults r = RunToEnd(Spec("echo", 500, 40),
                                 Targets({At("closer", (*closer)->port()),
                                          At("refused", refusing.port())}));
  EXPECT_EQ(r.overall.intended, 40);
  EXPECT_EQ(r.overall.ok, 0);
  EXPECT_EQ(r.targets[0].errors.at(kErrorClosed), r.targets[0].intended);
  EXPECT_EQ(r.targets[1].errors.at(kErrorConnectRefused),
            r.targets[1].intended);
  EXPECT_GT(r.targets[0].intended, 0);
  EXPECT_GT(r.targets[1].intended, 0);
  ExpectConsistent(r.targets[0]);
  ExpectConsistent(r.targets[1]);
}

// The server never answers: each request sent times out (after 50 ms; the
// server holds them until the test ends), and the run still ends. How many
// are sent before the drain deadline (the last intended time + the
// timeout) depends on the workers' pace, so the test counts sent ones: an
// ASan build sent 5 of 6 and left one not_sent.
TEST(OpenLoopLoadTest, CountsTimeouts) {
  auto server = Server();
  LoadSpec spec = Spec("hang", 500, 6);
  spec.timeout_s = 0.05;
  const LoadResults r =
      RunToEnd(spec, Targets({At("baseline", server->port())}));
  EXPECT_EQ(r.overall.intended, 6);
  EXPECT_GE(r.overall.sent, 1);
  EXPECT_EQ(r.overall.ok, 0);
  EXPECT_EQ(r.overall.errors.at(kErrorTimeout), r.overall.sent);
  ExpectConsistent(r.overall);
}

// Stop ends a long run; requests still queued count as not_sent.
TEST(OpenLoopLoadTest, StopEndsTheRunEarly) {
  auto server = Server();
  auto load = OpenLoopLoad::Start(Spec("echo", 100, 0, /*duration_s=*/600),
                                  Targets({At("baseline", server->port())}));
  ASSERT_TRUE(load.ok()) << load.status();
  while ((*load)->Snapshot().overall.ok < 5) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  (*load)->Stop();
  (*load)->Wait();
  const LoadResults r = (*load)->Snapshot();
  EXPECT_GE(r.overall.ok, 5);
  EXPECT_LT(r.overall.intended, 60000);
  ExpectConsistent(r.overall);
}

// Slices partition the run: what each TakeSlice returns adds up to the
// whole, and a slice after the end is empty.
TEST(OpenLoopLoadTest, SlicesAddUpToTheRun) {
  auto server = Server(1000);
  auto load = OpenLoopLoad::Start(Spec("echo", 400, 200),
                                  Targets({At("baseline", server->port())}));
  ASSERT_TRUE(load.ok()) << load.status();
  while ((*load)->Snapshot().overall.ok < 50) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const LoadResults first = (*load)->TakeSlice();
  (*load)->Wait();
  const LoadResults second = (*load)->TakeSlice();
  const LoadResults third = (*load)->TakeSlice();
  EXPECT_GE(first.overall.ok, 50);
  EXPECT_EQ(first.overall.ok + second.overall.ok, 200);
  EXPECT_EQ(first.overall.intended + second.overall.intended, 200);
  EXPECT_EQ(first.overall.latency.count() + second.overall.latency.count(),
            200);
  EXPECT_EQ(third.overall.intended, 0);
  EXPECT_EQ((*load)->Snapshot().overall.ok, 200);
}

TEST(OpenLoopLoadTest, RefusesABadSpec) {
  LoadSpec spec = Spec("echo", 100, 0, 0);  // no bound
  auto load = OpenLoopLoad::Start(spec, Targets({At("baseline", 1)}));
  ASSERT_FALSE(load.ok());
  EXPECT_NE(load.status().message().find("bound"), std::string::npos)
      << load.status();
  Target unresolvable{"baseline", "no-such-host.invalid", 80, 1};
  load = OpenLoopLoad::Start(Spec("echo", 100, 1), Targets({unresolvable}));
  ASSERT_FALSE(load.ok());
  EXPECT_NE(load.status().message().find("no-such-host.invalid"),
            std::string::npos)
      << load.status();
}

}  // namespace
}  // namespace phaseloop::canary::load
