#ifndef PHASELOOP_COMMON_PROTOBUF_PROTOBUF_LOGS_H_
#define PHASELOOP_COMMON_PROTOBUF_PROTOBUF_LOGS_H_

// libprotobuf writes its own "[libprotobuf ERROR ...]" lines to stderr (a
// string field that is not UTF-8, a message that failed to parse). phaseloop
// reports every parse failure itself, naming the file or record and the fix,
// and phaseloop-cc's stderr must be clang's alone: the programs route
// libprotobuf's messages here before they parse or write any record.

namespace phaseloop::protobuf {

// From now on libprotobuf's INFO, WARNING and ERROR messages are dropped;
// a FATAL one (a bug: the process aborts) is still written to stderr.
void DropProtobufLogs();

}  // namespace phaseloop::protobuf

#endif  // PHASELOOP_COMMON_PROTOBUF_PROTOBUF_LOGS_H_
