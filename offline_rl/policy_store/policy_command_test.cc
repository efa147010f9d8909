// `phaseloop policy` as a user runs it: the real binary serving a store in a
// subprocess, and the push/list/promote/pull/rollback/show commands against
// it; then SIGTERM, and a restart that finds the same state.
#include "offline_rl/policy_store/policy_command.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "common/testing/test_util.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "offline_rl/policy_store/test_policies.h"

namespace phaseloop::policy_store {
namespace {

using phaseloop::testing::ReadFileOrEmpty;
using phaseloop::testing::RunCommand;

constexpr char kPhaseloop[] = "tools/phaseloop";

// A running `phaseloop policy serve`; SIGKILLed if the test did not stop it.
class ServeProcess {
 public:
  ServeProcess(const std::string& dir, const std::string& address_file,
               const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {
        kPhaseloop, "policy",      "serve",          "--dir",     dir,
        "--listen", "127.0.0.1:0", "--address-file", address_file};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      execv(kPhaseloop, argv.data());
      _exit(127);
    }
    for (int i = 0; i < 300 && address_.empty(); ++i) {
      address_ = std::string(
          absl::StripTrailingAsciiWhitespace(ReadFileOrEmpty(address_file)));
      if (address_.empty()) usleep(50000);
    }
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  const std::string& address() const { return address_; }

  // SIGTERM; the exit code (-1 on a signal death or no exit within 15 s).
  int Stop() {
    kill(pid_, SIGTERM);
    for (int i = 0; i < 150; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      usleep(100000);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  std::string address_;
};

std::string WriteArtifact(const std::string& dir, int seed) {
  const std::string path = dir + "/p" + std::to_string(seed) + ".plpolicy";
  std::ofstream(path, std::ios::binary) << testing::TinyPolicyFile(seed);
  return path;
}

std::string VersionOf(int seed) {
  return policy_runtime::PolicyVersionOf(testing::TinyPolicy(seed));
}

int Policy(const std::vector<std::string>& args, std::string* output) {
  std::vector<std::string> argv = {kPhaseloop, "policy"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, output);
}

TEST(PolicyCommandTest, ServePushPromotePullRollbackRoundTrip) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  const std::string address_file = dir + "/address";
  const std::string p1 = WriteArtifact(dir, 1);
  const std::string p2 = WriteArtifact(dir, 2);
  const std::string pulled = dir + "/pulled.plpolicy";
  std::string output;

  auto serve = std::make_unique<ServeProcess>(dir + "/store", address_file);
  ASSERT_FALSE(serve->address().empty()) << "serve did not write its address";
  const std::string store = serve->address();

  ASSERT_EQ(
      Policy({"push", p1, "--store", store, "--channel", "stable"}, &output), 0)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "pushed " + VersionOf(1))) << output;
  // --store from the environment.
  setenv("PHASELOOP_POLICY_STORE", store.c_str(), 1);
  ASSERT_EQ(Policy({"push", p2, "--channel", "candidate"}, &output), 0)
      << output;
  unsetenv("PHASELOOP_POLICY_STORE");
  ASSERT_EQ(Policy({"push", p2, "--store", store}, &output), 0) << output;
  EXPECT_TRUE(absl::StrContains(output, "already stored")) << output;

  std::string tampered = testing::TinyPolicyFile(3);
  tampered[tampered.size() - 4] ^= 1;
  std::ofstream(dir + "/bad.plpolicy", std::ios::binary) << tampered;
  EXPECT_EQ(Policy({"push", dir + "/bad.plpolicy", "--store", store}, &output),
            2);
  EXPECT_TRUE(absl::StrContains(output, "checksum")) << output;

  ASSERT_EQ(Policy({"list", "--store", store}, &output), 0) << output;
  EXPECT_TRUE(absl::StrContains(output, "VERSION")) << output;
  EXPECT_TRUE(absl::StrContains(output, VersionOf(2))) << output;
  ASSERT_EQ(Policy({"list", "--store", store, "--json"}, &output), 0);
  nlohmann::json listing = nlohmann::json::parse(output);
  ASSERT_EQ(listing["policies"].size(), 2u);
  EXPECT_EQ(listing["channels"][0]["policy_version"], VersionOf(1));

