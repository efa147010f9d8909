#ifndef PHASELOOP_REPLAY_BUFFER_BUFFER_COMMAND_H_
#define PHASELOOP_REPLAY_BUFFER_BUFFER_COMMAND_H_

// `phaseloop buffer stats|miscompiles|export|import|ingest`: look into a
// replay buffer and move it between machines (format: buffer_transfer.h).
//   stats  --buffer DB [--json]   rows per table; episodes per split,
//                                 objective and behaviour policy; rewards per
//                                 source; best-known sequences vs -Oz;
//                                 decisions per outcome and reason;
//                                 miscompiles per verdict, blocked pairs
//   miscompiles --buffer DB [--json]
//                                 every miscompile (workload, run, first
//                                 difference, verdict, blamed pairs) and
//                                 the blocked (module, pipeline) pairs
//   export --buffer DB --out FILE a consistent snapshot, itself a buffer
//   import --buffer DB --in FILE  upsert FILE's records into DB (created if
//                                 missing); importing twice changes nothing
//   ingest --buffer DB --kafka B  episodes and compile decisions from Kafka
//                                 (kafka_ingest.h);
//                                 records deleted from Kafka before they
//                                 were read are named on stderr (topic,
//                                 partition, offsets), counted in the
//                                 summary, and make the exit code 1 once
//                                 the rest is ingested
// Exit codes: 0 success, 1 internal failure or records lost, 2 bad input (a
// missing, foreign, corrupt or too-new file; an existing --out; no --kafka).

#include <iosfwd>
#include <string>

#include "CLI/CLI.hpp"
#include "replay_buffer/kafka_ingest.h"

namespace phaseloop::replay_buffer {

void AddBufferCommand(CLI::App& app, int& exit_code);

int RunBufferStats(const std::string& buffer, bool json, std::ostream& out,
                   std::ostream& err);
int RunBufferMiscompiles(const std::string& buffer, bool json,
                         std::ostream& out, std::ostream& err);
int RunBufferExport(const std::string& buffer, const std::string& out_path,
                    std::ostream& out, std::ostream& err);
int RunBufferImport(const std::string& buffer, const std::string& in_path,
                    std::ostream& out, std::ostream& err);
int RunBufferIngest(const std::string& buffer, const IngestOptions& options,
                    std::ostream& out, std::ostream& err);

}  // namespace phaseloop::replay_buffer

#endif  // PHASELOOP_REPLAY_BUFFER_BUFFER_COMMAND_H_
