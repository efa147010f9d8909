#include "canary/load/targets.h"

#include <cmath>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace phaseloop::canary::load {
namespace {

constexpr char kForm[] =
    "; expected NAME=HOST:PORT[:WEIGHT], e.g. canary=127.0.0.1:8081:5";

absl::Status CheckWeights(const std::vector<Target>& targets) {
  double total = 0;
  for (const Target& t : targets) {
    if (!std::isfinite(t.weight) || t.weight < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "target ", t.name, ": weight ", t.weight, " is not a number >= 0"));
    }
    total += t.weight;
  }
  if (total <= 0) {
    return absl::InvalidArgumentError(
        "every target's weight is 0; give some target a weight > 0");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Target> ParseTarget(absl::string_view text) {
  const size_t equals = text.find('=');
  if (equals == absl::string_view::npos || equals == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", text, "\" has no NAME=", kForm));
  }
  Target target;
  target.name = std::string(text.substr(0, equals));
  std::vector<absl::string_view> parts =
      absl::StrSplit(text.substr(equals + 1), ':');
  if (parts.size() < 2 || parts.size() > 3 || parts[0].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", text, "\": address is not HOST:PORT", kForm));
  }
  target.host = std::string(parts[0]);
  if (!absl::SimpleAtoi(parts[1], &target.port) || target.port < 1 ||
      target.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target \"", text, "\": port \"", parts[1], "\" is not in 1..65535"));
  }
  if (parts.size() == 3 &&
      (!absl::SimpleAtod(parts[2], &target.weight) ||
       !std::isfinite(target.weight) || target.weight < 0)) {
    return absl::InvalidArgumentError(absl::StrCat("target \"", text,
                                                   "\": weight \"", parts[2],
                                                   "\" is not a number >= 0"));
  }
  return target;
}

absl::StatusOr<TargetSet> TargetSet::Create(std::vector<Target> targets) {
  if (targets.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no target to send to; give one or more", kForm));
  }
  std::set<std::string> names;
  for (const Target& t : targets) {
    if (t.name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("a target has no name", kForm));
    }
    if (!names.insert(t.name).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "target ", t.name, " is given twice; name each target once"));
    }
    if (t.host.empty() || t.port < 1 || t.port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("target ", t.name, ": address ", t.host, ":", t.port,
                       " is not HOST:PORT with a port in 1..65535"));
    }
  }
  if (absl::Status s = CheckWeights(targets); !s.ok()) return s;
  TargetSet set;
  set.size_ = targets.size();
  set.targets_ = std::move(targets);
  return set;
}

TargetSet::TargetSet(const TargetSet& other) { *this = other; }

TargetSet& TargetSet::operator=(const TargetSet& other) {
  if (this == &other) return *this;
  std::vector<Target> copy = other.targets();
  std::lock_guard<std::mutex> lock(mutex_);
  targets_ = std::move(copy);
  size_ = targets_.size();
  return *this;
}

std::vector<Target> TargetSet::targets() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return targets_;
}

int TargetSet::IndexOf(absl::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < targets_.size(); ++i) {
    if (targets_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

absl::Status TargetSet::SetWeights(
    const std::vector<std::pair<std::string, double>>& weights) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Target> updated = targets_;
  for (const auto& [name, weight] : weights) {
    bool found = false;
    for (Target& t : updated) {
      if (t.name != name) continue;
      t.weight = weight;
      found = true;
    }
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat("no target named ", name, " to weigh"));
    }
  }
  if (absl::Status s = CheckWeights(updated); !s.ok()) return s;
  targets_ = std::move(updated);
  return absl::OkStatus();
}

int TargetSet::Choose(double u) const {
  std::lock_guard<std::mutex> lock(mutex_);
  double total = 0;
  for (const Target& t : targets_) total += t.weight;
  const double point = u * total;
  double below = 0;
  int last_positive = 0;
  for (size_t i = 0; i < targets_.size(); ++i) {
    if (targets_[i].weight <= 0) continue;
    last_positive = static_cast<int>(i);
    below += targets_[i].weight;
    if (point < below) return last_positive;
  }
  return last_positive;  // u * total rounded up to total
}

}  // namespace phaseloop::canary::load
