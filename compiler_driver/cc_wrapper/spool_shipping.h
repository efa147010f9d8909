#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_SHIPPING_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_SHIPPING_H_

// Shipping a decision spool somewhere (`phaseloop decisions ship`): every
// unshipped spool file (`*.decisions`, spool_reader.h) is handed to a
// sender, and exactly the files whose every record the sender confirmed
// are marked shipped (renamed `*.shipped`, spool_space.h's MarkShipped).
// A file not confirmed stays as it is, for the next ship; a file that
// arrived and was not marked (a crash in between) is shipped again, which
// the receivers make harmless (decisions are upserted by decision_id).
// Where records go is the sender's business: the replay buffer
// (decision_store.h) here, Kafka in the phaseloop binary, which hands the
// compile path a sender because compiler_driver/ links no Kafka.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/phaseloop/v1/decision.pb.h"

namespace phaseloop::cc_wrapper {

// Sends the batches (one per spool file, in spool order) and returns one
// status per batch: OK only when every record of it arrived. Must return
// exactly batches.size() statuses.
using DecisionBatchSender = std::function<std::vector<absl::Status>(
    const std::vector<const v1::DecisionBatch*>& batches)>;

struct SpoolShipment {
  int64_t decisions = 0;             // records of the files marked shipped
  std::vector<std::string> shipped;  // files marked shipped
  // Files left unshipped, each with why (the sender's status).
  std::vector<std::pair<std::string, absl::Status>> kept;
  std::vector<std::string> corrupt;  // files that do not parse (left alone)
};

// Ships the unshipped files of the spool in `dir` (a missing directory is
// an empty spool). An error only when the spool cannot be read (nothing is
// sent then); a sender's failures come back in `kept`.
absl::StatusOr<SpoolShipment> ShipSpool(const std::string& dir,
                                        const DecisionBatchSender& send);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_SHIPPING_H_
