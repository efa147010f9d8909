#include "canary/service/handler_check.h"

#include <chrono>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "canary/service/handler_library.h"
#include "common/process/child_process.h"
#include "common/timing/elapsed.h"

namespace phaseloop::canary {
namespace {

// What one request gave: the handler's code and its body.
struct Output {
  int code = 0;
  std::string body;
};

// Prefix of a child's error when the library did not load: a caller
// error, not a finding.
constexpr char kLoadError[] = "load: ";

// Encodes outputs as (code byte, 8-byte length, body) records.
std::string Encode(const std::vector<Output>& outputs) {
  std::string bytes;
  for (const Output& output : outputs) {
    bytes += static_cast<char>(output.code);
    const uint64_t size = output.body.size();
    bytes.append(reinterpret_cast<const char*>(&size), sizeof size);
    bytes += output.body;
  }
  return bytes;
}

bool Decode(const std::string& bytes, size_t count,
            std::vector<Output>* outputs) {
  size_t at = 0;
  for (size_t i = 0; i < count; ++i) {
    if (bytes.size() - at < 9) return false;
    Output output;
    output.code = static_cast<unsigned char>(bytes[at]);
    uint64_t size = 0;
    std::memcpy(&size, bytes.data() + at + 1, sizeof size);
    at += 9;
    if (bytes.size() - at < size) return false;
    output.body = bytes.substr(at, size);
    at += size;
    outputs->push_back(std::move(output));
  }
  return at == bytes.size();
}

const char* CodeName(int code) {
  switch (code) {
    case 0:
      return "ok";
    case 1:
      return "unknown kind";
    case 2:
      return "bad payload";
    default:
      return "failed";
  }
}

// Runs every request through `handler` in a forked child.
absl::StatusOr<std::vector<Output>> RunHandler(const HandlerUnderCheck& handler,
                                               const CheckOptions& options,
                                               std::string* failure) {
  const process::ChildOutcome outcome = process::RunInChild(
      [&]() -> absl::StatusOr<std::string> {
        auto library = HandlerLibrary::Load(handler.so_path);
        if (!library.ok()) {
          return absl::FailedPreconditionError(
              absl::StrCat(kLoadError, library.status().message()));
        }
        std::vector<Output> outputs;
        outputs.reserve(options.requests.size());
        for (const CheckRequest& request : options.requests) {
          HandlerResult result =
              (*library)->Handle(request.kind, request.payload);
          outputs.push_back(
              {static_cast<int>(result.code), std::move(result.body)});
        }
        return Encode(outputs);
      },
      options.timeout_ms);
  if (outcome.kind == process::ChildOutcome::kFailed &&
      outcome.message.rfind(kLoadError, 0) == 0) {
    return absl::FailedPreconditionError(
        outcome.message.substr(std::strlen(kLoadError)));
  }
  std::vector<Output> outputs;
  if (outcome.kind != process::ChildOutcome::kOk) {
    // The child's messages say "optimizer_..." (child_process's decision
    // log names); here the work is the handler's.
    std::string message = outcome.message;
    if (message.rfind("optimizer_", 0) == 0) message.erase(0, 10);
    *failure = absl::StrCat("handler ", handler.name, " (", handler.so_path,
                            ") did not finish the check requests: ", message);
    return outputs;
  }
  if (!Decode(outcome.report, options.requests.size(), &outputs)) {
    *failure = absl::StrCat("handler ", handler.name,
                            ": the checking child's report was cut short");
    outputs.clear();
  }
  return outputs;
}

}  // namespace

std::string CheckReport::Summary() const {
  if (ok()) {
    return absl::StrFormat("%d handlers agree on %d requests (%.1f s)",
                           handlers, requests, seconds);
  }
  std::vector<std::string> lines;
  for (const CheckFinding& finding : findings) lines.push_back(finding.message);
  return absl::StrCat(findings.size(), " findings over ", handlers,
                      " handlers and ", requests, " requests:\n  ",
                      absl::StrJoin(lines, "\n  "));
}

absl::StatusOr<CheckReport> CheckHandlersAgree(
    const std::vector<HandlerUnderCheck>& handlers,
    const CheckOptions& options) {
  if (handlers.size() < 2) {
    return absl::InvalidArgumentError(
        "the handler check compares at least two handlers (a reference "
        "first, e.g. the baseline, then the candidate)");
  }
  if (options.requests.empty()) {
    return absl::InvalidArgumentError("the handler check has no requests");
  }
  const auto start = std::chrono::steady_clock::now();
  CheckReport report;
  report.handlers = static_cast<int>(handlers.size());
  report.requests = static_cast<int>(options.requests.size());
  std::vector<std::vector<Output>> outputs;
  for (const HandlerUnderCheck& handler : handlers) {
    std::string failure;
    absl::StatusOr<std::vector<Output>> ran =
        RunHandler(handler, options, &failure);
    if (!ran.ok()) return ran.status();
    if (!failure.empty()) {
      CheckFinding finding;
      finding.handler = handler.name;
      finding.message = failure;
      report.findings.push_back(std::move(finding));
    }
    outputs.push_back(*std::move(ran));
  }
  const HandlerUnderCheck& reference = handlers[0];
  if (outputs[0].empty()) {
    // The reference itself did not finish: nothing to compare against.
    report.seconds = timing::SecondsSince(start);
    return report;
  }
  for (size_t h = 1; h < handlers.size(); ++h) {
    if (outputs[h].empty()) continue;  // already a finding
    for (size_t r = 0; r < options.requests.size(); ++r) {
      const Output& want = outputs[0][r];
      const Output& got = outputs[h][r];
      if (want.code == got.code && want.body == got.body) continue;
      const CheckRequest& request = options.requests[r];
      CheckFinding finding;
      finding.handler = handlers[h].name;
      finding.request = request.Describe();
      finding.kind = request.kind;
      finding.size = request.payload.size();
      if (want.code != got.code) {
        finding.message = absl::StrCat(
            handlers[h].name, " differs from ", reference.name, " on ",
            finding.request, ": result '", CodeName(got.code), "', expected '",
            CodeName(want.code), "'");
      } else {
        size_t at = 0;
        while (at < want.body.size() && at < got.body.size() &&
               want.body[at] == got.body[at]) {
          ++at;
        }
        finding.first_differing_byte = static_cast<int64_t>(at);
        finding.message = absl::StrCat(
            handlers[h].name, " differs from ", reference.name, " on ",
            finding.request, ": first differing output byte at offset ", at,
            " (", got.body.size(), " bytes, expected ", want.body.size(), ")");
      }
      report.findings.push_back(std::move(finding));
    }
  }
  report.seconds = timing::SecondsSince(start);
  return report;
}

}  // namespace phaseloop::canary
