#include "staging_harness/workloads/workload.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/config/yaml_documents.h"
#include "common/config/yaml_keys.h"

namespace phaseloop::workloads {
namespace {

namespace fs = std::filesystem;

constexpr char kSchemaHint[] = "staging_harness/workloads/README.md";

// Every problem of one file, in document order.
class Problems {
 public:
  explicit Problems(std::string path) : path_(std::move(path)) {}

  void Add(const std::string& field, const std::string& problem) {
    lines_.push_back(absl::StrCat(path_, ": ", field, ": ", problem));
  }
  void Missing(const std::string& field, const std::string& example) {
    Add(field, absl::StrCat("missing; add it, e.g. ", example,
                            " (schema: ", kSchemaHint, ")"));
  }
  bool empty() const { return lines_.empty(); }
  absl::Status ToStatus() const {
    return absl::InvalidArgumentError(absl::StrJoin(lines_, "\n"));
  }

 private:
  std::string path_;
  std::vector<std::string> lines_;
};

std::string Field(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : absl::StrCat(prefix, ".", key);
}

// What a value is, for messages: the scalar itself, or its kind.
std::string Describe(const YAML::Node& node) {
  if (node.IsScalar()) return absl::StrCat("'", node.Scalar(), "'");
  if (node.IsSequence()) return node.size() == 0 ? "an empty list" : "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

// Refuses keys of the mapping `node` not in `allowed`, and keys given twice.
void CheckKeys(const YAML::Node& node, const std::string& prefix,
               const std::set<std::string>& allowed, Problems& problems) {
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const std::string key = config::MappingKeyText(entry.first);
    if (!seen.insert(key).second) {
      problems.Add(Field(prefix, key), "given twice; keep one");
    } else if (!allowed.count(key)) {
      problems.Add(Field(prefix, key),
                   absl::StrCat("unknown field; expected one of: ",
                                absl::StrJoin(allowed, ", ")));
    }
  }
}

std::optional<std::string> GetString(const YAML::Node& parent,
                                     const std::string& key,
                                     const std::string& field,
                                     const char* example, Problems& problems) {
  const YAML::Node node = parent[key];
  if (!node || node.IsNull()) {
    if (example != nullptr) problems.Missing(field, example);
    return std::nullopt;
  }
  if (!node.IsScalar() || node.Scalar().empty()) {
    problems.Add(field, absl::StrCat("must be a non-empty string, got ",
                                     Describe(node)));
    return std::nullopt;
  }
  return node.Scalar();
}

// A positive, finite number of seconds.
std::optional<double> GetPositive(const YAML::Node& parent,
                                  const std::string& key,
                                  const std::string& field, const char* example,
                                  Problems& problems) {
  const YAML::Node node = parent[key];
  if (!node || node.IsNull()) {
    if (example != nullptr) problems.Missing(field, example);
    return std::nullopt;
  }
  double value = 0;
  if (!node.IsScalar() || !absl::SimpleAtod(node.Scalar(), &value) ||
      !std::isfinite(value) || value <= 0) {
    problems.Add(
        field, absl::StrCat("must be a positive number, got ", Describe(node)));
    return std::nullopt;
  }
  return value;
}

std::optional<double> GetNonNegative(const YAML::Node& node,
                                     const std::string& field,
                                     Problems& problems) {
  double value = 0;
  if (!node.IsScalar() || !absl::SimpleAtod(node.Scalar(), &value) ||
      !std::isfinite(value) || value < 0) {
    problems.Add(field,
                 absl::StrCat("must be a number >= 0, got ", Describe(node)));
    return std::nullopt;
  }
  return value;
}

// A path inside the directory it is relative to: not absolute, no "..".
bool CheckRelativePath(const std::string& path, const std::string& field,
                       Problems& problems) {
  bool escapes = false;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") escapes = true;
  }
  if (path.front() == '/' || escapes) {
    problems.Add(field, absl::StrCat("'", path,
                                     "' must be a relative path inside its "
                                     "directory (no leading '/', no '..')"));
    return false;
  }
  return true;
}

// A non-empty list of relative paths.
std::vector<std::string> GetPathList(const YAML::Node& node,
                                     const std::string& field,
                                     Problems& problems) {
  std::vector<std::string> paths;
  if (!node.IsSequence() || node.size() == 0) {
    problems.Add(field, absl::StrCat("must be a non-empty list of paths, got ",
                                     Describe(node)));
    return paths;
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string item = absl::StrCat(field, "[", i, "]");
    if (!node[i].IsScalar() || node[i].Scalar().empty()) {
      problems.Add(item,
                   absl::StrCat("must be a path, got ", Describe(node[i])));
    } else if (std::find(paths.begin(), paths.end(), node[i].Scalar()) !=
               paths.end()) {
      problems.Add(item, absl::StrCat("'", node[i].Scalar(),
                                      "' is listed twice; list it once"));
    } else if (CheckRelativePath(node[i].Scalar(), item, problems)) {
      paths.push_back(node[i].Scalar());
    }
  }
  return paths;
}

bool IsValidName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return name.front() != '-' && name.front() != '.';
}

