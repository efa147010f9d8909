#ifndef PHASELOOP_COMPILER_DRIVER_PASSES_ACTION_SPACE_H_
#define PHASELOOP_COMPILER_DRIVER_PASSES_ACTION_SPACE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phaseloop::passes {

// One choice of the pass-ordering policy: an LLVM 16 new-PM transform pass
// wrapped so it runs on a whole module ("function(instcombine)").
struct Action {
  std::string name;      // e.g. "instcombine", "licm<allowspeculation>"
  std::string pipeline;  // text for PassBuilder::parsePassPipeline
};

// The versioned action list generated into llvm-16/actions.tsv. Indices are
// stable within a version; records store `version()` beside action indices.
class ActionSpace {
 public:
  // The action space for the LLVM this binary links (LLVM 16).
  static const ActionSpace& Llvm16();

  const std::string& version() const { return version_; }
  int size() const { return static_cast<int>(actions_.size()); }
  const Action& at(int index) const { return actions_.at(index); }
  const std::vector<Action>& actions() const { return actions_; }
  std::optional<int> Find(std::string_view name) const;

  // "a,b,c" -> the pipeline text of those actions run in order.
  static std::string JoinPipelines(const std::vector<const Action*>& actions);

 private:
  ActionSpace(std::string version, std::vector<Action> actions)
      : version_(std::move(version)), actions_(std::move(actions)) {}
  std::string version_;
  std::vector<Action> actions_;
};

}  // namespace phaseloop::passes

#endif  // PHASELOOP_COMPILER_DRIVER_PASSES_ACTION_SPACE_H_
