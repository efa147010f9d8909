// ReadCandidatesFile (dataset.h): the candidate set a candidate-formulation
// learner chooses among, as `phaseloop candidates mine` writes it.
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/passes/pipeline_check.h"
#include "nlohmann/json.hpp"
#include "offline_rl/learner/dataset.h"

namespace phaseloop::offline_rl {

std::string CandidateSetVersion(const std::vector<Candidate>& candidates) {
  std::vector<std::string> pipelines;
  for (const Candidate& c : candidates) pipelines.push_back(c.pipeline);
  return absl::StrCat(
      "candidates/",
      ir::ContentHash(absl::StrJoin(pipelines, "\n")).substr(0, 16));
}

absl::StatusOr<std::vector<Candidate>> ReadCandidatesFile(
    const std::string& path, const std::vector<std::string>& pass_names,
    const std::string& objective) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "cannot read candidates file ", path,
        ": write one with `phaseloop candidates mine` or fix the path"));
  }
  std::stringstream text;
  text << in.rdbuf();
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat("candidates file ", path, ": ", what));
  };
  nlohmann::json json = nlohmann::json::parse(text.str(), nullptr, false);
  if (json.is_discarded()) return bad("not valid JSON");
  if (json.is_object() && json.contains("objective") &&
      json["objective"].is_string() && !objective.empty() &&
      json["objective"].get<std::string>() != objective) {
    return bad(absl::StrCat(
        "mined for objective ", json["objective"].get<std::string>(),
        " but the learner config reads ", objective,
        " episodes: mine again with `phaseloop candidates mine --objective ",
        objective, "` or set the config's objective to ",
        json["objective"].get<std::string>()));
  }
  if (json.is_object() && json.contains("candidates"))
    json = json["candidates"];
  if (!json.is_array() || json.empty()) {
    return bad(
        "expected a non-empty array of candidates (or {\"candidates\": "
        "[...]})");
  }
  std::map<std::string, int> pass_index;
  for (size_t i = 0; i < pass_names.size(); ++i) pass_index[pass_names[i]] = i;
  std::vector<Candidate> out;
  std::map<std::string, bool> seen;
  for (size_t i = 0; i < json.size(); ++i) {
    const nlohmann::json& j = json[i];
    const std::string where = absl::StrCat("candidate ", i);
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string() ||
        !j.contains("pipeline") || !j["pipeline"].is_string()) {
      return bad(where + ": needs string fields name and pipeline");
    }
    Candidate c;
    c.name = j["name"].get<std::string>();
    c.pipeline = j["pipeline"].get<std::string>();
    if (c.name.empty() || c.pipeline.empty()) {
      return bad(where + ": empty name or pipeline");
    }
    if (seen[c.name])
      return bad(absl::StrCat(where, ": duplicate name ", c.name));
    // A candidate mined before a pass was found unsafe (LLVM 16's Attributor)
    // would be learned and counted as choosable, yet the wrapper never runs
    // it: refused, so the metrics describe what the policy can do. Other
    // pipeline errors are the export's to report.
    if (const absl::Status checked = passes::CheckWholePolicyPipeline(
            c.pipeline, absl::StrCat(where, " (", c.name, ")"));
        passes::IsNotForPolicies(checked)) {
      return bad(absl::StrCat(
          checked.message(),
          ": mine the candidates again with `phaseloop candidates mine` "
          "(it leaves such pipelines out) or remove this candidate"));
    }
    seen[c.name] = true;
    if (j.contains("actions")) {
      if (!j["actions"].is_array())
        return bad(where + ": actions must be an array");
      for (const nlohmann::json& a : j["actions"]) {
        if (a.is_number_integer()) {
          const int64_t v = a.get<int64_t>();
          if (v < 0 || v >= static_cast<int64_t>(pass_names.size())) {
            return bad(absl::StrCat(where, " (", c.name, "): action ", v,
                                    " is outside the action space"));
          }
          c.actions.push_back(static_cast<int32_t>(v));
        } else if (a.is_string()) {
          auto found = pass_index.find(a.get<std::string>());
          if (found == pass_index.end()) {
            return bad(absl::StrCat(where, " (", c.name, "): unknown pass ",
                                    a.get<std::string>()));
          }
          c.actions.push_back(found->second);
        } else {
          return bad(where + ": actions must be pass names or indices");
        }
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace phaseloop::offline_rl
