#include "compiler_driver/passes/pipeline_check.h"

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "compiler_driver/codegen/codegen_options.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/passes/pass_extensions.h"
#include "compiler_driver/passes/tuned_pipeline.h"

namespace phaseloop::passes {
namespace {

constexpr char kRefusedPayload[] = "phaseloop.dev/policy-pipeline-refused";

struct Excluded {
  const char* name;
  const char* reason;
};

constexpr Excluded kLlvm16Excluded[] = {
#include "compiler_driver/passes/llvm-16/excluded.inc"
};

// Passes of the action space that a policy may still not run: each can
// change what a program means. They stay in the versioned action list
// (artifacts index into it); a stepwise policy never takes them
// (policy_runtime/artifact_policy.cc masks them).
constexpr Excluded kNotForPolicies[] = {
    {"lower-ifunc",
     "it erases every ifunc, exported ones too: their callers in other "
     "objects no longer link"},
    {"lower-constant-intrinsics",
     "run before inlining it folds llvm.objectsize to 'unknown', which "
     "removes _FORTIFY_SOURCE's buffer overflow checks"},
    {"lower-global-dtors",
     "it turns destructors into atexit registrations made by a constructor, "
     "which changes their order against the program's own atexit handlers"},
    // A review (2026-11-30) found UB-free csmith programs it breaks: after
    // default<Oz>, `attributor` turned main's tail into unreachable (a
    // segfault; opt-16 alone reproduces it), 13 of 35 programs wrong or
    // crashing. LLVM 16's standard pipelines never run it.
    {"attributor",
     "LLVM 16's Attributor miscompiles correct programs (code after a call "
     "deleted as unreachable); LLVM's own pipelines do not run it"},
    {"attributor-cgscc",
     "LLVM 16's Attributor miscompiles correct programs (code after a call "
     "deleted as unreachable); LLVM's own pipelines do not run it"},
};
// The payload marking a refusal by kNotForPolicies alone: a pass of the
// action space, which an artifact may name (it indexes the space) but no
// policy runs.
constexpr char kNotForPoliciesPayload[] =
    "phaseloop.dev/policy-pipeline-not-for-policies";

// Bounds on a policy's pipeline, so that no policy can exhaust the
// compiler's stack (the reader recurses per nesting level), memory or time
// (a pipeline is run as written). Generous for everything search and the
// learner produce: their pipelines hold tens of passes and one or two
// standard pipelines.
constexpr int kMaxNesting = 16;
constexpr int kMaxElements = 1000;
constexpr int kMaxStandardPipelines = 8;

// One element of a pass pipeline: NAME[<PARAMS>][(CHILDREN)].
struct Element {
  absl::string_view text;  // the whole element, for messages
  absl::string_view name;
  absl::string_view params;
  bool has_children = false;
  std::vector<Element> children;
};

// A recursive-descent reader of PassBuilder's pipeline grammar: elements
// separated by ',', parameters in balanced <...>, children in balanced (...).
class PipelineReader {
 public:
  explicit PipelineReader(absl::string_view text) : text_(text) {}

  absl::Status Read(std::vector<Element>* elements) {
    absl::Status status = ReadList(elements, 0);
    if (status.ok() && pos_ != text_.size()) {
      return Malformed("unbalanced ')'");
    }
    return status;
  }

 private:
  absl::Status Malformed(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed pass pipeline '", text_, "' (", what,
                     " at character ", pos_ + 1, ")"));
  }

  absl::Status ReadList(std::vector<Element>* elements, int depth) {
    if (depth > kMaxNesting) {
      return Malformed(
          absl::StrCat("more than ", kMaxNesting, " nested adaptors (...)"));
    }
    while (true) {
      if (++elements_read_ > kMaxElements) {
        return Malformed(absl::StrCat("more than ", kMaxElements, " elements"));
      }
      Element element;
      if (absl::Status s = ReadElement(&element, depth); !s.ok()) return s;
      elements->push_back(std::move(element));
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      return absl::OkStatus();
    }
  }

  absl::Status ReadElement(Element* element, int depth) {
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '<' && text_[pos_] != '(' &&
           text_[pos_] != ',' && text_[pos_] != ')' && text_[pos_] != '>') {
      ++pos_;
    }
    element->name = text_.substr(start, pos_ - start);
    if (element->name.empty()) return Malformed("an empty pass name");
    if (pos_ < text_.size() && text_[pos_] == '<') {
      const size_t open = ++pos_;
      int depth = 1;
      while (pos_ < text_.size() && depth > 0) {
        if (text_[pos_] == '<') ++depth;
        if (text_[pos_] == '>') --depth;
        ++pos_;
      }
      if (depth != 0) return Malformed("an unclosed '<'");
      element->params = text_.substr(open, pos_ - 1 - open);
    }
    if (pos_ < text_.size() && text_[pos_] == '(') {
      ++pos_;
      element->has_children = true;
      if (absl::Status s = ReadList(&element->children, depth + 1); !s.ok()) {
        return s;
      }
      if (pos_ >= text_.size() || text_[pos_] != ')') {
        return Malformed("an unclosed '('");
      }
      ++pos_;
    }
    element->text = text_.substr(start, pos_ - start);
    return absl::OkStatus();
  }

  absl::string_view text_;
  size_t pos_ = 0;
  int elements_read_ = 0;
};

