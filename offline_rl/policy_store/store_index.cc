#include "offline_rl/policy_store/store_index.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace phaseloop::policy_store::internal {
namespace {

using nlohmann::json;

json PolicyToJson(const StoredPolicy& policy) {
  json metrics = json::object();
  for (const auto& [name, value] : policy.metrics) metrics[name] = value;
  json j{{"policy_version", policy.policy_version},
         {"objective", policy.objective},
         {"formulation", policy.formulation},
         {"algorithm", policy.algorithm},
         {"metrics", metrics},
         {"parent_version", policy.parent_version},
         {"note", policy.note},
         {"pushed_unix_ms", policy.pushed_unix_ms},
         {"size_bytes", policy.size_bytes}};
  if (!policy.verdict.verdict.empty()) {
    j["verdict"] = {{"verdict", policy.verdict.verdict},
                    {"reason", policy.verdict.reason},
                    {"marked_unix_ms", policy.verdict.marked_unix_ms}};
  }
  return j;
}

json ChannelToJson(const ChannelState& channel) {
  return json{{"policy_version", channel.policy_version},
              {"updated_unix_ms", channel.updated_unix_ms},
              {"previous_versions", channel.previous_versions}};
}

// Both throw json::exception on a missing or mistyped field.
StoredPolicy PolicyFromJson(const json& j) {
  StoredPolicy policy;
  policy.policy_version = j.at("policy_version").get<std::string>();
  policy.objective = j.at("objective").get<std::string>();
  policy.formulation = j.at("formulation").get<std::string>();
  policy.algorithm = j.at("algorithm").get<std::string>();
  for (const auto& [name, value] : j.at("metrics").items()) {
    policy.metrics[name] = value.get<double>();
  }
  policy.parent_version = j.at("parent_version").get<std::string>();
  policy.note = j.at("note").get<std::string>();
  policy.pushed_unix_ms = j.at("pushed_unix_ms").get<int64_t>();
  policy.size_bytes = j.at("size_bytes").get<int64_t>();
  if (j.contains("verdict")) {  // absent in v1 and for unmarked versions
    const json& v = j.at("verdict");
    policy.verdict.verdict = v.at("verdict").get<std::string>();
    policy.verdict.reason = v.at("reason").get<std::string>();
    policy.verdict.marked_unix_ms = v.at("marked_unix_ms").get<int64_t>();
  }
  return policy;
}

ChannelState ChannelFromJson(const std::string& name, const json& j) {
  ChannelState channel;
  channel.name = name;
  channel.policy_version = j.at("policy_version").get<std::string>();
  channel.updated_unix_ms = j.at("updated_unix_ms").get<int64_t>();
  channel.previous_versions =
      j.at("previous_versions").get<std::vector<std::string>>();
  return channel;
}

// Every version a channel names must be stored.
absl::Status CheckReferences(const StoreIndex& index,
                             absl::string_view source) {
  std::map<std::string, bool> stored;
  for (const StoredPolicy& policy : index.policies) {
    if (!IsPolicyVersion(policy.policy_version)) {
      return absl::DataLossError(
          absl::StrCat(source, ": policy_version '", policy.policy_version,
                       "' is not 32 hex digits; the index is damaged"));
    }
    stored[policy.policy_version] = true;
    if (!policy.verdict.verdict.empty() &&
        !CheckVerdictName(policy.verdict.verdict).ok()) {
      return absl::DataLossError(absl::StrCat(
          source, ": version ", policy.policy_version, " has verdict '",
          policy.verdict.verdict, "', which is not failed or cleared"));
    }
  }
  for (const auto& [name, channel] : index.channels) {
    if (!CheckChannelName(name).ok()) {
      return absl::DataLossError(
          absl::StrCat(source, ": unknown channel '", name, "'"));
    }
    std::vector<std::string> named = channel.previous_versions;
    if (!channel.policy_version.empty())
      named.push_back(channel.policy_version);
    for (const std::string& version : named) {
      if (!stored.count(version)) {
        return absl::DataLossError(
            absl::StrCat(source, ": channel ", name, " names version ", version,
                         " which is not stored; the index is damaged"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsPolicyVersion(absl::string_view text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string StoreIndexToJson(const StoreIndex& index) {
  json policies = json::array();
  for (const StoredPolicy& policy : index.policies) {
    policies.push_back(PolicyToJson(policy));
  }
  json channels = json::object();
  for (const auto& [name, channel] : index.channels) {
    channels[name] = ChannelToJson(channel);
  }
  bool any_verdict = false;
  for (const StoredPolicy& policy : index.policies) {
    any_verdict |= !policy.verdict.verdict.empty();
  }
  json root{{"format", any_verdict ? kStoreIndexFormat : kStoreIndexFormatV1},
            {"policies", policies},
            {"channels", channels}};
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

absl::StatusOr<StoreIndex> StoreIndexFromJson(absl::string_view json_text,
                                              absl::string_view source) {
  json root = json::parse(json_text.begin(), json_text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return absl::DataLossError(absl::StrCat(
        source,
        " is not valid JSON; the index is damaged (restore it from a "
        "backup: the artifacts beside it are intact)"));
  }
  const json format = root.value("format", json());
  if (!format.is_string() ||
      !absl::StartsWith(format.get<std::string>(), "phaseloop-policy-store/")) {
    return absl::DataLossError(absl::StrCat(
        source, " is not a phaseloop policy store index (no \"format\": \"",
        kStoreIndexFormat, "\")"));
  }
  if (format.get<std::string>() != kStoreIndexFormat &&
      format.get<std::string>() != kStoreIndexFormatV1) {
    return absl::FailedPreconditionError(
        absl::StrCat(source, " has format ", format.get<std::string>(),
                     "; this phaseloop reads ", kStoreIndexFormatV1, " and ",
                     kStoreIndexFormat,
                     ". Use the phaseloop that wrote it (or a newer one)."));
  }
  StoreIndex index;
  try {
    for (const json& policy : root.at("policies")) {
      index.policies.push_back(PolicyFromJson(policy));
    }
    for (const auto& [name, channel] : root.at("channels").items()) {
      index.channels[name] = ChannelFromJson(name, channel);
    }
  } catch (const json::exception& e) {
    return absl::DataLossError(
        absl::StrCat(source, ": ", e.what(), "; the index is damaged"));
  }
  absl::Status references = CheckReferences(index, source);
  if (!references.ok()) return references;
  return index;
}

}  // namespace phaseloop::policy_store::internal
