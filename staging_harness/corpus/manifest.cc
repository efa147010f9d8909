#include "staging_harness/corpus/manifest.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/files/atomic_file.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/ir/module_loader.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "nlohmann/json.hpp"

namespace phaseloop::corpus {
namespace {

using google::protobuf::FieldDescriptor;
using nlohmann::json;

constexpr char kFormat[] = "phaseloop-corpus-v1";

// ModuleRecord <-> JSON by reflection, so the manifest follows the proto.
json RecordToJson(const v1::ModuleRecord& record) {
  json out = json::object();
  const auto* descriptor = record.GetDescriptor();
  const auto* reflection = record.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      out[field->name()] = reflection->GetString(record, field);
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT64) {
      out[field->name()] = reflection->GetInt64(record, field);
    }
  }
  return out;
}

absl::StatusOr<v1::ModuleRecord> RecordFromJson(const json& in) {
  v1::ModuleRecord record;
  if (!in.is_object())
    return absl::InvalidArgumentError("module is not an object");
  const auto* descriptor = record.GetDescriptor();
  const auto* reflection = record.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    auto it = in.find(field->name());
    if (it == in.end()) continue;
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING &&
        it->is_string()) {
      reflection->SetString(&record, field, it->get<std::string>());
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT64 &&
               it->is_number_integer()) {
      // Counts and sizes: -1 says "not measured"; below that, a damaged or
      // hand-edited manifest.
      if (it->get<int64_t>() < -1) {
        return absl::InvalidArgumentError(
            absl::StrCat("field '", field->name(), "' is ", it->get<int64_t>(),
                         ", below -1 (not measured)"));
      }
      reflection->SetInt64(&record, field, it->get<int64_t>());
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("field '", field->name(), "' has the wrong type"));
    }
  }
  return record;
}

void Sort(Manifest& m) {
  std::sort(m.modules.begin(), m.modules.end(),
            [](const v1::ModuleRecord& a, const v1::ModuleRecord& b) {
              return a.name() < b.name();
            });
  std::sort(m.skipped.begin(), m.skipped.end(),
            [](const SkippedEntry& a, const SkippedEntry& b) {
              return std::tie(a.origin, a.name, a.kind) <
                     std::tie(b.origin, b.name, b.kind);
            });
}

}  // namespace

std::string SplitForName(const std::string& name) {
  const std::string hash = ir::ContentHash(name);
  const uint64_t bucket = std::stoull(hash.substr(0, 8), nullptr, 16) % 100;
  if (bucket < 80) return "train";
  if (bucket < 90) return "validation";
  return "test";
}

absl::StatusOr<Manifest> ReadManifest(const std::string& corpus_dir) {
  const std::string path =
      (std::filesystem::path(corpus_dir) / kManifestFile).string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return absl::NotFoundError(
        absl::StrCat("no corpus manifest at '", path, "'"));
  }
  absl::StatusOr<std::string> text = ir::ReadFile(path);
  if (!text.ok()) return text.status();
  auto bad = [&path](const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat("corpus manifest '", path, "' is malformed (", what,
                     "); rebuild the corpus into a fresh --out directory"));
  };
  json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return bad("not a JSON object");
  Manifest m;
  // json::value() throws when a field has another type (found by
  // manifest_fuzzer): a field of the wrong type is a malformed manifest.
  try {
    if (doc.value("format", "") != kFormat) return bad("unknown format");
    m.convention = doc.value("convention", "");
    m.opt_level = doc.value("opt_level", "");
    const json modules = doc.value("modules", json::array());
    const json skipped = doc.value("skipped", json::array());
    if (!modules.is_array()) return bad("modules is not a list");
    if (!skipped.is_array()) return bad("skipped is not a list");
    std::set<std::string> names;
    for (const json& entry : modules) {
      absl::StatusOr<v1::ModuleRecord> record = RecordFromJson(entry);
      if (!record.ok()) return bad(std::string(record.status().message()));
      // A module of another split left train, validation and test alike
      // without a word; one listed twice was counted twice.
      const std::string& split = record->split();
      if (split != "train" && split != "validation" && split != "test") {
        return bad(absl::StrCat("module '", record->name(), "' has split '",
                                split, "', not train, validation or test"));
      }
      if (!names.insert(record->name()).second) {
        return bad(
            absl::StrCat("module '", record->name(), "' is listed twice"));
      }
      m.modules.push_back(*std::move(record));
    }
    for (const json& entry : skipped) {
      if (!entry.is_object()) return bad("skipped entry is not an object");
      m.skipped.push_back({entry.value("name", ""), entry.value("origin", ""),
                           entry.value("kind", ""), entry.value("reason", "")});
    }
  } catch (const json::exception& e) {
    return bad(e.what());
  }
  Sort(m);
  return m;
}