  ASSERT_EQ(Policy({"promote", VersionOf(2).substr(0, 8), "--channel", "stable",
                    "--store", store},
                   &output),
            0)
      << output;
  ASSERT_EQ(
      Policy({"pull", "--channel", "stable", "--store", store, "--out", pulled},
             &output),
      0)
      << output;
  EXPECT_EQ(ReadFileOrEmpty(pulled), testing::TinyPolicyFile(2));
  // Into a directory that does not exist yet (CI's first pull into a fresh
  // checkout, as the README shows it): made.
  const std::string fresh = dir + "/policies/current.plpolicy";
  ASSERT_EQ(
      Policy({"pull", "--channel", "stable", "--store", store, "--out", fresh},
             &output),
      0)
      << output;
  EXPECT_EQ(ReadFileOrEmpty(fresh), testing::TinyPolicyFile(2));

  ASSERT_EQ(
      Policy({"rollback", "--channel", "stable", "--store", store}, &output), 0)
      << output;
  ASSERT_EQ(Policy({"pull", "--channel", "stable", "--store", store, "--out",
                    pulled, "--json"},
                   &output),
            0)
      << output;
  EXPECT_EQ(nlohmann::json::parse(output)["policy_version"], VersionOf(1));
  EXPECT_EQ(ReadFileOrEmpty(pulled), testing::TinyPolicyFile(1));
  EXPECT_EQ(
      Policy({"rollback", "--channel", "stable", "--store", store}, &output),
      2);
  EXPECT_TRUE(absl::StrContains(output, "no earlier version")) << output;
  EXPECT_EQ(Policy({"pull", "--channel", "nightly", "--store", store, "--out",
                    pulled},
                   &output),
            2);
  EXPECT_TRUE(absl::StrContains(output, "stable, candidate")) << output;
  for (const std::string& bad_out : {dir, std::string("")}) {
    EXPECT_EQ(Policy({"pull", "--channel", "stable", "--store", store, "--out",
                      bad_out},
                     &output),
              2)
        << bad_out;
    EXPECT_TRUE(absl::StrContains(output, "give the artifact file")) << output;
  }

  EXPECT_EQ(serve->Stop(), 0);
  EXPECT_EQ(ReadFileOrEmpty(address_file), "");
  EXPECT_NE(Policy({"list", "--store", store}, &output), 0);

  // A restarted server finds the same store.
  serve = std::make_unique<ServeProcess>(dir + "/store", address_file);
  ASSERT_FALSE(serve->address().empty());
  ASSERT_EQ(Policy({"pull", "--version", VersionOf(2), "--store",
                    serve->address(), "--out", pulled},
                   &output),
            0)
      << output;
  EXPECT_EQ(ReadFileOrEmpty(pulled), testing::TinyPolicyFile(2));
  EXPECT_EQ(serve->Stop(), 0);
}

// A canary's Fail as the controller records it, and what an operator sees
// and may do afterwards.
TEST(PolicyCommandTest, MarkFailedGuardsStableAndShowsInListAndShow) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  const std::string p1 = WriteArtifact(dir, 1);
  const std::string p2 = WriteArtifact(dir, 2);
  std::string output;
  ServeProcess serve(dir + "/store", dir + "/address");
  ASSERT_FALSE(serve.address().empty());
  const std::string store = serve.address();
  ASSERT_EQ(
      Policy({"push", p1, "--store", store, "--channel", "stable"}, &output), 0)
      << output;
  ASSERT_EQ(Policy({"push", p2, "--store", store}, &output), 0) << output;

