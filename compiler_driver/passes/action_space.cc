#include "compiler_driver/passes/action_space.h"

namespace phaseloop::passes {
namespace {

struct Entry {
  const char* name;
  const char* pipeline;
};

constexpr Entry kLlvm16Actions[] = {
#include "compiler_driver/passes/llvm-16/actions.inc"
};

}  // namespace

const ActionSpace& ActionSpace::Llvm16() {
  static const ActionSpace* space = [] {
    std::vector<Action> actions;
    for (const Entry& e : kLlvm16Actions)
      actions.push_back({e.name, e.pipeline});
    return new ActionSpace("llvm-16/v1", std::move(actions));
  }();
  return *space;
}

std::optional<int> ActionSpace::Find(std::string_view name) const {
  for (int i = 0; i < size(); ++i) {
    if (actions_[i].name == name) return i;
  }
  return std::nullopt;
}

std::string ActionSpace::JoinPipelines(
    const std::vector<const Action*>& actions) {
  std::string text;
  for (const Action* a : actions) {
    if (!text.empty()) text += ',';
    text += a->pipeline;
  }
  return text;
}

}  // namespace phaseloop::passes