constexpr char kDebianPrefix[] = "debian:";

// `source`: a directory relative to the workload file, or
// debian:<package> (not fetched here: loading never touches the network).
void ParseSource(const std::string& source, const std::string& path,
                 Workload& workload, Problems& problems) {
  if (absl::StartsWith(source, kDebianPrefix)) {
    const std::string package = source.substr(sizeof(kDebianPrefix) - 1);
    if (IsDebianPackageName(package)) {
      workload.debian_package = package;
    } else {
      problems.Add("source",
                   absl::StrCat("'", package,
                                "' is not a Debian source package name (2 or "
                                "more of a-z 0-9 + - ., starting with a letter "
                                "or digit); write e.g. source: debian:bzip2"));
    }
    return;
  }
  const fs::path dir = fs::path(path).parent_path() / source;
  std::error_code error;
  if (fs::is_directory(dir, error)) {
    workload.source_dir = dir.lexically_normal().string();
  } else {
    problems.Add("source",
                 absl::StrCat("'", dir.string(),
                              "' is not a directory; source is relative to "
                              "the workload file (or debian:<package>)"));
  }
}

void ParseBuild(const YAML::Node& node, BuildSpec& build, Problems& problems) {
  if (!node.IsMap()) {
    problems.Add("build",
                 absl::StrCat("must be a mapping with kind, command and "
                              "artifacts, got ",
                              Describe(node)));
    return;
  }
  CheckKeys(node, "build", {"kind", "command", "artifacts", "timeout_s"},
            problems);
  if (auto kind =
          GetString(node, "kind", "build.kind", "kind: make", problems)) {
    if (*kind == "make") {
      build.kind = BuildKind::kMake;
    } else if (*kind == "cmake") {
      build.kind = BuildKind::kCmake;
    } else if (*kind == "command") {
      build.kind = BuildKind::kCommand;
    } else if (*kind == "bazel") {
      build.kind = BuildKind::kBazel;
    } else {
      problems.Add("build.kind",
                   absl::StrCat("must be one of make, cmake, command, bazel, "
                                "got '",
                                *kind, "'"));
    }
  }
  if (auto command = GetString(node, "command", "build.command",
                               "command: make -j2", problems)) {
    build.command = *command;
  }
  if (const YAML::Node artifacts = node["artifacts"]; artifacts) {
    build.artifacts = GetPathList(artifacts, "build.artifacts", problems);
  } else {
    problems.Missing("build.artifacts", "artifacts: [wordfreq]");
  }
  if (node["timeout_s"]) {
    if (auto t = GetPositive(node, "timeout_s", "build.timeout_s", nullptr,
                             problems)) {
      build.timeout_s = *t;
    }
  }
}

