#include "staging_harness/search/module_search.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/timing/elapsed.h"
#include "compiler_driver/passes/action_space.h"

namespace phaseloop::search {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t Fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string HostName() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "";
}

// An action's failure (the state is unchanged) as opposed to the worker's.
bool ActionFailed(const absl::Status& status) {
  return status.code() == absl::StatusCode::kAborted ||           // crash
         status.code() == absl::StatusCode::kDeadlineExceeded ||  // hang
         status.code() == absl::StatusCode::kInternal;            // verifier
}

}  // namespace

std::string PipelineText(const std::string& action_space_version,
                         const std::vector<int>& actions) {
  const passes::ActionSpace& space = passes::ActionSpace::Llvm16();
  if (action_space_version != space.version()) return "";
  std::vector<const passes::Action*> chosen;
  for (int a : actions) {
    if (a < 0 || a >= space.size()) return "";
    chosen.push_back(&space.at(a));
  }
  return passes::ActionSpace::JoinPipelines(chosen);
}

ModuleSearch::ModuleSearch(service::RemoteSession& root, StateObservation start,
                           v1::StartSessionReply start_reply,
                           ModuleReference reference,
                           ModuleSearchOptions options, EpisodeLog log)
    : root_(root),
      start_(std::move(start)),
      start_reply_(std::move(start_reply)),
      reference_(reference),
      options_(std::move(options)),
      log_(std::move(log)),
      action_count_(start_reply_.action_count()),
      begin_(std::chrono::steady_clock::now()) {
  best_value_ = Value(start_);
}

std::vector<v1::ObservationKind> ModuleSearch::ObservationKinds() const {
  std::vector<v1::ObservationKind> kinds = {v1::IR_COUNT, v1::AUTOPHASE,
                                            v1::INST_COUNT};
  // Both sizes of one object: codegen runs once for the two.
  if (options_.objective != Objective::kIrCount) {
    kinds.push_back(v1::TEXT_SIZE);
    kinds.push_back(v1::ALLOC_SIZE);
  }
  if (options_.observe_hash) kinds.push_back(v1::MODULE_HASH);
  return kinds;
}

StateObservation ModuleSearch::Parse(
    const google::protobuf::RepeatedPtrField<v1::Observation>& observations) {
  StateObservation s;
  for (const v1::Observation& o : observations) {
    switch (o.kind()) {
      case v1::IR_COUNT:
        s.ir_count = o.scalar();
        break;
      case v1::TEXT_SIZE:
        s.text_size = o.scalar();
        break;
      case v1::ALLOC_SIZE:
        s.alloc_size = o.scalar();
        break;
      case v1::AUTOPHASE:
        s.autophase.assign(o.vector().begin(), o.vector().end());
        break;
      case v1::INST_COUNT:
        s.inst_count.assign(o.vector().begin(), o.vector().end());
        break;
      case v1::MODULE_HASH:
        s.hash = o.text();
        break;
      default:
        break;
    }
  }
  return s;
}

double ModuleSearch::Elapsed() const { return timing::SecondsSince(begin_); }

bool ModuleSearch::OutOfBudget() const {
  // The budget first: a search that spent it is whole, whatever signal
  // came meanwhile (a stopped one is worked again by another worker).
  if (options_.max_evaluations > 0 &&
      evaluations_ >= options_.max_evaluations) {
    return true;
  }
  if (Elapsed() >= options_.budget_seconds) {
    time_limited_ = true;
    return true;
  }
  if (options_.stop != nullptr && options_.stop->load()) {
    stopped_ = true;
    return true;
  }
  return false;
}

int64_t ModuleSearch::Value(const StateObservation& state) const {
  return PickByObjective(options_.objective, state.ir_count, state.text_size,
                         state.alloc_size);
}

double ModuleSearch::Reward(int64_t before, int64_t after) const {
  const ModuleReference& r = reference_;
  const int64_t start = PickByObjective(options_.objective, r.ir_count_start,
                                        r.text_size_start, r.alloc_size_start);
  const int64_t oz = PickByObjective(options_.objective, r.ir_count_oz,
                                     r.text_size_oz, r.alloc_size_oz);
  const int64_t scale =
      start - oz > 0 ? start - oz : std::max<int64_t>(start, 1);
  return static_cast<double>(before - after) / static_cast<double>(scale);
}

uint64_t ModuleSearch::EpisodeSeed(int64_t index) const {
  return SplitMix64(SplitMix64(options_.seed ^ Fnv1a(module_hash())) +
                    static_cast<uint64_t>(index));
}

std::string ModuleSearch::NewEpisodeId() {
  return absl::StrCat(options_.run_id, "-", module_hash().substr(0, 12), "-",
                      next_episode_++);
}

absl::StatusOr<Trajectory> ModuleSearch::StartTrajectory() {
  absl::StatusOr<std::unique_ptr<service::RemoteSession>> fork = root_.Fork();
  if (!fork.ok()) return fork.status();
  Trajectory t;
  t.session = std::move(*fork);
  t.state = start_;
  t.started = Elapsed();
  t.episode_id = NewEpisodeId();
  return t;
}