  ASSERT_EQ(
      Policy({"mark", VersionOf(2).substr(0, 8), "--verdict", "failed",
              "--reason", "canary Fail at 5 %: p95 +10.4 %", "--store", store},
             &output),
      0)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "(no verdict) -> failed")) << output;
  EXPECT_EQ(Policy({"mark", VersionOf(2), "--verdict", "bad", "--reason", "x",
                    "--store", store},
                   &output),
            2);
  EXPECT_TRUE(absl::StrContains(output, "failed")) << output;

  ASSERT_EQ(Policy({"list", "--store", store}, &output), 0) << output;
  EXPECT_TRUE(absl::StrContains(output, "VERDICT")) << output;
  EXPECT_TRUE(absl::StrContains(output, "canary Fail at 5 %: p95 +10.4 %"))
      << output;
  ASSERT_EQ(Policy({"list", "--store", store, "--json"}, &output), 0);
  nlohmann::json listing = nlohmann::json::parse(output);
  EXPECT_TRUE(listing["policies"][0]["verdict"].is_null());
  EXPECT_EQ(listing["policies"][1]["verdict"]["verdict"], "failed");

  EXPECT_EQ(
      Policy({"promote", VersionOf(2), "--channel", "stable", "--store", store},
             &output),
      2);
  EXPECT_TRUE(absl::StrContains(output, VersionOf(2) + " was marked failed"))
      << output;
  EXPECT_TRUE(absl::StrContains(output, "--force")) << output;
  ASSERT_EQ(Policy({"promote", VersionOf(2), "--channel", "stable", "--store",
                    store, "--force"},
                   &output),
            0)
      << output;

  ASSERT_EQ(Policy({"show", p2, "--store", store}, &output), 0) << output;
  EXPECT_TRUE(absl::StrContains(
      output, "channels stable; verdict failed (canary Fail at 5 %"))
      << output;
  ASSERT_EQ(Policy({"show", p2, "--store", store, "--json"}, &output), 0);
  EXPECT_EQ(nlohmann::json::parse(output)["store"]["verdict"]["verdict"],
            "failed");
  ASSERT_EQ(Policy({"show", p1, "--store", store}, &output), 0) << output;
  EXPECT_TRUE(absl::StrContains(output, "verdict none")) << output;
  EXPECT_EQ(serve.Stop(), 0);
}

TEST(PolicyCommandTest, ShowDescribesAFileOffline) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  const std::string path = WriteArtifact(dir, 4);
  std::string output;
  ASSERT_EQ(Policy({"show", path}, &output), 0) << output;
  EXPECT_TRUE(absl::StrContains(output, VersionOf(4))) << output;
  EXPECT_TRUE(absl::StrContains(output, "130->2 identity")) << output;
  EXPECT_TRUE(absl::StrContains(output, "instcombine,simplifycfg")) << output;
  ASSERT_EQ(Policy({"show", path, "--json"}, &output), 0) << output;
  nlohmann::json shown = nlohmann::json::parse(output);
  EXPECT_EQ(shown["policy_version"], VersionOf(4));
  EXPECT_EQ(shown["normalization"]["inputs"], 130);
  EXPECT_EQ(shown["candidates"].size(), 2u);
  EXPECT_EQ(shown["candidates"][0]["single_excluded"], false);
  EXPECT_EQ(shown["metadata"]["algorithm"], "bc");

  std::ofstream(dir + "/short.plpolicy", std::ios::binary)
      << testing::TinyPolicyFile(4).substr(0, 150);
  EXPECT_EQ(Policy({"show", dir + "/short.plpolicy"}, &output), 2);
  EXPECT_TRUE(absl::StrContains(output, "truncated")) << output;
  EXPECT_EQ(Policy({"push", path}, &output), 2) << "no --store: bad input";
}

}  // namespace
}  // namespace phaseloop::policy_store

namespace phaseloop::policy_store {
namespace {

// Keys, signatures, a store that asks both a signature and a token, and a
// pull that checks the download: what README "Signing policies" promises.
TEST(PolicyCommandSigningTest, KeygenSignServePushPullWithTrustAndToken) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  const std::string p1 = WriteArtifact(dir, 1);
  std::string output;
  ASSERT_EQ(
      Policy({"keygen", "--out", dir + "/keys", "--comment", "ci"}, &output), 0)
      << output;
  ASSERT_EQ(Policy({"keygen", "--out", dir + "/other"}, &output), 0);
  const std::string key = dir + "/keys/policy-signing.key";
  const std::string trust = dir + "/keys/policy-signing.pub";
  // A second keygen into the same directory is refused; the key survives.
  const std::string secret = ReadFileOrEmpty(key);
  EXPECT_EQ(Policy({"keygen", "--out", dir + "/keys"}, &output), 2);
  EXPECT_TRUE(absl::StrContains(output, "never overwritten")) << output;
  EXPECT_EQ(Policy({"keygen", "--out", ""}, &output), 2);
  EXPECT_TRUE(absl::StrContains(output, "--out is empty")) << output;
  EXPECT_EQ(ReadFileOrEmpty(key), secret);

