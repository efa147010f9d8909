#include "tools/loop/build_figures.h"

#include "absl/strings/str_cat.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::loop {
namespace {

constexpr char kO3Pipeline[] = "default<O3>";

}  // namespace

absl::StatusOr<v1::LoopBuildFigures> ReadBuildFigures(
    const std::string& buffer_path, const std::string& build_id) {
  replay_buffer::OpenOptions open;
  open.create = false;
  open.read_only = true;
  auto store = replay_buffer::OpenReplayStore(buffer_path, open);
  if (!store.ok()) return store.status();
  replay_buffer::DecisionFilter filter;
  filter.build_id = build_id;
  auto decisions = (*store)->ReadDecisions(filter);
  if (!decisions.ok()) return decisions.status();
  if (decisions->empty()) {
    return absl::NotFoundError(
        absl::StrCat("no decision of build ", build_id, " in ", buffer_path));
  }
  v1::LoopBuildFigures figures;
  figures.set_build_id(build_id);
  for (const v1::Decision& d : *decisions) {
    figures.set_compile_time_us(figures.compile_time_us() +
                                d.compile_time_us());
    if (d.outcome() != v1::OPTIMIZED) continue;
    figures.set_modules(figures.modules() + 1);
    if (d.pipeline() != kO3Pipeline) {
      figures.set_modules_changed(figures.modules_changed() + 1);
    }
    figures.set_alloc_size(figures.alloc_size() + d.alloc_size());
    if (d.has_oz_alloc_size()) {
      figures.set_oz_alloc_size(figures.oz_alloc_size() + d.oz_alloc_size());
    }
    figures.set_policy_time_us(figures.policy_time_us() + d.policy_time_us());
  }
  return figures;
}

}  // namespace phaseloop::loop
