#include "canary/load/open_loop_load.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "canary/load/payload.h"
#include "canary/load/seeded_random.h"

namespace phaseloop::canary::load {
namespace {

// Each mix entry's payloads are slices of one pool this much longer than
// its largest payload, at seeded offsets.
constexpr size_t kPoolSlack = 64 * 1024;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

Clock::duration FromSeconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(s));
}

std::vector<TargetResults> EmptyResults(const std::vector<Target>& targets) {
  std::vector<TargetResults> results(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) results[i].name = targets[i].name;
  return results;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OpenLoopLoad>> OpenLoopLoad::Start(
    LoadSpec spec, const TargetSet& targets) {
  if (absl::Status s = ValidateLoadSpec(spec); !s.ok()) return s;
  std::unique_ptr<OpenLoopLoad> load(
      new OpenLoopLoad(std::move(spec), targets));
  for (const Target& t : load->targets_.targets()) {
    auto endpoint = ResolveEndpoint(t.host, t.port);
    if (!endpoint.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("target ", t.name, ": ", endpoint.status().message()));
    }
    load->endpoints_.push_back(*std::move(endpoint));
  }
  for (const MixEntry& entry : load->spec_.mix) {
    load->paths_.push_back(absl::StrCat("/v1/handle/", entry.kind));
    load->payloads_.push_back(TextLikePayload(
        entry.seed, static_cast<size_t>(entry.max_payload_bytes) + kPoolSlack));
  }
  const std::vector<Target> names = load->targets_.targets();
  load->total_ = EmptyResults(names);
  load->slice_ = EmptyResults(names);
  load->start_ = load->slice_start_ = Clock::now();
  load->workers_running_ = load->spec_.max_in_flight;
  for (int i = 0; i < load->spec_.max_in_flight; ++i) {
    load->workers_.emplace_back([raw = load.get()] { raw->Work(); });
  }
  load->scheduler_ = std::thread([raw = load.get()] { raw->Schedule(); });
  return load;
}

OpenLoopLoad::OpenLoopLoad(LoadSpec spec, const TargetSet& targets)
    : spec_(std::move(spec)), targets_(targets) {}

