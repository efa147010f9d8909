#include "common/protobuf/protobuf_logs.h"

#include <cstdio>
#include <string>

#include "google/protobuf/stubs/logging.h"

namespace phaseloop::protobuf {
namespace {

void FatalOnly(google::protobuf::LogLevel level, const char* filename, int line,
               const std::string& message) {
  if (level != google::protobuf::LOGLEVEL_FATAL) return;
  std::fprintf(stderr, "[libprotobuf FATAL %s:%d] %s\n", filename, line,
               message.c_str());
}

}  // namespace

void DropProtobufLogs() { google::protobuf::SetLogHandler(&FatalOnly); }

}  // namespace phaseloop::protobuf
