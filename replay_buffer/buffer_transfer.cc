#include "replay_buffer/buffer_transfer.h"

#include "absl/strings/str_cat.h"

namespace phaseloop::replay_buffer {
namespace {

constexpr int kImportBatch = 256;  // records per import transaction

}  // namespace

absl::Status ExportBuffer(const std::string& buffer_path,
                          const std::string& out_path) {
  OpenOptions options;
  options.create = false;
  absl::StatusOr<std::unique_ptr<ReplayStore>> store =
      OpenReplayStore(buffer_path, options);
  if (!store.ok()) return store.status();
  return (*store)->Snapshot(out_path);
}

absl::StatusOr<int64_t> ImportBuffer(const std::string& in_path,
                                     ReplayStore& destination,
                                     const std::atomic<bool>* stop) {
  OpenOptions options;
  options.create = false;
  options.read_only = true;
  absl::StatusOr<std::unique_ptr<ReplayStore>> source =
      OpenReplayStore(in_path, options);
  if (!source.ok()) return source.status();
  int64_t records = 0;
  absl::Status status =
      (*source)->Scan(kImportBatch, [&](const WriteBatch& batch) {
        if (stop != nullptr && stop->load()) {
          return absl::CancelledError(
              absl::StrCat("stopped after ", records, " records of ", in_path));
        }
        absl::Status written = destination.Write(batch);
        if (written.ok()) records += static_cast<int64_t>(batch.size());
        return written;
      });
  if (!status.ok()) return status;
  return records;
}

}  // namespace phaseloop::replay_buffer
