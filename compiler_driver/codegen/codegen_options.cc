#include "compiler_driver/codegen/codegen_options.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace phaseloop::codegen {
namespace {

constexpr absl::string_view kElementPrefix = "codegen<";
constexpr absl::string_view kMachineOutliner = "machine-outliner";
constexpr absl::string_view kNoJumpTables = "no-jump-tables";
constexpr absl::string_view kSplitFunctions = "split-functions";
constexpr absl::string_view kKnownOptions =
    "machine-outliner, no-jump-tables, split-functions";

// The top-level elements of PassBuilder text: split at commas outside
// <...> and (...).
std::vector<absl::string_view> TopLevelElements(absl::string_view text) {
  std::vector<absl::string_view> elements;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<' || c == '(') ++depth;
    if ((c == '>' || c == ')') && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      elements.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  elements.push_back(text.substr(start));
  return elements;
}

bool IsCodegenElement(absl::string_view element) {
  return absl::StartsWith(element, kElementPrefix);
}

}  // namespace

absl::StatusOr<SplitPipelineText> SplitPipeline(absl::string_view pipeline) {
  SplitPipelineText split;
  if (pipeline.find(kElementPrefix) == absl::string_view::npos) {
    split.ir_pipeline = std::string(pipeline);
    return split;
  }
  const std::vector<absl::string_view> elements = TopLevelElements(pipeline);
  for (size_t i = 0; i + 1 < elements.size(); ++i) {
    if (IsCodegenElement(elements[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pipeline '", pipeline,
          "': the codegen<...> element must be the "
          "last one (it names code generator options, not a pass)"));
    }
  }
  const absl::string_view last = elements.back();
  if (!IsCodegenElement(last)) {
    // "codegen<" inside a pass's parameters, not an element of ours.
    split.ir_pipeline = std::string(pipeline);
    return split;
  }
  if (last.size() < kElementPrefix.size() + 1 || last.back() != '>') {
    return absl::InvalidArgumentError(absl::StrCat(
        "pipeline '", pipeline, "': '", last,
        "' is not codegen<OPTION;...> (known options: ", kKnownOptions, ")"));
  }
  const absl::string_view inner = last.substr(
      kElementPrefix.size(), last.size() - kElementPrefix.size() - 1);
  for (absl::string_view option : absl::StrSplit(inner, ';')) {
    bool* flag = nullptr;
    if (option == kMachineOutliner) flag = &split.codegen.machine_outliner;
    if (option == kNoJumpTables) flag = &split.codegen.no_jump_tables;
    if (option == kSplitFunctions) flag = &split.codegen.split_functions;
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("pipeline '", pipeline, "': unknown codegen option '",
                       option, "' (known: ", kKnownOptions,
                       "); a policy naming it needs a newer phaseloop"));
    }
    if (*flag) {
      return absl::InvalidArgumentError(
          absl::StrCat("pipeline '", pipeline, "': codegen option '", option,
                       "' is named twice"));
    }
    *flag = true;
  }
  const size_t ir_length =
      elements.size() == 1 ? 0 : pipeline.size() - last.size() - 1;
  split.ir_pipeline = std::string(pipeline.substr(0, ir_length));
  return split;
}

std::string CodegenOptionsText(const CodegenOptions& options) {
  std::vector<absl::string_view> names;
  if (options.machine_outliner) names.push_back(kMachineOutliner);
  if (options.no_jump_tables) names.push_back(kNoJumpTables);
  if (options.split_functions) names.push_back(kSplitFunctions);
  return absl::StrJoin(names, ";");
}

std::string JoinPipeline(absl::string_view ir_pipeline,
                         const CodegenOptions& options) {
  if (!options.any()) return std::string(ir_pipeline);
  const std::string element =
      absl::StrCat(kElementPrefix, CodegenOptionsText(options), ">");
  if (ir_pipeline.empty()) return element;
  return absl::StrCat(ir_pipeline, ",", element);
}

}  // namespace phaseloop::codegen