void ParseInputs(const YAML::Node& node, const std::string& source_dir,
                 std::vector<Input>& inputs, Problems& problems) {
  if (!node.IsSequence()) {
    problems.Add("inputs",
                 absl::StrCat("must be a list, got ", Describe(node)));
    return;
  }
  std::set<std::string> files;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string field = absl::StrCat("inputs[", i, "]");
    const YAML::Node entry = node[i];
    if (!entry.IsMap()) {
      problems.Add(field, absl::StrCat("must be a mapping with file (and "
                                       "generate, seed), got ",
                                       Describe(entry)));
      continue;
    }
    CheckKeys(entry, field, {"file", "generate", "seed"}, problems);
    Input input;
    const auto file = GetString(entry, "file", field + ".file",
                                "file: data/words.txt", problems);
    if (file && CheckRelativePath(*file, field + ".file", problems)) {
      input.file = *file;
      if (!files.insert(*file).second) {
        problems.Add(field + ".file",
                     absl::StrCat("'", *file, "' is already an input"));
      }
    }
    const bool has_generate = static_cast<bool>(entry["generate"]);
    const bool has_seed = static_cast<bool>(entry["seed"]);
    if (has_generate) {
      if (auto generate = GetString(entry, "generate", field + ".generate",
                                    nullptr, problems)) {
        input.generate = *generate;
      }
      if (!has_seed) {
        problems.Missing(field + ".seed",
                         "seed: 1 (a generator's inputs must be the same on "
                         "every run)");
      }
    }
    if (has_seed) {
      const YAML::Node seed = entry["seed"];
      if (!has_generate) {
        problems.Add(field + ".seed",
                     "only a generated input has a seed; add generate or "
                     "remove seed");
      } else if (!seed.IsScalar() ||
                 !absl::SimpleAtoi(seed.Scalar(), &input.seed) ||
                 seed.Scalar().front() == '-') {
        problems.Add(
            field + ".seed",
            absl::StrCat("must be an integer >= 0, got ", Describe(seed)));
      }
    }
    // A Debian package's shipped inputs are checked once it is fetched
    // (ResolveWorkloadSource); an unresolved source was reported already.
    if (!has_generate && !input.file.empty() && !source_dir.empty()) {
      const fs::path shipped = fs::path(source_dir) / input.file;
      std::error_code error;
      if (!fs::is_regular_file(shipped, error)) {
        problems.Add(field + ".file",
                     absl::StrCat("shipped input '", shipped.string(),
                                  "' is not a file; ship it under source or "
                                  "generate it"));
      }
    }
    inputs.push_back(std::move(input));
  }
}

void ParseCheck(const YAML::Node& node, const std::string& field, Check& check,
                Problems& problems) {
  if (!node.IsMap()) {
    problems.Add(field,
                 absl::StrCat("must be a mapping, got ", Describe(node)));
    return;
  }
  CheckKeys(node, field,
            {"exit_status", "stdout", "files", "compare", "relative_tolerance",
             "absolute_tolerance"},
            problems);
  if (const YAML::Node status = node["exit_status"]; status) {
    int value = -1;
    if (!status.IsScalar() || !absl::SimpleAtoi(status.Scalar(), &value) ||
        value < 0 || value > 255) {
      problems.Add(
          field + ".exit_status",
          absl::StrCat("must be an integer 0-255, got ", Describe(status)));
    } else {
      check.exit_status = value;
    }
  }
  if (const YAML::Node out = node["stdout"]; out) {
    // YAML 1.2's booleans only, as every phaseloop config (yes/on are
    // errors).
    if (out.IsScalar() && (out.Scalar() == "true" || out.Scalar() == "false")) {
      check.compare_stdout = out.Scalar() == "true";
    } else {
      problems.Add(field + ".stdout",
                   absl::StrCat("must be true or false, got ", Describe(out)));
    }
  }
  if (const YAML::Node files = node["files"]; files) {
    check.files = GetPathList(files, field + ".files", problems);
  }
  if (auto compare =
          GetString(node, "compare", field + ".compare", nullptr, problems)) {
    if (*compare == "exact") {
      check.compare = Compare::kExact;
    } else if (*compare == "numeric") {
      check.compare = Compare::kNumeric;
    } else {
      problems.Add(
          field + ".compare",
          absl::StrCat("must be exact or numeric, got '", *compare, "'"));
    }
  }
  const bool has_tolerance =
      node["relative_tolerance"] || node["absolute_tolerance"];
  if (node["relative_tolerance"]) {
    if (auto t = GetNonNegative(node["relative_tolerance"],
                                field + ".relative_tolerance", problems)) {
      check.relative_tolerance = *t;
    }
  }
  if (node["absolute_tolerance"]) {
    if (auto t = GetNonNegative(node["absolute_tolerance"],
                                field + ".absolute_tolerance", problems)) {
      check.absolute_tolerance = *t;
    }
  }
  if (check.compare == Compare::kExact && has_tolerance) {
    problems.Add(field + ".compare",
                 "a tolerance applies only to compare: numeric; set "
                 "compare: numeric or remove the tolerance");
  } else if (check.compare == Compare::kNumeric && !has_tolerance) {
    problems.Missing(field + ".relative_tolerance",
                     "relative_tolerance: 1e-9 (compare: numeric needs a "
                     "tolerance)");
  }
}

