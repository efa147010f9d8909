#include "staging_harness/search/strategies.h"

#include <random>
#include <set>

namespace phaseloop::search {
namespace {

// A child kept for the next beam level, before it becomes a trajectory.
struct Ranked {
  size_t parent;
  ModuleSearch::Candidate candidate;
  int64_t value;
};

// Inserts `r` into `best` (sorted by value, stable), dropping a state whose
// hash is already there, and keeps at most `width`.
void Rank(Ranked r, size_t width, std::vector<Ranked>& best) {
  const std::string& hash = r.candidate.state.hash;
  if (!hash.empty()) {
    for (const Ranked& b : best) {
      if (b.candidate.state.hash == hash) return;  // b ranks no lower
    }
  }
  auto it = best.begin();
  while (it != best.end() && it->value <= r.value) ++it;
  if (static_cast<size_t>(it - best.begin()) >= width) return;
  best.insert(it, std::move(r));
  if (best.size() > width) best.pop_back();
}

}  // namespace

const char* StrategyName(Strategy strategy) {
  switch (strategy) {
    case Strategy::kRandom:
      return "random";
    case Strategy::kGreedy:
      return "greedy";
    case Strategy::kBeam:
      return "beam";
    case Strategy::kGuided:
      return "guided";
  }
  return "?";
}

std::optional<Strategy> ParseStrategy(const std::string& text) {
  for (Strategy s : {Strategy::kRandom, Strategy::kGreedy, Strategy::kBeam,
                     Strategy::kGuided}) {
    if (text == StrategyName(s)) return s;
  }
  return std::nullopt;
}

absl::Status RandomSearch(ModuleSearch& search, const Trajectory* from,
                          int episode_length, const std::string& behaviour) {
  const int actions = search.action_count();
  const double propensity = 1.0 / actions;
  for (int64_t e = 0; !search.OutOfBudget(); ++e) {
    const uint64_t seed = search.EpisodeSeed(e);
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> uniform(0, actions - 1);
    absl::StatusOr<Trajectory> t = from == nullptr
                                       ? search.StartTrajectory()
                                       : search.ForkTrajectory(*from);
    if (!t.ok()) return t.status();
    const size_t prefix = t->steps.size();
    for (int i = 0; i < episode_length && !search.OutOfBudget(); ++i) {
      absl::StatusOr<bool> applied =
          search.Advance(*t, uniform(rng), propensity);
      if (!applied.ok()) return applied.status();
      if (*applied) search.OfferBest(*t);
    }
    if (t->steps.size() == prefix) break;  // no time for a single step
    if (absl::Status s = search.Emit(*t, behaviour, seed); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<Trajectory> BeamSearch(ModuleSearch& search, Trajectory start,
                                      int width, const std::string& behaviour) {
  const uint64_t seed = search.options().seed;
  std::vector<Trajectory> frontier;
  frontier.push_back(std::move(start));
  std::set<std::string> kept_hashes;
  if (!frontier[0].state.hash.empty())
    kept_hashes.insert(frontier[0].state.hash);
  std::optional<Trajectory> best_leaf;
  auto emit_leaf = [&](Trajectory& leaf) -> absl::Status {
    if (!leaf.steps.empty()) {
      if (absl::Status s = search.Emit(leaf, behaviour, seed); !s.ok())
        return s;
    }
    if (!best_leaf ||
        search.Value(leaf.state) < search.Value(best_leaf->state)) {
      best_leaf = std::move(leaf);
    }
    return absl::OkStatus();
  };
  while (!frontier.empty()) {
    std::vector<Ranked> best;
    std::vector<std::vector<v1::Step>> failures(frontier.size());
    bool out_of_budget = false;
    for (size_t p = 0; p < frontier.size() && !out_of_budget; ++p) {
      const int64_t parent_value = search.Value(frontier[p].state);
      for (int a = 0; a < search.action_count(); ++a) {
        if (search.OutOfBudget()) {
          out_of_budget = true;
          break;
        }
        absl::StatusOr<ModuleSearch::Candidate> c =
            search.TryAction(frontier[p], a, /*propensity=*/1.0);
        if (!c.ok()) return c.status();
        if (c->failed) {
          failures[p].push_back(std::move(c->step));
          continue;
        }
        const int64_t value = search.Value(c->state);
        if (value >= parent_value || kept_hashes.count(c->state.hash) > 0)
          continue;
        Rank(Ranked{p, std::move(*c), value}, static_cast<size_t>(width), best);
      }
    }
    // The next level; the first child of a parent continues its episode.
    std::vector<Trajectory> next;
    std::vector<bool> continued(frontier.size(), false);
    for (Ranked& r : best) {
      Trajectory& parent = frontier[r.parent];
      Trajectory child;
      child.session = std::move(r.candidate.session);
      child.state = std::move(r.candidate.state);
      child.steps = parent.steps;
      for (const v1::Step& f : failures[r.parent])
        ModuleSearch::AppendStep(f, child);
      ModuleSearch::AppendStep(std::move(r.candidate.step), child);
      child.started = parent.started;
      child.episode_id =
          continued[r.parent] ? search.NewEpisodeId() : parent.episode_id;
      continued[r.parent] = true;
      if (!child.state.hash.empty()) kept_hashes.insert(child.state.hash);
      search.OfferBest(child);
      next.push_back(std::move(child));
    }
    for (size_t p = 0; p < frontier.size(); ++p) {
      if (continued[p]) continue;
      for (v1::Step& f : failures[p])
        ModuleSearch::AppendStep(std::move(f), frontier[p]);
      if (absl::Status s = emit_leaf(frontier[p]); !s.ok()) return s;
    }
    frontier = std::move(next);
    if (out_of_budget) {
      for (Trajectory& leaf : frontier) {
        if (absl::Status s = emit_leaf(leaf); !s.ok()) return s;
      }
      break;
    }
  }
  return std::move(*best_leaf);
}

absl::Status GuidedSearch(ModuleSearch& search,
                          const std::vector<const KnownBest*>& neighbours,
                          int episode_length) {
  const char* kBehaviour = "guided";
  std::optional<Trajectory> best;  // the best state any replay reached
  int64_t best_value = search.Value(search.start());
  for (size_t n = 0; n < neighbours.size() && !search.OutOfBudget(); ++n) {
    absl::StatusOr<Trajectory> t = search.StartTrajectory();
    if (!t.ok()) return t.status();
    for (int action : neighbours[n]->best.actions()) {
      if (search.OutOfBudget()) break;
      if (action < 0 || action >= search.action_count()) continue;
      absl::StatusOr<bool> applied =
          search.Advance(*t, action, /*propensity=*/1.0);
      if (!applied.ok()) return applied.status();
      if (!*applied) continue;
      search.OfferBest(*t);
      if (search.Value(t->state) < best_value) {
        best_value = search.Value(t->state);
        absl::StatusOr<Trajectory> prefix = search.ForkTrajectory(*t);
        if (!prefix.ok()) return prefix.status();
        best = std::move(*prefix);
      }
    }
    if (t->steps.empty()) continue;
    if (absl::Status s = search.Emit(*t, kBehaviour, search.options().seed);
        !s.ok())
      return s;
  }
  if (search.OutOfBudget()) return absl::OkStatus();
  if (!best) {
    absl::StatusOr<Trajectory> root = search.StartTrajectory();
    if (!root.ok()) return root.status();
    best = std::move(*root);
  }
  best->started = search.Elapsed();
  absl::StatusOr<Trajectory> refined =
      BeamSearch(search, std::move(*best), /*width=*/1, kBehaviour);
  if (!refined.ok()) return refined.status();
  return RandomSearch(search, &*refined, episode_length, kBehaviour);
}

absl::Status RunStrategy(ModuleSearch& search, const StrategyOptions& options,
                         const std::vector<KnownBest>& known) {
  switch (options.strategy) {
    case Strategy::kRandom:
      return RandomSearch(search, nullptr, options.episode_length, "random");
    case Strategy::kGreedy:
    case Strategy::kBeam: {
      absl::StatusOr<Trajectory> start = search.StartTrajectory();
      if (!start.ok()) return start.status();
      const bool greedy = options.strategy == Strategy::kGreedy;
      return BeamSearch(search, std::move(*start),
                        greedy ? 1 : options.beam_width,
                        StrategyName(options.strategy))
          .status();
    }
    case Strategy::kGuided: {
      const std::vector<const KnownBest*> neighbours =
          NearestNeighbours(search.start().autophase, known,
                            ObjectiveName(search.options().objective),
                            search.action_space_version(), options.neighbours);
      return GuidedSearch(search, neighbours, options.episode_length);
    }
  }
  return absl::InvalidArgumentError("unknown strategy");
}

}  // namespace phaseloop::search
