#ifndef PHASELOOP_COMMON_KAFKA_DELIVERY_SPOOL_H_
#define PHASELOOP_COMMON_KAFKA_DELIVERY_SPOOL_H_

// A local spool for records that must not be lost (episodes, rewards): what
// a Producer could not deliver is kept in a directory and produced again,
// first, by the next run. A record leaves the spool only after a successful
// delivery report for it.
//
// Layout: DIR/*.spool, each file one batch of records (written atomically:
// temp file, fsync, rename; common/files), named so that listing them in
// name order gives the oldest batch first; DIR/.lock serialises retries
// between processes sharing DIR. A file that cannot be parsed is renamed
// *.unreadable, and records that can never be produced are moved to a
// *.refused file of the same format: those the producer refuses at once as
// larger than it may send, and those the broker refuses even when produced
// alone (larger than the topic takes, invalid) — a broker's refusal fails a
// whole batch, so each record of such a batch is produced again alone, and
// only those refused alone are set aside. Both kinds of file are named in
// SpoolRetry, never deleted and never retried.
//
// Delivery is at least once: a record whose earlier attempt may have reached
// the broker (possibly_persisted) is produced again. phaseloop's outputs
// are keyed so that a second copy overwrites (episodes by episode_id,
// rewards by service/group/deployment/window).
//
// Thread-safety: one DeliverySpool per thread; several processes may share a
// directory (Keep never collides, Retry takes DIR/.lock).

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kafka/producer.h"

namespace phaseloop::kafka {

struct SpooledRecord {
  std::string topic;
  std::string key;
  std::string value;
};

// Records moved out of the spool to `file` (*.refused) because they can
// never be produced; `reason` is the first refusal's message. `file` is ""
// when the file could not be written (the reason then says why): they are
// still in the spool, counted as kept.
struct RefusedRecords {
  std::string file;
  int64_t count = 0;
  std::string reason;
};

struct SpoolRetry {
  int64_t delivered = 0;  // acknowledged, removed from the spool
  int64_t kept = 0;       // still in the spool (delivery failed again)
  bool busy = false;      // another process was retrying this spool
  std::vector<std::string> unreadable;  // files set aside (*.unreadable)
  std::vector<RefusedRecords> refused;  // set aside, never to be retried
};

class DeliverySpool {
 public:
  // Creates `dir` (and its parents) if needed; the error names it.
  static absl::StatusOr<DeliverySpool> Open(const std::string& dir);

  const std::string& dir() const { return dir_; }

  // Writes `records` to the spool as one new file (nothing when empty).
  absl::Status Keep(const std::vector<SpooledRecord>& records);

  // Producer::Drain(timeout) (waits for the delivery reports, purges what
  // is left) and keeps every record that was not delivered. Returns how
  // many were kept.
  absl::StatusOr<int64_t> KeepUndelivered(Producer& producer,
                                          std::chrono::milliseconds timeout);

  // Produces every spooled record through `producer` (oldest first) and
  // waits up to `timeout` for their delivery reports (and up to `timeout`
  // more for records of batches the broker refused, produced again one at
  // a time): each file is removed
  // once all its records are delivered, or rewritten with those that were
  // not. Call it first, before producing anything else: FailedPrecondition
  // when `producer` has records in flight. Failures of records produced
  // before that were not taken yet are kept too (never dropped).
  absl::StatusOr<SpoolRetry> Retry(Producer& producer,
                                   std::chrono::milliseconds timeout);

  // The spooled records, oldest first (unreadable files skipped).
  absl::StatusOr<std::vector<SpooledRecord>> Records() const;

 private:
  explicit DeliverySpool(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// What a command says about a retry of the spool in `dir`: "spool DIR: N
// records of an earlier run delivered, M still kept for retry", then each
// file set aside; "" when there is nothing to say.
std::string SpoolRetryMessage(const SpoolRetry& retry, const std::string& dir);

// "N records kept for retry in DIR (...)": what commands print.
std::string KeptForRetryMessage(int64_t kept, const std::string& dir);

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_DELIVERY_SPOOL_H_
