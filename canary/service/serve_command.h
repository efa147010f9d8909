#ifndef PHASELOOP_CANARY_SERVICE_SERVE_COMMAND_H_
#define PHASELOOP_CANARY_SERVICE_SERVE_COMMAND_H_

// `phaseloop canary serve --handler LIB.so --service NAME --group
//  baseline|canary --deployment-id ID --policy-version V [--listen
//  HOST:PORT] [--address-file F] [--window-ms 1000] [--kafka HOST:PORT]
//  [--spool DIR] [--instance ID] [--threads N]`: one instance of the demo
// service (service_server.h) over a handler library, its request latencies
// recorded per window (reward_engine/sli's SliRecorder) and published to
// Kafka phaseloop.sli (sli_delivery.h: undelivered windows kept in the
// spool, produced again first by the next run). Prints the bound HOST:PORT
// on stdout (port 0 picks a free one).
//
// SIGINT/SIGTERM: stop accepting, finish the requests being served, close
// every window (the current one included) and publish it; exit 0 when every
// window was delivered or spooled, 1 when one could not even be spooled.
// Exit codes: 0 stopped by a signal, 1 internal failure, 2 bad input
// (flags, handler library, address in use).

#include <iosfwd>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::canary {

struct ServeFlags {
  std::string handler;
  std::string listen = "127.0.0.1:0";
  std::string address_file;
  std::string service;
  std::string group;
  std::string deployment_id;
  std::string policy_version;
  std::string instance;  // "" = HOSTNAME:PID
  int64_t window_ms = 1000;
  std::string kafka;
  std::string spool;  // "" = STATE/spool/sli-SERVICE-GROUP
  int threads = 8;
  double slowdown = 0;  // fault injection for benchmarks; 0: off
};

int RunServe(const ServeFlags& flags, std::ostream& out, std::ostream& err);

// Adds `serve` to the `phaseloop canary` group.
void AddServeCommand(CLI::App* canary, int& exit_code);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_SERVICE_SERVE_COMMAND_H_
