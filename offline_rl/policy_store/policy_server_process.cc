#include "offline_rl/policy_store/policy_server_process.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/files/atomic_file.h"

namespace phaseloop::policy_store {
namespace {

constexpr int kWaitSeconds = 30;  // for a store another process holds
constexpr char kInUse[] = "in use by another process";

std::string LogText(const std::string& path) {
  std::string text;
  (void)files::ReadWholeFile(path, &text);
  return text;
}

}  // namespace

absl::StatusOr<std::string> ServePolicyDirectory(
    const std::string& phaseloop, const std::string& dir,
    const std::string& files_prefix, const std::atomic<bool>* stop,
    process::BackgroundProcess* started, std::ostream* progress) {
  const std::string address_file = files_prefix + ".address";
  const process::BackgroundSpec spec = {
      {phaseloop, "policy", "serve", "--dir", dir, "--listen", "127.0.0.1:0",
       "--address-file", address_file},
      {},
      files_prefix + ".log"};
  absl::StatusOr<std::string> address;
  // A deadline, not a count of tries: each try starts a server, which took
  // about as long as the pause between tries on a loaded machine.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kWaitSeconds);
  for (int attempt = 0;; ++attempt) {
    const bool waited_enough = std::chrono::steady_clock::now() >= deadline;
    const size_t before = LogText(spec.log_path).size();
    address = process::StartServer(spec, address_file, started);
    const std::string log = LogText(spec.log_path);
    const bool in_use =
        absl::StrContains(log.substr(std::min(before, log.size())), kInUse);
    if (!address.ok() && in_use && waited_enough) {
      // Said as what it is: another canary run or loop holds the store
      // (it was "wrote no address to ...", after the wait).
      return absl::FailedPreconditionError(absl::StrCat(
          "the policy store ", dir, " is ", kInUse,
          " (another canary run or loop on this state directory, still "
          "running after ",
          kWaitSeconds,
          " s): wait for it to end, or give this run a --state-dir or "
          "--policy-dir of its own"));
    }
    if (address.ok() || !in_use || waited_enough ||
        (stop != nullptr && stop->load())) {
      return address;
    }
    if (attempt == 0 && progress != nullptr) {
      *progress << "the policy store " << dir << " is " << kInUse
                << "; waiting up to " << kWaitSeconds
                << " s for it to be released (a run that just ended may still "
                   "be stopping its server)"
                << std::endl;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace phaseloop::policy_store