OpenLoopLoad::~OpenLoopLoad() {
  Stop();
  if (scheduler_.joinable()) scheduler_.join();
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

absl::Status OpenLoopLoad::SetWeights(
    const std::vector<std::pair<std::string, double>>& weights) {
  return targets_.SetWeights(weights);
}

void OpenLoopLoad::Stop() {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  stopping_ = true;
  stop_requested_.notify_all();
  queue_changed_.notify_all();
}

void OpenLoopLoad::Wait() {
  std::unique_lock<std::mutex> lock(queue_mutex_);
  ended_changed_.wait(lock, [this] { return workers_running_ == 0; });
}

bool OpenLoopLoad::WaitFor(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(queue_mutex_);
  return ended_changed_.wait_for(lock, timeout,
                                 [this] { return workers_running_ == 0; });
}

void OpenLoopLoad::Schedule() {
  SeededRandom random(spec_.seed);
  double total_weight = 0;
  for (const MixEntry& entry : spec_.mix) total_weight += entry.weight;
  const double mean_gap = 1.0 / spec_.rate;
  double offset_s = 0;  // of request i from the start
  Clock::time_point last_intended = start_;
  for (int64_t i = 0; spec_.max_requests == 0 || i < spec_.max_requests; ++i) {
    offset_s = spec_.arrival == Arrival::kUniform
                   ? static_cast<double>(i) * mean_gap
                   : offset_s + random.Exponential(mean_gap);
    if (spec_.duration_s > 0 && offset_s >= spec_.duration_s) break;
    Request request;
    // The kind: target entry j covers [W_<j, W_<=j) of the total weight.
    double point = random.Uniform() * total_weight;
    request.kind = 0;
    for (size_t j = 0; j < spec_.mix.size(); ++j) {
      if (spec_.mix[j].weight <= 0) continue;
      request.kind = static_cast<int>(j);
      if (point < spec_.mix[j].weight) break;
      point -= spec_.mix[j].weight;
    }
    const MixEntry& entry = spec_.mix[request.kind];
    request.payload_size = static_cast<size_t>(
        random.Between(entry.min_payload_bytes, entry.max_payload_bytes));
    request.payload_offset = static_cast<size_t>(
        random.Between(0, static_cast<int64_t>(payloads_[request.kind].size() -
                                               request.payload_size)));
    const double route = random.Uniform();
    request.intended = start_ + FromSeconds(offset_s);
    {
      std::unique_lock<std::mutex> lock(queue_mutex_);
      stop_requested_.wait_until(lock, request.intended,
                                 [this] { return stopping_; });
      if (stopping_) break;
    }
    // Routed at its intended time, by the weights of that moment.
    request.target = targets_.Choose(route);
    {
      std::lock_guard<std::mutex> lock(results_mutex_);
      ++total_[request.target].intended;
      ++slice_[request.target].intended;
    }
    last_intended = request.intended;
    std::lock_guard<std::mutex> lock(queue_mutex_);
    queue_.push_back(request);
    queue_changed_.notify_one();
  }
  std::lock_guard<std::mutex> lock(queue_mutex_);
  schedule_done_ = true;
  drain_until_ =
      std::max(last_intended, Clock::now()) + FromSeconds(spec_.timeout_s);
  queue_changed_.notify_all();
}

bool OpenLoopLoad::Next(Request& request, bool& send) {
  std::unique_lock<std::mutex> lock(queue_mutex_);
  while (true) {
    if (!queue_.empty()) {
      request = queue_.front();
      queue_.pop_front();
      send = !stopping_ && (!schedule_done_ || Clock::now() < drain_until_);
      return true;
    }
    if (stopping_ || schedule_done_) return false;
    queue_changed_.wait(lock);
  }
}

void OpenLoopLoad::Work() {
  std::vector<std::unique_ptr<HttpConnection>> connections(endpoints_.size());
  Request request;
  bool send = false;
  while (Next(request, send)) {
    if (!send) {
      RecordNotSent(request.target);
      continue;
    }
    const Clock::time_point started = Clock::now();
    RecordStart(request.target, Seconds(started - request.intended));
    std::unique_ptr<HttpConnection>& connection = connections[request.target];
    if (connection == nullptr) {
      connection = std::make_unique<HttpConnection>(endpoints_[request.target]);
    }
    const HttpOutcome outcome = connection->Post(
        paths_[request.kind],
        absl::string_view(payloads_[request.kind])
            .substr(request.payload_offset, request.payload_size),
        started + FromSeconds(spec_.timeout_s));
    RecordDone(request.target, outcome,
               Seconds(Clock::now() - request.intended));
  }
  connections.clear();  // close before the run counts as ended
  std::lock_guard<std::mutex> lock(queue_mutex_);
  if (--workers_running_ == 0) {
    ended_ = Clock::now();
    ended_changed_.notify_all();
  }
}

void OpenLoopLoad::RecordStart(int target, double delay_s) {
  delay_s = std::max(0.0, delay_s);
  const bool late = delay_s > spec_.late_threshold_s;
  std::lock_guard<std::mutex> lock(results_mutex_);
  for (auto* results : {&total_, &slice_}) {
    TargetResults& r = (*results)[target];
    ++r.sent;
    r.start_delay.Add(delay_s).IgnoreError();  // finite, >= 0
    if (late) ++r.late_starts;
  }
}

void OpenLoopLoad::RecordDone(int target, const HttpOutcome& outcome,
                              double latency_s) {
  latency_s = std::max(0.0, latency_s);
  std::lock_guard<std::mutex> lock(results_mutex_);
  for (auto* results : {&total_, &slice_}) {
    TargetResults& r = (*results)[target];
    if (outcome.error.empty()) {
      ++r.ok;
      r.latency.Add(latency_s).IgnoreError();  // finite, >= 0
    } else {
      ++r.errors[outcome.error];
    }
  }
}

void OpenLoopLoad::RecordNotSent(int target) {
  std::lock_guard<std::mutex> lock(results_mutex_);
  ++total_[target].errors[kErrorNotSent];
  ++slice_[target].errors[kErrorNotSent];
}

LoadResults OpenLoopLoad::Results(const std::vector<TargetResults>& from,
                                  Clock::time_point since) const {
  Clock::time_point until = Clock::now();
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    if (workers_running_ == 0) until = std::min(until, ended_);
  }
  LoadResults results;
  results.elapsed_s = std::max(0.0, Seconds(until - since));
  results.targets = from;
  results.overall.name = "overall";
  for (const TargetResults& r : from) results.overall.Merge(r);
  return results;
}

LoadResults OpenLoopLoad::Snapshot() const {
  std::lock_guard<std::mutex> lock(results_mutex_);
  return Results(total_, start_);
}

LoadResults OpenLoopLoad::TakeSlice() {
  std::lock_guard<std::mutex> lock(results_mutex_);
  LoadResults results = Results(slice_, slice_start_);
  slice_ = EmptyResults(targets_.targets());
  slice_start_ = Clock::now();
  return results;
}

}  // namespace phaseloop::canary::load
