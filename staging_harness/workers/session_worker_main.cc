// phaseloop-session-worker: serves compilation sessions over gRPC so that a
// pass that crashes or hangs kills only this process. Started and restarted by
// WorkerClient; can also run on another machine (--listen 0.0.0.0:PORT).
#include <iostream>

#include "CLI/CLI.hpp"
#include "common/protobuf/protobuf_logs.h"
#include "grpcpp/server_builder.h"
#include "staging_harness/workers/session_service.h"

int main(int argc, char** argv) {
  // Every parse failure is reported with the file and the fix: libprotobuf
  // need not add its own line.
  phaseloop::protobuf::DropProtobufLogs();
  CLI::App app{"phaseloop-session-worker: compilation sessions over gRPC"};
  std::string listen = "127.0.0.1:0";
  phaseloop::service::FaultInjection faults;
  app.add_option(
         "--listen", listen,
         "address to serve on: unix:PATH or HOST:PORT (port 0 picks one)")
      ->capture_default_str();
  app.add_option("--inject-crash-action", faults.crash_action,
                 "testing: abort() when this action is applied");
  app.add_option("--inject-hang-action", faults.hang_action,
                 "testing: never return when this action is applied");
  CLI11_PARSE(app, argc, argv);

  phaseloop::service::SessionService service(faults);
  grpc::ServerBuilder builder;
  // gRPC binds with SO_REUSEPORT by default: a second server on a busy
  // address started, and the kernel split the clients between the two.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  int port = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(256 << 20);
  builder.SetMaxSendMessageSize(256 << 20);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::cerr << "error: cannot listen on '" << listen
              << "'; choose another --listen address\n";
    return 2;
  }
  // The first line on stdout tells a parent where to connect.
  if (listen.rfind("unix:", 0) == 0) {
    std::cout << "listening " << listen << std::endl;
  } else {
    std::cout << "listening " << listen.substr(0, listen.rfind(':')) << ":"
              << port << std::endl;
  }
  server->Wait();
  return 0;
}
