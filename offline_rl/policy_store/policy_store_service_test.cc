// A real gRPC server on 127.0.0.1:0 in process, driven through the client
// library (and once through a raw stub): every RPC and its error codes.
#include "offline_rl/policy_store/policy_store_service.h"

#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "common/signing/signature.h"
#include "common/signing/test_keys.h"
#include "common/testing/test_util.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "gtest/gtest.h"
#include "offline_rl/policy_store/directory_policy_store.h"
#include "offline_rl/policy_store/policy_store_client.h"
#include "offline_rl/policy_store/test_policies.h"

namespace phaseloop::policy_store {
namespace {

using policy_store::testing::TinyPolicy;
using policy_store::testing::TinyPolicyFile;

std::string VersionOf(int seed) {
  return policy_runtime::PolicyVersionOf(TinyPolicy(seed));
}

class PolicyStoreServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenPolicyStore(phaseloop::testing::MakeTempDir());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto server = PolicyStoreServer::Start(store_.get(), "127.0.0.1:0");
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ASSERT_TRUE(absl::StartsWith(server_->address(), "127.0.0.1:"));
    ASSERT_NE(server_->address(), "127.0.0.1:0");
    auto client = ConnectPolicyStore(server_->address());
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
  }

  std::unique_ptr<PolicyStore> store_;
  std::unique_ptr<PolicyStoreServer> server_;
  std::unique_ptr<PolicyStore> client_;
};

TEST_F(PolicyStoreServiceTest, PushListPromotePullRollback) {
  absl::StatusOr<PushResult> first =
      client_->Push(TinyPolicyFile(1), "stable", "v1");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->policy_version, VersionOf(1));
  absl::StatusOr<PushResult> second =
      client_->Push(TinyPolicyFile(2), "candidate", "v2");
  ASSERT_TRUE(second.ok()) << second.status();

  absl::StatusOr<PolicyListing> listing = client_->List();
  ASSERT_TRUE(listing.ok()) << listing.status();
  ASSERT_EQ(listing->policies.size(), 2u);
  EXPECT_EQ(listing->policies[0].note, "v1");
  EXPECT_EQ(listing->policies[1].algorithm, "bc");
  EXPECT_DOUBLE_EQ(listing->policies[1].metrics.at("validation_oz_ratio"),
                   0.97);
  EXPECT_EQ(listing->policies[1].channels,
            std::vector<std::string>{"candidate"});
  ASSERT_EQ(listing->channels.size(), 2u);
  EXPECT_EQ(listing->channels[0].policy_version, VersionOf(1));

  absl::StatusOr<ChannelChange> promoted =
      client_->Promote(VersionOf(2).substr(0, 10), "stable");
  ASSERT_TRUE(promoted.ok()) << promoted.status();
  EXPECT_EQ(promoted->previous_version, VersionOf(1));
  EXPECT_EQ(promoted->policy_version, VersionOf(2));

  absl::StatusOr<FetchedPolicy> pulled = client_->GetChannel("stable");
  ASSERT_TRUE(pulled.ok()) << pulled.status();
  EXPECT_EQ(pulled->policy_version, VersionOf(2));
  EXPECT_EQ(pulled->artifact_file, TinyPolicyFile(2));
  EXPECT_EQ(client_->GetVersion(VersionOf(1))->artifact_file,
            TinyPolicyFile(1));

  absl::StatusOr<ChannelChange> rolled = client_->Rollback("stable");
  ASSERT_TRUE(rolled.ok()) << rolled.status();
  EXPECT_EQ(rolled->policy_version, VersionOf(1));
  EXPECT_EQ(client_->GetChannel("stable")->policy_version, VersionOf(1));
  EXPECT_EQ(client_->Rollback("stable").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(PolicyStoreServiceTest, PushIsIdempotentEvenConcurrently) {
  std::vector<std::thread> threads;
  std::vector<absl::StatusOr<PushResult>> results(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([this, i, &results] {
      results[i] = client_->Push(TinyPolicyFile(i % 2), "candidate", "");
    });
  }
  for (std::thread& thread : threads) thread.join();
  int fresh = 0;
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    fresh += result->already_stored ? 0 : 1;
  }
  EXPECT_EQ(fresh, 2);
  EXPECT_EQ(client_->List()->policies.size(), 2u);
  absl::StatusOr<PushResult> again = client_->Push(TinyPolicyFile(0), "", "");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->already_stored);
}