void ParseRuns(const YAML::Node& node, const Check& default_check,
               std::vector<RunCommand>& runs, Problems& problems) {
  if (!node.IsSequence() || node.size() == 0) {
    problems.Add("run", absl::StrCat("must be a non-empty list of {command, "
                                     "timeout_s}, got ",
                                     Describe(node)));
    return;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string field = absl::StrCat("run[", i, "]");
    const YAML::Node entry = node[i];
    if (!entry.IsMap()) {
      problems.Add(field, absl::StrCat("must be a mapping with command and "
                                       "timeout_s, got ",
                                       Describe(entry)));
      continue;
    }
    CheckKeys(entry, field, {"name", "command", "timeout_s", "check"},
              problems);
    RunCommand run;
    run.name = field;
    if (auto name =
            GetString(entry, "name", field + ".name", nullptr, problems)) {
      run.name = *name;
    }
    if (!names.insert(run.name).second) {
      problems.Add(field + ".name",
                   absl::StrCat("'", run.name, "' names another run too"));
    }
    if (auto command = GetString(entry, "command", field + ".command",
                                 "command: ./wordfreq words.txt", problems)) {
      run.command = *command;
    }
    if (auto timeout = GetPositive(entry, "timeout_s", field + ".timeout_s",
                                   "timeout_s: 10", problems)) {
      run.timeout_s = *timeout;
    }
    run.check = default_check;
    if (entry["check"]) {
      run.check = Check();
      ParseCheck(entry["check"], field + ".check", run.check, problems);
    }
    runs.push_back(std::move(run));
  }
}

}  // namespace

bool IsDebianPackageName(absl::string_view name) {
  if (name.size() < 2) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '+' && c != '-' && c != '.'))) {
      return false;
    }
  }
  return true;
}

const char* SplitName(Split split) {
  return split == Split::kTrain ? "train" : "test";
}

const char* BuildKindName(BuildKind kind) {
  switch (kind) {
    case BuildKind::kMake:
      return "make";
    case BuildKind::kCmake:
      return "cmake";
    case BuildKind::kCommand:
      return "command";
    case BuildKind::kBazel:
      return "bazel";
  }
  return "?";
}

absl::StatusOr<Workload> ParseWorkload(const std::string& text,
                                       const std::string& path) {
  if (const int line = config::SecondYamlDocumentLine(text); line > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ":", line,
        ": a second YAML document begins here; a workload file holds one "
        "(the rest would be ignored): remove the '---' line, or put each "
        "workload in a file of its own"));
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":", e.mark.line + 1, ":", e.mark.column + 1,
                     ": not valid YAML: ", e.msg));
  }
  Problems problems(path);
  if (!root.IsMap()) {
    problems.Add("(top level)",
                 absl::StrCat("must be a mapping with name, split, source, "
                              "build and run, got ",
                              Describe(root)));
    return problems.ToStatus();
  }
  CheckKeys(root, "",
            {"name", "split", "description", "source", "build", "inputs", "run",
             "check"},
            problems);
  Workload workload;
  workload.path = path;
  if (auto name = GetString(root, "name", "name", "name: wordfreq", problems)) {
    if (IsValidName(*name)) {
      workload.name = *name;
    } else {
      problems.Add("name", absl::StrCat("'", *name,
                                        "' must be 1-64 of a-z 0-9 - _ . "
                                        "(not starting with - or .)"));
    }
  }
  if (auto split =
          GetString(root, "split", "split", "split: train", problems)) {
    if (*split == "train") {
      workload.split = Split::kTrain;
    } else if (*split == "test") {
      workload.split = Split::kTest;
    } else {
      problems.Add("split",
                   absl::StrCat("must be train or test, got '", *split, "'"));
    }
  }
  if (auto description =
          GetString(root, "description", "description", nullptr, problems)) {
    workload.description = *description;
  }
  if (auto source =
          GetString(root, "source", "source", "source: example", problems)) {
    ParseSource(*source, path, workload, problems);
  }
  if (const YAML::Node build = root["build"]; build) {
    ParseBuild(build, workload.build, problems);
  } else {
    problems.Missing("build",
                     "build: {kind: make, command: make, artifacts: "
                     "[wordfreq]}");
  }
  if (const YAML::Node inputs = root["inputs"]; inputs) {
    ParseInputs(inputs, workload.source_dir, workload.inputs, problems);
  }
  Check default_check;
  if (const YAML::Node check = root["check"]; check) {
    ParseCheck(check, "check", default_check, problems);
  }
  if (const YAML::Node run = root["run"]; run) {
    ParseRuns(run, default_check, workload.runs, problems);
  } else {
    problems.Missing("run",
                     "run: [{command: ./wordfreq words.txt, "
                     "timeout_s: 10}]");
  }
  if (!problems.empty()) return problems.ToStatus();
  return workload;
}

absl::StatusOr<Workload> LoadWorkload(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        path,
        ": cannot read the workload file; check the path (workloads "
        "live in configs/workloads/)"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseWorkload(text.str(), path);
}

}  // namespace phaseloop::workloads
