#ifndef PHASELOOP_COMMON_CONFIG_YAML_FIELDS_H_
#define PHASELOOP_COMMON_CONFIG_YAML_FIELDS_H_

// Reading a YAML config file field by field with errors that name the file,
// the field and where the fields are documented:
//   "configs/loop/demo.yaml: explore.budget_s: 0 is outside [1, 86400]
//    (configs/loop/demo.yaml documents every field)".
// Unknown keys and keys given twice are errors (a typo never silently means
// a default). Every config parser of phaseloop but the workload files'
// (which list every problem of a file at once) reads through this class, so
// a field's error reads the same in every file.
//
// Fields are named by `prefix` (the path of the mapping that holds them, ""
// for the top, e.g. "rollout.steps[0]") and `key`. The readers that take a
// key leave `out` unchanged when the key is absent; the ...Value readers
// read a node already in hand (a list item) and name it by `field`.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::config {

// A range of numbers whose ends may be open; hi may be infinite.
struct NumberRange {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;

  static NumberRange Closed(double lo, double hi) { return {lo, hi}; }
  // (lo, hi]
  static NumberRange AboveUpTo(double lo, double hi) {
    return {lo, hi, true, false};
  }
  // (lo, hi)
  static NumberRange Between(double lo, double hi) {
    return {lo, hi, true, true};
  }
  // (lo, inf)
  static NumberRange Above(double lo) {
    return {lo, std::numeric_limits<double>::infinity(), true, true};
  }
  // [lo, inf)
  static NumberRange AtLeast(double lo) {
    return {lo, std::numeric_limits<double>::infinity(), false, true};
  }

  bool Contains(double value) const;
  // "[1, 100]", "(0, 1]", "above 0", "at least 2".
  std::string Text() const;
};

// One value a choice field may take and what it means ("" for nothing).
struct ChoiceOption {
  std::string name;
  std::string meaning;
};

class YamlFields {
 public:
  // `source`: the file's path as the user gave it; `documented_in`: the
  // file whose comments document every field.
  YamlFields(std::string source, std::string documented_in);

  // The file's text: NotFound naming it and the documented example.
  absl::StatusOr<std::string> ReadText() const;
  // Parses `text` (InvalidArgument when it is not YAML). An empty text is a
  // null node, which the caller may take as "all defaults".
  absl::StatusOr<YAML::Node> Parse(const std::string& text) const;
  // ReadText and Parse, and the top must be a mapping.
  absl::StatusOr<YAML::Node> LoadMapping() const;

  absl::Status Bad(const std::string& field, const std::string& problem) const;
  // The error of a file `field` names (a judge a rollout names), prefixed
  // with this file and field; the inner error already says where its fields
  // are documented.
  absl::Status InFile(const std::string& field,
                      const absl::Status& inner) const;
  // `node` (named `prefix`, "" for the top) is a mapping whose every key is
  // in `allowed`, none given twice; `hints` say why a key a reader may expect
  // is not (e.g. a field of the format that phaseloop does not support).
  absl::Status CheckKeys(
      const std::string& prefix, const YAML::Node& node,
      const std::set<std::string>& allowed,
      const std::map<std::string, std::string>& hints = {}) const;

  // node[key] when present (out unchanged when absent; required = error).
  absl::Status Text(const std::string& prefix, const YAML::Node& node,
                    const std::string& key, std::string& out,
                    bool required = false) const;
  absl::Status Number(const std::string& prefix, const YAML::Node& node,
                      const std::string& key, const NumberRange& range,
                      double& out) const;
  absl::Status Number(const std::string& prefix, const YAML::Node& node,
                      const std::string& key, double lo, double hi,
                      double& out) const {
    return Number(prefix, node, key, NumberRange::Closed(lo, hi), out);
  }
  // A whole number in [lo, hi]; hi = kNoUpperEnd for none.
  static constexpr int64_t kNoUpperEnd = std::numeric_limits<int64_t>::max();
  absl::Status Int(const std::string& prefix, const YAML::Node& node,
                   const std::string& key, int64_t lo, int64_t hi,
                   int64_t& out) const;
  // The same into a narrower integer, refusing what it cannot hold.
  template <typename Integer,
            typename = std::enable_if_t<std::is_integral_v<Integer> &&
                                        !std::is_same_v<Integer, int64_t>>>
  absl::Status Int(const std::string& prefix, const YAML::Node& node,
                   const std::string& key, int64_t lo, int64_t hi,
                   Integer& out) const {
    if (!node[key]) return absl::OkStatus();
    if constexpr (std::is_same_v<Integer, uint64_t>) {
      return UnsignedInt(prefix, node, key, lo, hi, out);
    } else {
      int64_t value = 0;
      if (absl::Status s = Int(prefix, node, key, lo, hi, value); !s.ok()) {
        return s;
      }
      // What both int64_t and Integer hold.
      constexpr int64_t kLowest =
          std::is_unsigned_v<Integer>
              ? 0
              : static_cast<int64_t>(std::numeric_limits<Integer>::lowest());
      constexpr int64_t kMost =
          sizeof(Integer) < sizeof(int64_t)
              ? static_cast<int64_t>(std::numeric_limits<Integer>::max())
              : std::numeric_limits<int64_t>::max();
      if (value < kLowest || value > kMost) {
        return NotHeld(Field(prefix, key), value, kLowest, kMost);
      }
      out = static_cast<Integer>(value);
      return absl::OkStatus();
    }
  }
  // true/false (YAML 1.2's spellings only: yes/no/on/off are errors).
  absl::Status Bool(const std::string& prefix, const YAML::Node& node,
                    const std::string& key, bool& out) const;
  // A list of non-empty strings.
  absl::Status TextList(const std::string& prefix, const YAML::Node& node,
                        const std::string& key,
                        std::vector<std::string>& out) const;
  // One of `options`; the error lists them with their meanings.
  absl::Status Choice(const std::string& prefix, const YAML::Node& node,
                      const std::string& key,
                      const std::vector<ChoiceOption>& options,
                      std::string& out) const;

  // A number / whole number given as `value` itself (e.g. a list's item).
  absl::StatusOr<double> NumberValue(const std::string& field,
                                     const YAML::Node& value) const;
  absl::StatusOr<double> NumberValue(const std::string& field,
                                     const YAML::Node& value,
                                     const NumberRange& range) const;
  absl::StatusOr<int64_t> IntValue(const std::string& field,
                                   const YAML::Node& value, int64_t lo,
                                   int64_t hi) const;

  // A path relative to the config file's directory (absolute paths kept).
  std::string Resolve(const std::string& path) const;

  // "prefix.key" ("key" when prefix is empty).
  static std::string Field(const std::string& prefix, const std::string& key);
  // "\"text\"" for a scalar, "nothing (an empty value)" or "a list or
  // mapping", for "got ..." errors.
  static std::string Describe(const YAML::Node& node);

  const std::string& source() const { return source_; }

 private:
  // A uint64_t: beyond int64's range too when hi is kNoUpperEnd.
  absl::Status UnsignedInt(const std::string& prefix, const YAML::Node& node,
                           const std::string& key, int64_t lo, int64_t hi,
                           uint64_t& out) const;
  // "N is outside [lowest, most]": what the field's type cannot hold.
  absl::Status NotHeld(const std::string& field, int64_t value, int64_t lowest,
                       int64_t most) const;

  std::string source_;
  std::string documented_in_;
};

}  // namespace phaseloop::config

#endif  // PHASELOOP_COMMON_CONFIG_YAML_FIELDS_H_
