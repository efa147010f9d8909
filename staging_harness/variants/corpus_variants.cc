#include "staging_harness/variants/corpus_variants.h"

#include <chrono>
#include <mutex>

#include "common/process/parallel_for.h"
#include "staging_harness/corpus/manifest.h"

namespace phaseloop::staging {

absl::StatusOr<std::vector<CorpusModule>> ListCorpusModules(
    const std::string& dir, const std::string& split,
    std::vector<std::string>* warnings) {
  return search::ListCorpus(dir, split, warnings);
}

absl::StatusOr<std::vector<v1::ModuleRecord>> ReadCorpusRecords(
    const std::string& dir, const std::string& split) {
  absl::StatusOr<corpus::Manifest> manifest = corpus::ReadManifest(dir);
  if (!manifest.ok()) return manifest.status();
  std::vector<v1::ModuleRecord> records;
  for (v1::ModuleRecord& r : manifest->modules) {
    if (r.bitcode_path().empty()) continue;
    if (!split.empty() && r.split() != split) continue;
    records.push_back(std::move(r));
  }
  return records;
}

void MeasureEachInChild(
    size_t n, const ChildMeasureOptions& options,
    const std::function<absl::StatusOr<std::string>(size_t)>& measure,
    const std::function<void(size_t, const MeasureOutcome&, double)>& done) {
  std::mutex done_mutex;
  process::ParallelFor(n, options.threads, [&](size_t i) {
    const auto start = std::chrono::steady_clock::now();
    const MeasureOutcome outcome = process::RunInChild(
        [&]() -> absl::StatusOr<std::string> { return measure(i); },
        options.timeout_ms);
    const double elapsed_ms = std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - start)
                                  .count();
    std::lock_guard<std::mutex> lock(done_mutex);
    done(i, outcome, elapsed_ms);
  });
}

}  // namespace phaseloop::staging
