#ifndef PHASELOOP_COMMON_CONFIG_YAML_DOCUMENTS_H_
#define PHASELOOP_COMMON_CONFIG_YAML_DOCUMENTS_H_

// The documents of a multi-document YAML stream, without YAML::LoadAll.
//
// yaml-cpp 0.7 (Debian 12) loops forever on some malformed streams in
// LoadAll, allocating a null document per turn until memory runs out —
// a file holding only "," is enough (yaml-cpp issue #1040, fixed upstream
// in 2024 by PR #1319, after 0.8). A fuzz target found it here
// (reward_engine/slo: slo_yaml_fuzzer). This splits the stream at its
// document markers instead — a line that is "---" (alone or followed by a
// space or tab) or "..." — which YAML forbids at the start of a line inside
// a document, so the split is exact, and loads each document with
// YAML::Load. Line numbers in yaml-cpp's exceptions stay those of the whole
// stream. Like LoadAll, it throws YAML::Exception on malformed YAML.

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace phaseloop::config {

// Every document in stream order (a null node for an empty one). Text
// before the first "---" counts as a document only if it holds more than
// comments and blank lines.
std::vector<YAML::Node> LoadYamlDocuments(const std::string& text);

// The 1-based line where the stream's second document begins (its "---"),
// or 0 when it holds at most one: a config file is one document, and
// YAML::Load reads the first alone, so whatever follows would be ignored
// without a word.
int SecondYamlDocumentLine(const std::string& text);

}  // namespace phaseloop::config

#endif  // PHASELOOP_COMMON_CONFIG_YAML_DOCUMENTS_H_
