// Fuzzes the judge's HTTP/JSON requests (ParseJudgeRequest, the body of
// /v1/judge and /v1/gate; issue 19): the one parser here that listens on a
// socket.
//
// Invariants: no crash, hang or sanitizer report (no JSON exception
// escapes); a refusal is InvalidArgument saying what is wrong; an accepted
// request can always be judged, and the judgement prints as JSON.

#include <string>

#include "canary/judge/judge.h"
#include "canary/judge/judge_json.h"
#include "common/fuzzing/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaseloop;
  const std::string body(fuzzing::AsText(data, size));
  const auto request = canary::ParseJudgeRequest(body);
  if (!request.ok()) {
    FUZZ_CHECK(request.status().code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(!request.status().message().empty());
    return 0;
  }
  canary::JudgeConfig config;
  config.min_samples = 2;
  const canary::Judgement judgement = canary::Judge(*request, config);
  FUZZ_CHECK(!canary::JudgementToJson(judgement).empty());
  return 0;
}
