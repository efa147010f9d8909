#include "compiler_driver/cc_wrapper/policy.h"

#include <sstream>

#include "absl/strings/string_view.h"
#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/ir/module_loader.h"

namespace phaseloop::cc_wrapper {
namespace {

class BaselinePolicy : public PolicyRunner {
 public:
  const char* kind() const override { return "baseline"; }
  const std::string& version() const override { return version_; }
  std::string Decide(const PolicyInput& input) const override {
    return BaselinePipeline(input.opt_level);
  }

 private:
  std::string version_ = "baseline";
};

class FixedPolicy : public PolicyRunner {
 public:
  explicit FixedPolicy(std::string pipeline)
      : pipeline_(std::move(pipeline)),
        version_(ir::ContentHash("fixed:" + pipeline_)) {}
  const char* kind() const override { return "fixed"; }
  const std::string& version() const override { return version_; }
  std::string Decide(const PolicyInput&) const override { return pipeline_; }

 private:
  std::string pipeline_;
  std::string version_;
};

class TablePolicy : public PolicyRunner {
 public:
  TablePolicy(std::unordered_map<std::string, std::string> rows,
              std::string version)
      : rows_(std::move(rows)), version_(std::move(version)) {}
  const char* kind() const override { return "table"; }
  const std::string& version() const override { return version_; }
  std::string Decide(const PolicyInput& input) const override {
    auto it = rows_.find(input.module_hash);
    return it != rows_.end() ? it->second : BaselinePipeline(input.opt_level);
  }

 private:
  std::unordered_map<std::string, std::string> rows_;
  std::string version_;
};

bool IsHash(absl::string_view text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::string_view TrimView(absl::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' ||
                        s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\r')) s.remove_suffix(1);
  return s;
}

absl::StatusOr<std::unique_ptr<PolicyRunner>> ParseTable(
    const std::string& bytes, const std::string& path) {
  std::unordered_map<std::string, std::string> rows;
  std::istringstream in(bytes);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    absl::string_view text = TrimView(line);
    if (text.empty() || text.front() == '#') continue;
    size_t tab = text.find('\t');
    absl::string_view hash = tab == absl::string_view::npos
                                ? text : TrimView(text.substr(0, tab));
    absl::string_view pipeline = tab == absl::string_view::npos
                                    ? absl::string_view()
                                    : TrimView(text.substr(tab + 1));
    if (!IsHash(hash) || pipeline.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "policy table '", path, "' line ", number,
          ": expected '<module_hash: 32 hex digits><TAB><pipeline>', got '",
          text.substr(0, 80), "'"));
    }
    rows[std::string(hash)] = std::string(pipeline);
  }
  return std::unique_ptr<PolicyRunner>(
      new TablePolicy(std::move(rows), ir::ContentHash(bytes)));
}

absl::StatusOr<std::unique_ptr<PolicyRunner>> FromSpecLine(
    absl::string_view spec, const std::string& origin) {
  if (spec == "baseline") {
    return std::unique_ptr<PolicyRunner>(new BaselinePolicy());
  }
  if (absl::ConsumePrefix(&spec, "fixed:")) {
    absl::string_view pipeline = TrimView(spec);
    if (pipeline.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          origin, ": 'fixed:' needs a pipeline, e.g. fixed:default<Oz>"));
    }
    return std::unique_ptr<PolicyRunner>(new FixedPolicy(std::string(pipeline)));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      origin, ": unknown policy '", spec.substr(0, 80),
      "' (expected baseline, fixed:<pipeline>, table:<file> or a policy "
      "file)"));
}

absl::StatusOr<std::unique_ptr<PolicyRunner>> FromFile(
    const std::string& path) {
  absl::StatusOr<std::string> bytes = ir::ReadFile(path);
  if (!bytes.ok()) {
    return absl::NotFoundError(absl::StrCat(
        "cannot read the policy file '", path,
        "': ", bytes.status().message(),
        "; pass an existing file or a built-in policy (baseline, "
        "fixed:<pipeline>)"));
  }
  if (absl::StartsWith(*bytes, "# phaseloop policy table")) {
    absl::string_view first(*bytes);
    first = first.substr(0, first.find('\n'));
    if (TrimView(first) != kTableHeader) {
      return absl::FailedPreconditionError(absl::StrCat(
          "policy file '", path, "' has format '", TrimView(first),
          "'; this phaseloop reads '", kTableHeader,
          "' — regenerate the table with this version"));
    }
    return ParseTable(*bytes, path);
  }
  // One spec line, comments and blank lines aside.
  std::string spec;
  std::istringstream in(*bytes);
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view text = TrimView(line);
    if (text.empty() || text.front() == '#') continue;
    if (!spec.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "policy file '", path, "' holds more than one policy line; it "
          "must hold one (baseline or fixed:<pipeline>) or be a table "
          "starting with '", kTableHeader, "'"));
    }
    spec = std::string(text);
  }
  if (spec.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "policy file '", path, "' is empty; write a policy line such as "
        "'baseline' into it"));
  }
  if (absl::StartsWith(spec, "table:")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "policy file '", path, "' refers to another file (", spec,
        "); put the table itself in the policy file so that build systems "
        "see its content"));
  }
  return FromSpecLine(spec, absl::StrCat("policy file '", path, "'"));
}

}  // namespace

std::string BaselinePipeline(const std::string& opt_level) {
  return absl::StrCat("default<", opt_level, ">");
}

absl::StatusOr<std::unique_ptr<PolicyRunner>> LoadPolicy(
    const std::string& spec) {
  absl::string_view text = TrimView(spec);
  if (text == "baseline" || absl::StartsWith(text, "fixed:")) {
    return FromSpecLine(text, "policy");
  }
  if (absl::ConsumePrefix(&text, "table:")) {
    std::string path(TrimView(text));
    absl::StatusOr<std::string> bytes = ir::ReadFile(path);
    if (!bytes.ok()) {
      return absl::NotFoundError(absl::StrCat(
          "cannot read the policy table '", path, "': ",
          bytes.status().message()));
    }
    return ParseTable(*bytes, path);
  }
  if (text.empty()) {
    return absl::InvalidArgumentError(
        "empty policy; use baseline, fixed:<pipeline>, table:<file> or a "
        "policy file");
  }
  return FromFile(std::string(text));
}

}  // namespace phaseloop::cc_wrapper
