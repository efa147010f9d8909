#include "common/kafka/client_config.h"

#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/kafka/kafka_error.h"

namespace phaseloop::kafka::internal {
namespace {

absl::Status SetProperty(RdKafka::Conf* conf, const std::string& role,
                         const std::string& name, const std::string& value) {
  std::string error;
  if (conf->set(name, value, error) != RdKafka::Conf::CONF_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("Kafka ", role, " configuration: ", name, "=", value,
                     " rejected by librdkafka: ", error));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<RdKafka::Conf>> MakeConf(
    const std::string& role, const std::map<std::string, std::string>& base,
    const std::map<std::string, std::string>& user,
    const std::map<std::string, std::string>& owned_reasons) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  for (const auto& [name, value] : base) {
    absl::Status set = SetProperty(conf.get(), role, name, value);
    if (!set.ok()) return set;
  }
  for (const auto& [name, value] : user) {
    auto owned = owned_reasons.find(name);
    if (owned != owned_reasons.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Kafka ", role, " configuration: ", name, " cannot be overridden (",
          owned->second, "); remove it from the extra properties"));
    }
    if (absl::StartsWith(name, "test.mock.")) {
      return absl::InvalidArgumentError(
          absl::StrCat("Kafka ", role, " configuration: ", name,
                       " is mock-only; clients take a bootstrap address "
                       "(start a local cluster with `phaseloop kafka serve`)"));
    }
    absl::Status set = SetProperty(conf.get(), role, name, value);
    if (!set.ok()) return set;
  }
  return conf;
}

absl::Status SetCallback(RdKafka::Conf* conf, const std::string& name,
                         RdKafka::EventCb* event_cb) {
  std::string error;
  if (conf->set(name, event_cb, error) != RdKafka::Conf::CONF_OK) {
    return absl::InternalError(
        absl::StrCat("Kafka: setting ", name, ": ", error));
  }
  return absl::OkStatus();
}

void EventLogger::event_cb(RdKafka::Event& event) {
  switch (event.type()) {
    case RdKafka::Event::EVENT_ERROR:
      if (event.fatal()) {
        RecordFatal("client").IgnoreError();
        std::cerr << "kafka " << role_ << ": FATAL: " << fatal().message()
                  << "\n";
      } else {
        ++errors_;
        std::cerr << "kafka " << role_ << ": " << RdKafka::err2str(event.err())
                  << ": " << event.str() << "\n";
      }
      break;
    case RdKafka::Event::EVENT_LOG:
      // FAIL and FATAL lines repeat what the error events above report.
      if (event.fac() == "FAIL" || event.fac() == "FATAL") break;
      std::cerr << "kafka " << role_ << " [" << event.severity() << "] "
                << event.fac() << ": " << event.str() << "\n";
      break;
    default:
      break;
  }
}

absl::Status EventLogger::fatal() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fatal_;
}

absl::Status EventLogger::RecordFatal(const std::string& what) {
  std::string detail;
  RdKafka::ErrorCode code = RdKafka::ERR__FATAL;
  if (RdKafka::Handle* handle = handle_.load()) {
    RdKafka::ErrorCode underlying = handle->fatal_error(detail);
    if (underlying != RdKafka::ERR_NO_ERROR) code = underlying;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (fatal_.ok()) {
    fatal_ = KafkaStatus(code, absl::StrCat(role_, " ", what, ": fatal error"),
                         detail, /*fatal=*/true);
  }
  return fatal_;
}

}  // namespace phaseloop::kafka::internal