// The pass and adaptor names the action space's pipelines use.
struct Allowed {
  std::set<std::string, std::less<>> passes;  // compared with string_views
  std::set<std::string, std::less<>> adaptors = {"module", "cgscc", "function",
                                                 "loop", "loop-mssa"};
};

void Collect(const std::vector<Element>& elements, Allowed* allowed) {
  for (const Element& e : elements) {
    if (e.has_children) {
      allowed->adaptors.insert(std::string(e.name));
      Collect(e.children, allowed);
    } else {
      allowed->passes.insert(std::string(e.name));
    }
  }
}

const Allowed& AllowedNames() {
  static const Allowed* allowed = [] {
    auto* a = new Allowed;
    for (const Action& action : ActionSpace::Llvm16().actions()) {
      std::vector<Element> elements;
      PipelineReader reader(action.pipeline);
      if (reader.Read(&elements).ok()) Collect(elements, a);
    }
    return a;
  }();
  return *allowed;
}

bool IsStandardLevel(absl::string_view level) {
  return level == "O0" || level == "O1" || level == "O2" || level == "O3" ||
         level == "Os" || level == "Oz";
}

absl::Status Refuse(const Element& e, absl::string_view why) {
  absl::Status status = absl::InvalidArgumentError(
      absl::StrCat("the policy's pipeline runs '", e.text,
                   "', which a policy may not run: ", why));
  status.SetPayload(kRefusedPayload, absl::Cord(e.name));
  return status;
}

std::string WhyNot(absl::string_view name) {
  for (const Excluded& x : kLlvm16Excluded) {
    if (name == x.name) {
      return absl::StrCat("'", name, "' is outside the action space (",
                          x.reason, ")");
    }
  }
  return absl::StrCat("'", name, "' is neither a pass of the action space ",
                      ActionSpace::Llvm16().version(),
                      " (compiler_driver/passes/llvm-16/actions.tsv) nor a "
                      "standard pipeline default<O0|O1|O2|O3|Os|Oz> or "
                      "tuned<O1|O2|O3|Os|Oz;...>");
}

absl::Status Check(const std::vector<Element>& elements, bool top_level,
                   int* standard_pipelines) {
  const Allowed& allowed = AllowedNames();
  for (const Element& e : elements) {
    if ((e.name == kTunedPipelineName || e.name == "default") &&
        ++*standard_pipelines > kMaxStandardPipelines) {
      return Refuse(e,
                    absl::StrCat("a policy's pipeline may hold at most ",
                                 kMaxStandardPipelines, " standard pipelines"));
    }
    if (e.name == kTunedPipelineName) {
      // Like default<Ox>, a module pipeline of its own: the runner builds it
      // only at the top level of the text.
      if (!top_level || e.has_children) {
        return Refuse(e,
                      "tuned<...> is a standard pipeline, allowed only at "
                      "the top level of the pipeline, without (...)");
      }
      absl::StatusOr<TunedPipeline> tuned = ParseTunedParams(e.params);
      if (!tuned.ok()) return Refuse(e, tuned.status().message());
      continue;
    }
    if (e.has_children) {
      if (allowed.adaptors.count(e.name) == 0) {
        return Refuse(e, absl::StrCat("'", e.name,
                                      "(...)' is not a pass-manager adaptor "
                                      "(module, cgscc, function, loop, "
                                      "loop-mssa)"));
      }
      if (absl::Status s =
              Check(e.children, /*top_level=*/false, standard_pipelines);
          !s.ok()) {
        return s;
      }
      continue;
    }
    if (e.name == "default") {
      if (IsStandardLevel(e.params)) continue;
      return Refuse(e, "the standard pipelines are default<O0|O1|O2|O3|Os|Oz>");
    }
    for (const Excluded& x : kNotForPolicies) {
      if (e.name == x.name) {
        absl::Status refused = Refuse(
            e, absl::StrCat("'", e.name, "' is not for policies: ", x.reason));
        refused.SetPayload(kNotForPoliciesPayload, absl::Cord(e.name));
        return refused;
      }
    }
    // A test binary's extension (pass_extensions.h); none in production.
    if (allowed.passes.count(e.name) == 0 && !IsPassExtension(e.name)) {
      return Refuse(e, WhyNot(e.name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckPolicyPipeline(absl::string_view ir_pipeline) {
  if (ir_pipeline.empty()) return absl::OkStatus();
  std::vector<Element> elements;
  PipelineReader reader(ir_pipeline);
  if (absl::Status read = reader.Read(&elements); !read.ok()) {
    read.SetPayload(kRefusedPayload, absl::Cord("malformed"));
    return read;
  }
  int standard_pipelines = 0;
  return Check(elements, /*top_level=*/true, &standard_pipelines);
}

absl::Status CheckWholePolicyPipeline(absl::string_view pipeline,
                                      absl::string_view context) {
  absl::StatusOr<codegen::SplitPipelineText> split =
      codegen::SplitPipeline(pipeline);
  absl::Status checked =
      split.ok() ? CheckPolicyPipeline(split->ir_pipeline) : split.status();
  if (checked.ok() || context.empty()) return checked;
  absl::Status named = absl::InvalidArgumentError(
      absl::StrCat(context, ": ", checked.message()));
  checked.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    named.SetPayload(url, payload);
  });
  return named;
}

bool IsRefusedPipeline(const absl::Status& status) {
  return status.GetPayload(kRefusedPayload).has_value();
}

bool IsNotForPolicies(const absl::Status& status) {
  return status.GetPayload(kNotForPoliciesPayload).has_value();
}

}  // namespace phaseloop::passes