absl::StatusOr<Trajectory> ModuleSearch::ForkTrajectory(
    const Trajectory& from) {
  absl::StatusOr<std::unique_ptr<service::RemoteSession>> fork =
      from.session->Fork();
  if (!fork.ok()) return fork.status();
  Trajectory t;
  t.session = std::move(*fork);
  t.state = from.state;
  t.steps = from.steps;
  t.started = Elapsed();
  t.episode_id = NewEpisodeId();
  return t;
}

absl::StatusOr<ModuleSearch::Candidate> ModuleSearch::StepSession(
    service::RemoteSession& session, const StateObservation& before, int action,
    double propensity) {
  ++evaluations_;
  Candidate c;
  v1::Step& step = c.step;
  step.mutable_autophase()->Assign(before.autophase.begin(),
                                   before.autophase.end());
  step.mutable_inst_count()->Assign(before.inst_count.begin(),
                                    before.inst_count.end());
  step.set_action(action);
  const passes::ActionSpace& space = passes::ActionSpace::Llvm16();
  if (start_reply_.action_space() == space.version() && action >= 0 &&
      action < space.size()) {
    step.set_action_name(space.at(action).name);
  }
  step.set_action_probability(propensity);
  absl::StatusOr<v1::StepReply> reply =
      session.Step({action}, ObservationKinds());
  if (!reply.ok()) {
    if (!ActionFailed(reply.status())) return reply.status();
    ++failed_steps_;
    if (reply.status().code() == absl::StatusCode::kDeadlineExceeded) {
      ++timed_out_steps_;
    }
    c.failed = true;
    c.state = before;
    step.set_failed(true);
    step.set_reward(0);
    step.set_ir_count_after(before.ir_count);
    step.set_text_size_after(before.text_size);
    step.set_alloc_size_after(before.alloc_size);
    return c;
  }
  c.state = Parse(reply->observations());
  step.set_reward(Reward(Value(before), Value(c.state)));
  step.set_ir_count_after(c.state.ir_count);
  step.set_text_size_after(c.state.text_size);
  step.set_alloc_size_after(c.state.alloc_size);
  return c;
}

absl::StatusOr<ModuleSearch::Candidate> ModuleSearch::TryAction(
    const Trajectory& from, int action, double propensity) {
  absl::StatusOr<std::unique_ptr<service::RemoteSession>> fork =
      from.session->Fork();
  if (!fork.ok()) return fork.status();
  absl::StatusOr<Candidate> c =
      StepSession(**fork, from.state, action, propensity);
  if (c.ok() && !c->failed) c->session = std::move(*fork);
  return c;
}

absl::StatusOr<bool> ModuleSearch::Advance(Trajectory& t, int action,
                                           double propensity) {
  absl::StatusOr<Candidate> c =
      StepSession(*t.session, t.state, action, propensity);
  if (!c.ok()) return c.status();
  AppendStep(std::move(c->step), t);
  t.state = std::move(c->state);
  return !c->failed;
}

void ModuleSearch::AppendStep(v1::Step step, Trajectory& t) {
  step.set_index(static_cast<int>(t.steps.size()));
  t.steps.push_back(std::move(step));
}

void ModuleSearch::OfferBest(const Trajectory& t) {
  const int64_t value = Value(t.state);
  const std::vector<int>& actions = t.session->history();
  if (value < best_value_ ||
      (value == best_value_ && actions.size() < best_actions_.size())) {
    if (options_.blocked && !actions.empty() &&
        options_.blocked(module_hash(),
                         PipelineText(action_space_version(), actions))) {
      ++blocked_offers_;
      return;
    }
    best_value_ = value;
    best_actions_ = actions;
    best_episode_id_ = t.episode_id;
  }
}

absl::Status ModuleSearch::Emit(Trajectory& t, const std::string& behaviour,
                                uint64_t seed) {
  static const std::string host = HostName();
  if (t.state.text_size == 0 || t.state.alloc_size == 0) {
    absl::StatusOr<v1::ObserveReply> sizes =
        t.session->Observe({v1::TEXT_SIZE, v1::ALLOC_SIZE});
    // A worker built before ALLOC_SIZE existed refuses it: text alone then.
    if (!sizes.ok()) sizes = t.session->Observe({v1::TEXT_SIZE});
    if (sizes.ok()) {
      const StateObservation measured = Parse(sizes->observations());
      t.state.text_size = measured.text_size;
      t.state.alloc_size = measured.alloc_size;
    }
  }
  v1::Episode episode;
  episode.set_episode_id(t.episode_id);
  episode.set_module_hash(module_hash());
  episode.set_action_space_version(start_reply_.action_space());
  episode.set_objective(ObjectiveName(options_.objective));
  episode.set_behaviour_policy(behaviour);
  episode.set_seed(seed);
  for (const v1::Step& s : t.steps) *episode.add_steps() = s;
  episode.set_final_ir_count(t.state.ir_count);
  episode.set_final_text_size(t.state.text_size);
  episode.set_final_alloc_size(t.state.alloc_size);
  episode.set_unix_time_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  episode.set_host(host);
  episode.set_seconds(Elapsed() - t.started);
  ++episodes_;
  return log_(episode);
}

}  // namespace phaseloop::search
