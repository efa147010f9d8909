#include "staging_harness/search/search_inputs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "compiler_driver/ir/module_loader.h"
#include "nlohmann/json.hpp"

namespace phaseloop::search {
namespace {

namespace fs = std::filesystem;

bool IsModulePath(const std::string& path) {
  return ir::IsSourcePath(path) || fs::path(path).extension() == ".bc" ||
         fs::path(path).extension() == ".ll";
}

std::string StringField(const nlohmann::json& entry, const char* name) {
  auto it = entry.find(name);
  return it != entry.end() && it->is_string() ? it->get<std::string>() : "";
}

absl::StatusOr<std::vector<ModuleInput>> ReadManifest(
    const fs::path& dir, const std::string& split,
    std::vector<std::string>* warnings) {
  const fs::path manifest = dir / "manifest.json";
  std::ifstream in(manifest);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  const nlohmann::json* list = nullptr;
  const std::string corpus_opt_level =
      doc.is_object() ? StringField(doc, "opt_level") : std::string();
  if (doc.is_array()) {
    list = &doc;
  } else if (doc.is_object() && doc.contains("modules") &&
             doc["modules"].is_array()) {
    list = &doc["modules"];
  }
  if (list == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "corpus manifest '", manifest.string(),
        "' is not JSON with a \"modules\" array; rebuild the corpus with "
        "`phaseloop corpus build`"));
  }
  std::vector<ModuleInput> out;
  int skipped = 0;
  for (const nlohmann::json& entry : *list) {
    if (!entry.is_object()) continue;
    const std::string bitcode = StringField(entry, "bitcode_path");
    if (bitcode.empty()) {
      ++skipped;
      continue;
    }
    if (!split.empty() && StringField(entry, "split") != split) continue;
    ModuleInput input;
    input.path =
        fs::path(bitcode).is_absolute() ? bitcode : (dir / bitcode).string();
    input.name = StringField(entry, "name");
    if (input.name.empty()) input.name = fs::path(bitcode).filename().string();
    input.opt_level = StringField(entry, "opt_level");
    if (input.opt_level.empty()) input.opt_level = corpus_opt_level;
    if (entry.contains("ir_count_o0") &&
        entry["ir_count_o0"].is_number_integer()) {
      input.ir_count_o0 = entry["ir_count_o0"].get<int64_t>();
    }
    std::error_code error;
    if (!fs::is_regular_file(input.path, error)) {
      if (warnings) {
        warnings->push_back(absl::StrCat("module '", input.name, "': '",
                                         input.path, "' is missing; skipped"));
      }
      continue;
    }
    out.push_back(std::move(input));
  }
  if (skipped > 0 && warnings) {
    warnings->push_back(absl::StrCat(skipped,
                                     " manifest entries have no "
                                     "bitcode_path (not built); skipped"));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<ModuleInput>> ListCorpus(
    const std::string& dir, const std::string& split,
    std::vector<std::string>* warnings) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--corpus '", dir,
                     "' is not a directory (a corpus with manifest.json, "
                     "or C/C++ sources and .bc/.ll files)"));
  }
  std::vector<ModuleInput> out;
  if (fs::exists(fs::path(dir) / "manifest.json", error)) {
    absl::StatusOr<std::vector<ModuleInput>> manifest =
        ReadManifest(fs::path(dir), split, warnings);
    if (!manifest.ok()) return manifest.status();
    out = std::move(*manifest);
  } else {
    for (const fs::directory_entry& entry :
         fs::directory_iterator(dir, error)) {
      const std::string path = entry.path().string();
      if (entry.is_regular_file(error) && IsModulePath(path)) {
        out.push_back({entry.path().filename().string(), path, ""});
      }
    }
    std::sort(out.begin(), out.end(),
              [](const ModuleInput& a, const ModuleInput& b) {
                return a.path < b.path;
              });
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--corpus '", dir, "' holds no modules",
        split.empty() ? "" : absl::StrCat(" in split '", split, "'"),
        " (.c/.cc/.cpp/.bc/.ll files, or manifest.json entries with "
        "bitcode_path)"));
  }
  return out;
}

absl::StatusOr<ModuleInput> InputFile(const std::string& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--input '", path, "' is not a readable file"));
  }
  if (!IsModulePath(path)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--input '", path, "' is not a C/C++ source, .bc or .ll file"));
  }
  return ModuleInput{fs::path(path).filename().string(), path, ""};
}

}  // namespace phaseloop::search