TEST_F(PolicyStoreServiceTest, ErrorsArriveWithTheirCodesAndProblems) {
  std::string tampered = TinyPolicyFile(1);
  tampered[tampered.size() - 10] ^= 0x40;
  absl::StatusOr<PushResult> refused = client_->Push(tampered, "stable", "");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "checksum"))
      << refused.status();
  EXPECT_TRUE(client_->List()->policies.empty());

  EXPECT_EQ(client_->GetChannel("nightly").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(client_->GetChannel("stable").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(client_->GetVersion(VersionOf(1)).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(client_->Promote(VersionOf(1), "stable").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(client_->Rollback("candidate").status().code(),
            absl::StatusCode::kFailedPrecondition);

  // The raw service: a Get that names nothing.
  auto stub = v1::PolicyStore::NewStub(grpc::CreateChannel(
      server_->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::GetPolicyReply reply;
  grpc::Status raw = stub->Get(&context, v1::GetPolicyRequest(), &reply);
  EXPECT_EQ(raw.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

// Mark, the verdict in List and Promote's force travel over gRPC both ways.
TEST_F(PolicyStoreServiceTest, VerdictsTravelOverGrpc) {
  ASSERT_TRUE(client_->Push(TinyPolicyFile(1), "stable", "").ok());
  ASSERT_TRUE(client_->Push(TinyPolicyFile(2), "candidate", "").ok());
  absl::StatusOr<VersionMark> mark = client_->MarkVersion(
      VersionOf(2).substr(0, 6), kVerdictFailed, "canary Fail: p95 +11 %");
  ASSERT_TRUE(mark.ok()) << mark.status();
  EXPECT_EQ(mark->policy_version, VersionOf(2));
  EXPECT_EQ(mark->verdict.verdict, "failed");
  EXPECT_EQ(mark->verdict.reason, "canary Fail: p95 +11 %");
  EXPECT_GT(mark->verdict.marked_unix_ms, 0);
  EXPECT_TRUE(mark->previous.verdict.empty());

  absl::StatusOr<PolicyListing> listing = client_->List();
  ASSERT_TRUE(listing.ok());
  EXPECT_TRUE(listing->policies[0].verdict.verdict.empty());
  EXPECT_EQ(listing->policies[1].verdict.verdict, "failed");
  EXPECT_EQ(listing->policies[1].verdict.reason, "canary Fail: p95 +11 %");
  EXPECT_EQ(listing->policies[1].verdict.marked_unix_ms,
            mark->verdict.marked_unix_ms);

  absl::StatusOr<ChannelChange> refused =
      client_->Promote(VersionOf(2), "stable");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "p95 +11 %"));
  ASSERT_TRUE(client_->Promote(VersionOf(2), "stable", /*force=*/true).ok());
  EXPECT_EQ(store_->GetChannel("stable")->policy_version, VersionOf(2));

  EXPECT_EQ(client_->MarkVersion(VersionOf(2), "maybe", "x").status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<VersionMark> cleared =
      client_->MarkVersion(VersionOf(2), kVerdictCleared, "re-judged");
  ASSERT_TRUE(cleared.ok());
  EXPECT_EQ(cleared->previous.reason, "canary Fail: p95 +11 %");
}

TEST_F(PolicyStoreServiceTest, AStoppedServerIsUnavailableWithAHint) {
  const std::string address = server_->address();
  server_->Shutdown(absl::Seconds(1));
  auto client = ConnectPolicyStore(address, absl::Seconds(2));
  ASSERT_TRUE(client.ok());
  absl::StatusOr<PolicyListing> listing = (*client)->List();
  ASSERT_FALSE(listing.ok());
  EXPECT_TRUE(listing.status().code() == absl::StatusCode::kUnavailable ||
              listing.status().code() == absl::StatusCode::kDeadlineExceeded)
      << listing.status();
  EXPECT_TRUE(absl::StrContains(listing.status().message(), "policy serve"));
}

// gRPC's default SO_REUSEPORT let a second store bind the first one's
// address, and clients reached either store at random.
TEST_F(PolicyStoreServiceTest, ASecondServerOnABusyAddressIsRefused) {
  auto other = OpenPolicyStore(phaseloop::testing::MakeTempDir());
  ASSERT_TRUE(other.ok()) << other.status();
  auto second = PolicyStoreServer::Start(other->get(), server_->address());
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(second.status())) << second.status();
  EXPECT_TRUE(absl::StrContains(second.status().message(), "address in use"))
      << second.status();
}

TEST(PolicyStoreServerTest, RefusesAMalformedListenAddress) {
  auto store = OpenPolicyStore(phaseloop::testing::MakeTempDir());
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(PolicyStoreServer::Start(store->get(), "localhost").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConnectPolicyStore("nowhere").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace phaseloop::policy_store

namespace phaseloop::policy_store {
namespace {

constexpr char kToken[] = "0123456789abcdef-token";

TEST(PolicyStoreServerTest, RefusesToServeBeyondLoopbackWithoutAToken) {
  auto store = OpenPolicyStore(phaseloop::testing::MakeTempDir());
  ASSERT_TRUE(store.ok());
  for (const char* listen : {"0.0.0.0:0", "[::]:0"}) {
    absl::StatusOr<std::unique_ptr<PolicyStoreServer>> server =
        PolicyStoreServer::Start(store->get(), listen);
    ASSERT_FALSE(server.ok()) << listen;
    EXPECT_TRUE(absl::IsFailedPrecondition(server.status()));
    EXPECT_TRUE(absl::StrContains(server.status().message(), "--token-file"))
        << server.status();
  }
  // With a token it starts.
  absl::StatusOr<std::unique_ptr<PolicyStoreServer>> server =
      PolicyStoreServer::Start(store->get(), "0.0.0.0:0", {kToken});
  EXPECT_TRUE(server.ok()) << server.status();
}

class TokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenPolicyStore(phaseloop::testing::MakeTempDir());
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    auto server =
        PolicyStoreServer::Start(store_.get(), "127.0.0.1:0", {kToken});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  std::unique_ptr<PolicyStore> Client(const std::string& token) {
    ClientOptions options;
    options.token = token;
    auto client = ConnectPolicyStore(server_->address(), options);
    EXPECT_TRUE(client.ok());
    return std::move(*client);
  }

  std::unique_ptr<PolicyStore> store_;
  std::unique_ptr<PolicyStoreServer> server_;
};

TEST_F(TokenTest, MutatingCallsNeedTheToken) {
  for (const std::string& token :
       {std::string(""), std::string("0123456789abcdef-wrong")}) {
    auto client = Client(token);
    absl::StatusOr<PushResult> pushed =
        client->Push(TinyPolicyFile(1), "stable", "");
    EXPECT_EQ(pushed.status().code(), absl::StatusCode::kUnauthenticated)
        << pushed.status();
    EXPECT_TRUE(absl::StrContains(pushed.status().message(), "token"));
    EXPECT_EQ(client->Promote(VersionOf(1), "stable").status().code(),
              absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(client->Rollback("stable").status().code(),
              absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(
        client->MarkVersion(VersionOf(1), kVerdictFailed, "x").status().code(),
        absl::StatusCode::kUnauthenticated);
  }
  // Nothing reached the store.
  EXPECT_TRUE(store_->List()->policies.empty());
  // Reads need no token.
  EXPECT_TRUE(Client("")->List().ok());

  auto client = Client(kToken);
  ASSERT_TRUE(client->Push(TinyPolicyFile(1), "stable", "").ok());
  ASSERT_TRUE(client->Push(TinyPolicyFile(2), "stable", "").ok());
  EXPECT_TRUE(client->MarkVersion(VersionOf(2), kVerdictFailed, "x").ok());
  EXPECT_TRUE(client->Rollback("stable").ok());
  EXPECT_TRUE(client->Promote(VersionOf(2), "candidate").ok());
  EXPECT_EQ(Client("")->GetChannel("stable")->policy_version, VersionOf(1));
}

TEST(PolicyStoreServiceSigningTest, PushWithoutAValidSignatureIsRefused) {
  auto store_dir = phaseloop::testing::MakeTempDir();
  StoreOptions options;
  options.trust = std::make_shared<const signing::TrustedKeys>(
      signing::testing::TrustOf({signing::testing::TestKey(1)}));
  auto store = OpenPolicyStore(store_dir, options);
  ASSERT_TRUE(store.ok());
  auto server = PolicyStoreServer::Start(store->get(), "127.0.0.1:0");
  ASSERT_TRUE(server.ok());
  auto client = ConnectPolicyStore((*server)->address());
  ASSERT_TRUE(client.ok());

  absl::StatusOr<PushResult> unsigned_push =
      (*client)->Push(TinyPolicyFile(1), "stable", "");
  EXPECT_EQ(unsigned_push.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(
      absl::StrContains(unsigned_push.status().message(), "is not signed"))
      << unsigned_push.status();
  absl::StatusOr<PushResult> wrong_key = (*client)->Push(
      TinyPolicyFile(1),
      signing::SignArtifact(TinyPolicyFile(1), signing::testing::TestKey(2)),
      "stable", "");
  EXPECT_EQ(wrong_key.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(wrong_key.status().message(),
                                signing::testing::TestKey(2).key_id));
  EXPECT_TRUE((*client)->List()->policies.empty());

  const std::string sig =
      signing::SignArtifact(TinyPolicyFile(1), signing::testing::TestKey(1));
  ASSERT_TRUE((*client)->Push(TinyPolicyFile(1), sig, "stable", "").ok());
  absl::StatusOr<FetchedPolicy> pulled = (*client)->GetChannel("stable");
  ASSERT_TRUE(pulled.ok()) << pulled.status();
  EXPECT_EQ(pulled->signature, sig);
}

}  // namespace
}  // namespace phaseloop::policy_store
