#include "compiler_driver/cc_wrapper/spool_shipping.h"

#include "absl/strings/str_cat.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/cc_wrapper/spool_space.h"

namespace phaseloop::cc_wrapper {

absl::StatusOr<SpoolShipment> ShipSpool(const std::string& dir,
                                        const DecisionBatchSender& send) {
  absl::StatusOr<SpoolContents> contents = ReadSpool(dir);
  if (!contents.ok()) return contents.status();
  SpoolShipment shipment;
  shipment.corrupt = contents->corrupt;
  if (contents->files.empty()) return shipment;
  std::vector<const v1::DecisionBatch*> batches;
  for (const SpoolFile& file : contents->files) batches.push_back(&file.batch);
  std::vector<absl::Status> sent = send(batches);
  if (sent.size() != batches.size()) {  // a sender's bug: trust none of it
    sent.assign(batches.size(), absl::InternalError(absl::StrCat(
                                    "the sender answered for ", sent.size(),
                                    " of ", batches.size(), " spool files")));
  }
  for (size_t i = 0; i < contents->files.size(); ++i) {
    const SpoolFile& file = contents->files[i];
    if (sent[i].ok()) {
      shipment.shipped.push_back(file.path);
      shipment.decisions += file.batch.decisions_size();
    } else {
      shipment.kept.emplace_back(file.path, sent[i]);
    }
  }
  if (!shipment.shipped.empty()) MarkShipped(dir, shipment.shipped);
  return shipment;
}

}  // namespace phaseloop::cc_wrapper
