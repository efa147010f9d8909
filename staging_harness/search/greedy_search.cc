#include "staging_harness/search/greedy_search.h"

#include <chrono>

#include "common/timing/elapsed.h"

namespace phaseloop::search {
namespace {

absl::StatusOr<int64_t> Cost(session::CompilationSession& s, Objective o) {
  if (o == Objective::kIrCount) return s.IrCount();
  if (o == Objective::kAllocSize) return s.AllocSize();
  return s.TextSize();
}

}  // namespace

const char* ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kIrCount:
      return "ir_count";
    case Objective::kTextSize:
      return "text_size";
    case Objective::kAllocSize:
      return "alloc_size";
  }
  return "";
}

int64_t PickByObjective(Objective objective, int64_t ir_count,
                        int64_t text_size, int64_t alloc_size) {
  switch (objective) {
    case Objective::kIrCount:
      return ir_count;
    case Objective::kAllocSize:
      return alloc_size;
    case Objective::kTextSize:
      break;
  }
  return text_size;
}

std::optional<Objective> ParseObjective(const std::string& text) {
  if (text == "ir_count") return Objective::kIrCount;
  if (text == "text_size") return Objective::kTextSize;
  if (text == "alloc_size") return Objective::kAllocSize;
  return std::nullopt;
}

absl::StatusOr<SearchResult> GreedySearch(session::CompilationSession& start,
                                          Objective objective,
                                          double budget_seconds,
                                          int64_t max_evaluations) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point begin = Clock::now();
  auto elapsed = [&] { return timing::SecondsSince(begin); };
  std::unique_ptr<session::CompilationSession> current = start.Fork();
  absl::StatusOr<int64_t> current_cost = Cost(*current, objective);
  if (!current_cost.ok()) return current_cost.status();
  SearchResult result;
  bool out_of_time = false;
  while (!out_of_time) {
    std::unique_ptr<session::CompilationSession> best;
    int64_t best_cost = *current_cost;
    for (int a = 0; a < current->action_space().size(); ++a) {
      if (elapsed() > budget_seconds ||
          (max_evaluations > 0 && result.evaluations >= max_evaluations)) {
        out_of_time = true;
        break;
      }
      std::unique_ptr<session::CompilationSession> candidate = current->Fork();
      ++result.evaluations;
      if (!candidate->Step(a).ok()) continue;
      absl::StatusOr<int64_t> cost = Cost(*candidate, objective);
      if (cost.ok() && *cost < best_cost) {
        best_cost = *cost;
        best = std::move(candidate);
      }
    }
    if (best == nullptr) break;
    current = std::move(best);
    *current_cost = best_cost;
  }
  result.actions = current->history();
  result.ir_count = current->IrCount();
  absl::StatusOr<int64_t> text = current->TextSize();
  if (!text.ok()) return text.status();
  result.text_size = *text;
  absl::StatusOr<int64_t> alloc = current->AllocSize();  // the same object
  if (!alloc.ok()) return alloc.status();
  result.alloc_size = *alloc;
  result.seconds = elapsed();
  return result;
}

}  // namespace phaseloop::search
