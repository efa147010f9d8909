#include "reward_engine/sli/sli_command.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/command/exit_code.h"
#include "common/command/subcommand.h"
#include "common/command/topic_name_check.h"
#include "common/kafka/producer.h"
#include "common/kafka/topics.h"
#include "common/protobuf/utf8_strings.h"
#include "reward_engine/sli/sli_json.h"

namespace phaseloop::sli {

namespace {

// Publishes each window with the idempotent producer, keyed by service,
// and waits for its delivery report: an OK Publish means Kafka has it.
class KafkaSliSink : public SliSink {
 public:
  KafkaSliSink(std::unique_ptr<kafka::Producer> producer, std::string topic)
      : producer_(std::move(producer)), topic_(std::move(topic)) {}
  absl::Status Publish(const v1::SliWindow& window) override {
    absl::Status produced =
        producer_->Produce(topic_, kafka::SliKey(window.service()),
                           protobuf::SerializeAsValidUtf8(window));
    if (!produced.ok()) return produced;
    return producer_->Flush(std::chrono::seconds(30));
  }

 private:
  std::unique_ptr<kafka::Producer> producer_;
  std::string topic_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SliSink>> MakeKafkaSliSink(
    const std::string& bootstrap, const std::string& topic) {
  if (bootstrap.empty()) {
    return absl::InvalidArgumentError(
        "no Kafka bootstrap: pass --kafka HOST:PORT (or set PHASELOOP_KAFKA)");
  }
  kafka::ProducerOptions options;
  options.bootstrap_servers = bootstrap;
  options.client_id = "phaseloop-sli-send";
  absl::StatusOr<std::unique_ptr<kafka::Producer>> producer =
      kafka::Producer::Create(options);
  if (!producer.ok()) return producer.status();
  return std::unique_ptr<SliSink>(
      new KafkaSliSink(std::move(*producer), topic));
}

absl::Status SendSliWindows(const std::vector<v1::SliWindow>& windows,
                            SliSink& sink, int* published) {
  *published = 0;
  for (const v1::SliWindow& window : windows) {
    absl::Status status = sink.Publish(window);
    if (!status.ok()) return status;
    ++*published;
  }
  return absl::OkStatus();
}

int RunSliSend(const SliSendFlags& flags, std::istream& standard_input,
               std::ostream& out, std::ostream& err,
               const SliSinkFactory& make_sink) {
  constexpr char kName[] = "phaseloop sli send: ";
  if (flags.kafka.empty() && !flags.dry_run) {
    err << kName << "--kafka BOOTSTRAP is required (or --dry-run to only "
        << "check and print the windows)\n";
    return command::kExitBadInput;
  }
  const bool from_stdin = flags.in == "-";
  std::ifstream file;
  if (!from_stdin) {
    std::error_code error;
    if (std::filesystem::is_directory(flags.in, error)) {
      err << kName << "--in " << flags.in
          << " is a directory; give a JSON-lines file, or - for standard "
             "input\n";
      return command::kExitBadInput;
    }
    file.open(flags.in);
    if (!file) {
      err << kName << "cannot read --in " << flags.in
          << " (give a JSON-lines file, or - for standard input)\n";
      return command::kExitBadInput;
    }
  }
  const std::string source = from_stdin ? "standard input" : flags.in;
  SliJsonLines parsed = ParseSliJsonLines(from_stdin ? standard_input : file);
  if (parsed.error_lines > 0) {
    for (const std::string& error : parsed.errors) {
      err << source << ": " << error << "\n";
    }
    if (parsed.error_lines > static_cast<int>(parsed.errors.size())) {
      err << source << ": ... and "
          << parsed.error_lines - static_cast<int>(parsed.errors.size())
          << " more bad lines\n";
    }
    err << kName << parsed.error_lines << " bad lines in " << source
        << "; nothing was sent. Fix them and run again.\n";
    return command::kExitBadInput;
  }
  if (flags.dry_run) {
    for (const v1::SliWindow& w : parsed.windows) {
      out << SliWindowToJson(w) << "\n";
    }
    err << kName << parsed.windows.size() << " valid SLI windows (dry run, "
        << "nothing sent)\n";
    return command::kExitOk;
  }
  absl::StatusOr<std::unique_ptr<SliSink>> sink =
      make_sink(flags.kafka, flags.topic);
  if (!sink.ok()) {
    err << kName << sink.status().message() << "\n";
    return sink.status().code() == absl::StatusCode::kInvalidArgument
               ? command::kExitBadInput
               : command::kExitInternal;
  }
  int published = 0;
  absl::Status sent = SendSliWindows(parsed.windows, **sink, &published);
  if (!sent.ok()) {
    err << kName << "sent " << published << " of " << parsed.windows.size()
        << " windows, then: " << sent.message()
        << ". Running the command again is safe (windows are "
        << "de-duplicated downstream).\n";
    return command::kExitInternal;
  }
  out << "sent " << published << " SLI windows to " << flags.topic << " at "
      << flags.kafka << "\n";
  return command::kExitOk;
}

void AddSliCommand(CLI::App& app, int& exit_code) {
  CLI::App* sli = command::AddCommandGroup(
      app, "sli",
      "Service latency SLIs: per-window sketches for the reward engine");
  auto [send, flags] = command::AddSubcommand<SliSendFlags>(
      *sli, "send",
      "Validate SLI windows given as JSON lines (raw latencies_ms or a "
      "sketch) and send them to Kafka",
      exit_code, [](const SliSendFlags& f) {
        return RunSliSend(f, std::cin, std::cout, std::cerr);
      });
  send->add_option("--in", flags->in,
                   "JSON-lines file, one window per line; - for stdin")
      ->required();
  command::AddKafkaOption(*send, flags->kafka);
  send->add_option("--topic", flags->topic, "topic")
      ->default_str(std::string(kafka::kSliTopic))
      ->check(command::KafkaTopicName());
  send->add_flag("--dry-run", flags->dry_run,
                 "validate and print the windows as proto3 JSON; send nothing");
}

}  // namespace phaseloop::sli