absl::Status WriteManifest(const std::string& corpus_dir, Manifest manifest) {
  Sort(manifest);
  json modules = json::array();
  std::map<std::string, int> per_split;
  int64_t ir_o0 = 0, ir_oz = 0, ir_o3 = 0;
  for (const v1::ModuleRecord& r : manifest.modules) {
    modules.push_back(RecordToJson(r));
    ++per_split[r.split()];
    ir_o0 += r.ir_count_o0();
    ir_o3 += r.ir_count_o3();
    ir_oz += r.ir_count_oz();
  }
  json skipped = json::array();
  for (const SkippedEntry& s : manifest.skipped) {
    skipped.push_back({{"name", s.name},
                       {"origin", s.origin},
                       {"kind", s.kind},
                       {"reason", s.reason}});
  }
  json doc = {
      {"format", kFormat},
      {"convention", manifest.convention},
      {"opt_level", manifest.opt_level},
      {"baselines",
       "ir_count_*/text_size_*/alloc_size_*: opt-16 -passes=default<level> "
       "on the stored module, then codegen with clang-16's settings (as "
       "`phaseloop env --input M.bc --baselines`)"},
      {"split_rule",
       "BLAKE3(name) mod 100: <80 train, <90 validation, else test"},
      {"totals",
       {{"modules", manifest.modules.size()},
        {"skipped", manifest.skipped.size()},
        {"train", per_split["train"]},
        {"validation", per_split["validation"]},
        {"test", per_split["test"]},
        {"ir_count_o0", ir_o0},
        {"ir_count_o3", ir_o3},
        {"ir_count_oz", ir_oz}}},
      {"modules", modules},
      {"skipped", skipped}};
  std::error_code ec;
  std::filesystem::create_directories(corpus_dir, ec);
  const std::filesystem::path final_path =
      std::filesystem::path(corpus_dir) / kManifestFile;
  return files::WriteFileAtomically(
      final_path.string(),
      absl::StrCat(
          doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace),
          "\n"));
}

std::vector<std::string> MergeManifest(
    Manifest& base, const Manifest& update,
    const std::set<std::string>& rebuilt_origins) {
  std::set<std::string> new_names, new_paths;
  for (const v1::ModuleRecord& r : update.modules) {
    new_names.insert(r.name());
    new_paths.insert(r.bitcode_path());
  }
  std::vector<std::string> orphans;
  std::vector<v1::ModuleRecord> kept;
  for (v1::ModuleRecord& r : base.modules) {
    if (rebuilt_origins.count(r.origin()) || new_names.count(r.name())) {
      if (!new_paths.count(r.bitcode_path()))
        orphans.push_back(r.bitcode_path());
    } else {
      kept.push_back(std::move(r));
    }
  }
  kept.insert(kept.end(), update.modules.begin(), update.modules.end());
  base.modules = std::move(kept);
  std::vector<SkippedEntry> skipped;
  for (SkippedEntry& s : base.skipped) {
    if (!rebuilt_origins.count(s.origin)) skipped.push_back(std::move(s));
  }
  skipped.insert(skipped.end(), update.skipped.begin(), update.skipped.end());
  base.skipped = std::move(skipped);
  if (base.convention.empty()) base.convention = update.convention;
  if (base.opt_level.empty()) base.opt_level = update.opt_level;
  Sort(base);
  return orphans;
}

}  // namespace phaseloop::corpus