  std::ofstream(dir + "/token") << "0123456789abcdef0123\n";
  auto serve = std::make_unique<ServeProcess>(
      dir + "/store", dir + "/address",
      std::vector<std::string>{"--trust-file", trust, "--token-file",
                               dir + "/token"});
  ASSERT_FALSE(serve->address().empty());
  const std::string store = serve->address();

  // Unsigned: refused by the store, exit 2, nothing stored.
  EXPECT_EQ(
      Policy({"push", p1, "--store", store, "--token-file", dir + "/token"},
             &output),
      2);
  EXPECT_TRUE(absl::StrContains(output, "is not signed")) << output;
  ASSERT_EQ(Policy({"sign", p1, "--key", key}, &output), 0) << output;
  EXPECT_TRUE(absl::StrContains(output, p1 + ".sig")) << output;
  // Signed, but no token.
  EXPECT_EQ(Policy({"push", p1, "--store", store}, &output), 2);
  EXPECT_TRUE(absl::StrContains(output, "asks a token")) << output;
  ASSERT_EQ(Policy({"push", p1, "--store", store, "--channel", "stable",
                    "--token-file", dir + "/token"},
                   &output),
            0)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "signed by")) << output;
  // The listing names the key each version is signed by (through gRPC).
  const std::string sig_text = ReadFileOrEmpty(p1 + ".sig");
  const size_t at = sig_text.find("key_id ");
  ASSERT_NE(at, std::string::npos) << sig_text;
  const std::string key_id = sig_text.substr(at + 7, 16);
  ASSERT_EQ(Policy({"list", "--store", store}, &output), 0) << output;
  EXPECT_TRUE(absl::StrContains(output, "SIGNED BY")) << output;
  EXPECT_TRUE(absl::StrContains(output, key_id)) << output;
  ASSERT_EQ(Policy({"list", "--store", store, "--json"}, &output), 0);
  EXPECT_TRUE(absl::StrContains(output, "\"signed_by\": \"" + key_id + "\""))
      << output;

  // A pull that trusts another key writes nothing.
  const std::string out = dir + "/pulled.plpolicy";
  EXPECT_EQ(Policy({"pull", "--store", store, "--channel", "stable", "--out",
                    out, "--trust-file", dir + "/other/policy-signing.pub"},
                   &output),
            2);
  EXPECT_TRUE(absl::StrContains(output, "does not list")) << output;
  EXPECT_EQ(ReadFileOrEmpty(out), "");
  EXPECT_EQ(ReadFileOrEmpty(out + ".sig"), "");
  ASSERT_EQ(Policy({"pull", "--store", store, "--channel", "stable", "--out",
                    out, "--trust-file", trust},
                   &output),
            0)
      << output;
  EXPECT_EQ(ReadFileOrEmpty(out), ReadFileOrEmpty(p1));
  EXPECT_EQ(ReadFileOrEmpty(out + ".sig"), ReadFileOrEmpty(p1 + ".sig"));
  ASSERT_EQ(Policy({"verify", out, "--trust-file", trust}, &output), 0)
      << output;
  EXPECT_EQ(serve->Stop(), 0);

  // A malformed trust file stops serve before it listens.
  std::ofstream(dir + "/bad_trust") << "phaseloop-trust v1\nnope\n";
  EXPECT_EQ(Policy({"serve", "--dir", dir + "/store2", "--trust-file",
                    dir + "/bad_trust"},
                   &output),
            2);
  EXPECT_TRUE(absl::StrContains(output, "bad_trust' line 2")) << output;
}

TEST(PolicyCommandSigningTest, ServeRefusesANonLoopbackAddressWithoutAToken) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  std::string output;
  EXPECT_EQ(Policy({"serve", "--dir", dir + "/store", "--listen", "0.0.0.0:0"},
                   &output),
            2);
  EXPECT_TRUE(absl::StrContains(output, "without a token")) << output;
  EXPECT_TRUE(absl::StrContains(output, "--token-file")) << output;
}

}  // namespace
}  // namespace phaseloop::policy_store
