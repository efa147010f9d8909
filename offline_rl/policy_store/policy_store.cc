#include "offline_rl/policy_store/policy_store.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace phaseloop::policy_store {

absl::Status CheckChannelName(absl::string_view channel) {
  const std::string known = absl::StrJoin(kPolicyChannels, ", ");
  if (channel.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no channel given: use one of ", known));
  }
  for (absl::string_view name : kPolicyChannels) {
    if (channel == name) return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("no channel '", channel,
                                          "' in the policy store: channels "
                                          "are ",
                                          known));
}

absl::Status CheckVerdictName(absl::string_view verdict) {
  if (verdict == kVerdictFailed || verdict == kVerdictCleared) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", verdict, "' is not a verdict: use ", kVerdictFailed,
                   " (the version must not become stable) or ", kVerdictCleared,
                   " (withdraw a failed mark)"));
}

}  // namespace phaseloop::policy_store
