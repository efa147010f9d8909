#include "staging_harness/search/best_sequences.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/files/atomic_file.h"
#include "nlohmann/json.hpp"

namespace phaseloop::search {
namespace {

constexpr char kFormat[] = "phaseloop.best_sequences.v1";
constexpr int kAutophaseDim = 56;
constexpr int kTotalInsts = 51;

using Key = std::tuple<std::string, std::string, std::string>;

Key KeyOf(const KnownBest& k) {
  return {k.best.module_hash(), k.best.objective(),
          k.best.action_space_version()};
}

// True when `a` should replace `b`.
bool Better(const KnownBest& a, const KnownBest& b) {
  if (a.best.value() != b.best.value()) return a.best.value() < b.best.value();
  return a.best.actions_size() < b.best.actions_size();
}

}  // namespace

absl::StatusOr<std::vector<KnownBest>> ReadBestSequences(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read best-sequences file '", path, "'"));
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("sequences") ||
      !doc["sequences"].is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "best-sequences file '", path, "' is not a JSON object with a ",
        "\"sequences\" array (write it with `phaseloop search --best-out`)"));
  }
  std::vector<KnownBest> out;
  for (const nlohmann::json& entry : doc["sequences"]) {
    if (!entry.is_object()) continue;
    const auto text_field = [&](const char* name) {
      auto it = entry.find(name);
      return it != entry.end() && it->is_string() ? it->get<std::string>()
                                                  : std::string();
    };
    auto actions = entry.find("actions");
    KnownBest known;
    known.best.set_module_hash(text_field("module_hash"));
    known.best.set_objective(text_field("objective"));
    known.best.set_action_space_version(text_field("action_space_version"));
    known.best.set_episode_id(text_field("episode_id"));
    known.module_name = text_field("module_name");
    if (known.best.module_hash().empty() || known.best.objective().empty() ||
        actions == entry.end() || !actions->is_array()) {
      continue;
    }
    bool ok = true;
    for (const nlohmann::json& a : *actions) {
      if (!a.is_number_integer()) ok = false;
      if (ok) known.best.add_actions(a.get<int>());
    }
    if (auto value = entry.find("value");
        value != entry.end() && value->is_number_integer()) {
      known.best.set_value(value->get<int64_t>());
    }
    if (auto ap = entry.find("autophase");
        ap != entry.end() && ap->is_array() && ap->size() == kAutophaseDim) {
      for (const nlohmann::json& v : *ap) {
        if (!v.is_number_integer()) break;
        known.autophase.push_back(v.get<int64_t>());
      }
      if (known.autophase.size() != kAutophaseDim) known.autophase.clear();
    }
    if (ok) out.push_back(std::move(known));
  }
  return out;
}

absl::Status WriteBestSequences(const std::string& path,
                                const std::vector<KnownBest>& sequences) {
  // One line per sequence: diffable, and readable without a JSON viewer.
  std::string text =
      absl::StrCat("{\"format\": \"", kFormat, "\",\n \"sequences\": [");
  for (size_t i = 0; i < sequences.size(); ++i) {
    const KnownBest& k = sequences[i];
    const nlohmann::json entry = {
        {"module_hash", k.best.module_hash()},
        {"module_name", k.module_name},
        {"objective", k.best.objective()},
        {"action_space_version", k.best.action_space_version()},
        {"actions",
         std::vector<int>(k.best.actions().begin(), k.best.actions().end())},
        {"value", k.best.value()},
        {"episode_id", k.best.episode_id()},
        {"autophase", k.autophase}};
    absl::StrAppend(
        &text, i == 0 ? "\n  " : ",\n  ",
        entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  absl::StrAppend(&text, "\n]}\n");
  absl::Status written = files::WriteFileAtomically(path, text);
  if (!written.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot write best-sequences file: ", written.message()));
  }
  return absl::OkStatus();
}

void MergeBestSequences(const std::vector<KnownBest>& update,
                        std::vector<KnownBest>& known) {
  std::map<Key, size_t> index;
  for (size_t i = 0; i < known.size(); ++i) index.emplace(KeyOf(known[i]), i);
  for (const KnownBest& u : update) {
    auto [it, inserted] = index.emplace(KeyOf(u), known.size());
    if (inserted) {
      known.push_back(u);
      continue;
    }
    KnownBest& k = known[it->second];
    std::vector<int64_t> features =
        k.autophase.empty() ? u.autophase : k.autophase;
    std::string name = k.module_name.empty() ? u.module_name : k.module_name;
    if (Better(u, k)) k = u;
    if (k.autophase.empty()) k.autophase = std::move(features);
    if (k.module_name.empty()) k.module_name = std::move(name);
  }
}

std::vector<double> NormalisedAutophase(const std::vector<int64_t>& autophase) {
  std::vector<double> out(autophase.size());
  const double total =
      autophase.size() > kTotalInsts && autophase[kTotalInsts] > 0
          ? static_cast<double>(autophase[kTotalInsts])
          : 1.0;
  for (size_t i = 0; i < autophase.size(); ++i) out[i] = autophase[i] / total;
  return out;
}

std::vector<const KnownBest*> NearestNeighbours(
    const std::vector<int64_t>& autophase, const std::vector<KnownBest>& known,
    const std::string& objective, const std::string& action_space_version,
    int k) {
  const std::vector<double> query = NormalisedAutophase(autophase);
  std::vector<std::pair<double, const KnownBest*>> scored;
  for (const KnownBest& entry : known) {
    if (entry.best.objective() != objective ||
        entry.best.action_space_version() != action_space_version ||
        entry.autophase.size() != query.size() ||
        entry.best.actions().empty()) {
      continue;
    }
    const std::vector<double> f = NormalisedAutophase(entry.autophase);
    double d = 0;
    for (size_t i = 0; i < f.size(); ++i)
      d += (f[i] - query[i]) * (f[i] - query[i]);
    scored.emplace_back(std::sqrt(d), &entry);
  }
  std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    if (a.second->best.value() != b.second->best.value())
      return a.second->best.value() < b.second->best.value();
    return a.second->best.module_hash() < b.second->best.module_hash();
  });
  std::vector<const KnownBest*> out;
  for (size_t i = 0; i < scored.size() && static_cast<int>(i) < k; ++i) {
    out.push_back(scored[i].second);
  }
  return out;
}

}  // namespace phaseloop::search
