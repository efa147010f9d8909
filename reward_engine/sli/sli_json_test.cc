#include "reward_engine/sli/sli_json.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "google/protobuf/util/json_util.h"
#include "reward_engine/sli/sli_window.h"

namespace phaseloop::sli {
namespace {

constexpr char kIds[] =
    R"("service": "checkout", "group": "canary", "instance": "pod-1", )"
    R"("deployment_id": "dep-7", "policy_version": "pv-3", )"
    R"("window_start_ms": 1700000000000, "window_length_ms": 10000)";

std::string Raw(const std::string& rest) {
  return std::string("{") + kIds + (rest.empty() ? "" : ", ") + rest + "}";
}

// The message of parsing `line`, which must fail.
std::string ErrorOf(const std::string& line) {
  absl::StatusOr<v1::SliWindow> w = ParseSliWindowJson(line);
  EXPECT_FALSE(w.ok()) << line;
  return w.ok() ? "" : std::string(w.status().message());
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Found by sli_json_fuzzer: a number beyond a double threw out of the
// parser (nlohmann's out_of_range) and ended `phaseloop sli send`.
TEST(SliJsonTest, ANumberTooLargeIsAnErrorNotACrash) {
  const auto window =
      ParseSliWindowJson(R"({"service": "s", "latencies_ms": [1e348]})");
  ASSERT_FALSE(window.ok());
  EXPECT_EQ(window.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(window.status().message().find("not JSON"), std::string::npos)
      << window.status();
}

TEST(SliJsonTest, RawLatenciesBecomeAValidWindow) {
  absl::StatusOr<v1::SliWindow> w = ParseSliWindowJson(
      Raw(R"("latencies_ms": [12.5, 13, 250, 0], "errors": 1)"));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->service(), "checkout");
  EXPECT_EQ(w->window_start_ms(), 1700000000000);
  EXPECT_EQ(w->count(), 4);
  EXPECT_EQ(w->error_count(), 1);
  EXPECT_DOUBLE_EQ(w->sum_seconds(), 0.2755);
  EXPECT_EQ(w->min_seconds(), 0);
  EXPECT_EQ(w->max_seconds(), 0.25);
  EXPECT_EQ(w->sketch().zero_count(), 1);
  absl::StatusOr<LatencySketch> sketch = WindowSketch(*w);
  ASSERT_TRUE(sketch.ok());
  EXPECT_NEAR(*sketch->Quantile(0.5), 0.0125,
              0.0125 * kDefaultRelativeAccuracy);
}

TEST(SliJsonTest, PrintedWindowsParseBackIdentically) {
  absl::StatusOr<v1::SliWindow> raw = ParseSliWindowJson(
      Raw(R"("latencies_ms": [1, 2, 3, 400, 5000.5], "errors": 0)"));
  ASSERT_TRUE(raw.ok()) << raw.status();
  const std::string printed = SliWindowToJson(*raw);
  EXPECT_EQ(printed.find('\n'), std::string::npos);
  EXPECT_NE(printed.find("\"window_start_ms\":\"1700000000000\""),
            std::string::npos)
      << printed;  // int64 as strings, field names as in the proto
  absl::StatusOr<v1::SliWindow> back = ParseSliWindowJson(printed);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << printed;
  EXPECT_EQ(back->SerializeAsString(), raw->SerializeAsString());
}

// What a protobuf JSON printer writes by default (proto3's canonical
// lowerCamelCase names) was refused as "missing" fields.
TEST(SliJsonTest, CanonicalCamelCaseNamesAreRead) {
  absl::StatusOr<v1::SliWindow> raw = ParseSliWindowJson(
      Raw(R"("latencies_ms": [1, 2, 3, 400, 5000.5], "errors": 0)"));
  ASSERT_TRUE(raw.ok()) << raw.status();
  std::string camel;
  google::protobuf::util::JsonPrintOptions options;  // camelCase names
  ASSERT_TRUE(
      google::protobuf::util::MessageToJsonString(*raw, &camel, options).ok());
  ASSERT_NE(camel.find("windowStartMs"), std::string::npos) << camel;
  absl::StatusOr<v1::SliWindow> back = ParseSliWindowJson(camel);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << camel;
  EXPECT_EQ(back->SerializeAsString(), raw->SerializeAsString());

  EXPECT_NE(ErrorOf(Raw(R"("latencies_ms": [1], "windowLengthMs": 5)"))
                .find("window_length_ms: given twice (as "),
            std::string::npos)
      << ErrorOf(Raw(R"("latencies_ms": [1], "windowLengthMs": 5)"));
}

TEST(SliJsonTest, TheFailuresLatenciesBecomeTheErrorSketch) {
  absl::StatusOr<v1::SliWindow> w =
      ParseSliWindowJson(Raw(R"("latencies_ms": [12.5, 13, 250, 300], )"
                             R"("error_latencies_ms": [300, 12.5])"));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->count(), 4);
  EXPECT_EQ(w->error_count(), 2);
  absl::StatusOr<WindowLatencies> sketches = WindowSketches(*w);
  ASSERT_TRUE(sketches.ok()) << sketches.status();
  EXPECT_EQ(sketches->failures.count(), 2);
  EXPECT_EQ(sketches->failures.CountAtOrBelow(0.1), 1);
  // Printed (as --dry-run does) and read back in the sketch form.
  const std::string printed = SliWindowToJson(*w);
  EXPECT_NE(printed.find("\"error_sketch\""), std::string::npos) << printed;
  absl::StatusOr<v1::SliWindow> back = ParseSliWindowJson(printed);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << printed;
  EXPECT_EQ(back->SerializeAsString(), w->SerializeAsString());
  // "errors" beside them must agree.
  EXPECT_TRUE(
      ParseSliWindowJson(Raw(R"("latencies_ms": [1, 2], )"
                             R"("error_latencies_ms": [2], "errors": 1)"))
          .ok());
  EXPECT_TRUE(
      StartsWith(ErrorOf(Raw(R"("latencies_ms": [1, 2], )"
                             R"("error_latencies_ms": [2], "errors": 2)")),
                 "errors: 2 but error_latencies_ms lists 1"))
      << ErrorOf(Raw(R"("latencies_ms": [1, 2], "error_latencies_ms": [2], )"
                     R"("errors": 2)"));
  // A failure that is not one of the requests (nor twice one that is once),
  // named by its own field.
  EXPECT_TRUE(StartsWith(ErrorOf(Raw(R"("latencies_ms": [1, 2], )"
                                     R"("error_latencies_ms": [900])")),
                         "error_latencies_ms[0]: 900 ms is not"))
      << ErrorOf(Raw(R"("latencies_ms": [1, 2], "error_latencies_ms": [900])"));
  EXPECT_TRUE(StartsWith(ErrorOf(Raw(R"("latencies_ms": [1, 2], )"
                                     R"("error_latencies_ms": [2, 1.5])")),
                         "error_latencies_ms[1]: 1.5 ms is not"));
  EXPECT_TRUE(StartsWith(ErrorOf(Raw(R"("latencies_ms": [1, 2], )"
                                     R"("error_latencies_ms": [2, 2])")),
                         "error_latencies_ms[1]: 2 ms is not"));
  // Each goes with its own form.
  EXPECT_TRUE(StartsWith(
      ErrorOf(Raw(R"("latencies_ms": [1], "error_sketch": {}, "errors": 0)")),
      "error_sketch: goes with a sketch"));
  std::string sketch_form = printed;
  sketch_form.insert(sketch_form.size() - 1, R"(,"error_latencies_ms":[300])");
  EXPECT_TRUE(StartsWith(ErrorOf(sketch_form),
                         "error_latencies_ms: goes with latencies_ms"))
      << ErrorOf(sketch_form);
}

TEST(SliJsonTest, PrebuiltSketchWithNumbers) {
  const std::string line = Raw(
      R"("count": 3, "sum_seconds": 0.03, "min_seconds": 0.00999, )"
      R"("max_seconds": 0.01001, "error_count": 0, "sketch": )"
      R"({"relative_accuracy": 0.005, "index_offset": -460, "counts": [3]})");
  absl::StatusOr<v1::SliWindow> w = ParseSliWindowJson(line);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->sketch().counts_size(), 1);
}

TEST(SliJsonTest, ErrorsNameTheField) {
  EXPECT_TRUE(StartsWith(ErrorOf("{\"service\": "), "not JSON: "))
      << ErrorOf("{");
  EXPECT_TRUE(StartsWith(ErrorOf("[1, 2]"), "not a JSON object"));
  EXPECT_TRUE(
      StartsWith(ErrorOf(R"({"group": "canary"})"), "service: missing"));
  EXPECT_TRUE(StartsWith(ErrorOf(Raw(R"("latencies_ms": [1, "fast", 3])")),
                         "latencies_ms[1]: "));
  EXPECT_TRUE(StartsWith(ErrorOf(Raw(R"("latencies_ms": [1, -3])")),
                         "latencies_ms[1]: "));
  EXPECT_TRUE(
      StartsWith(ErrorOf(Raw(R"("latencies_ms": 5)")), "latencies_ms: "));
  EXPECT_TRUE(StartsWith(ErrorOf(Raw(R"("latencies_ms": [1], "errors": 2)")),
                         "errors: "));
  EXPECT_TRUE(StartsWith(ErrorOf(Raw(R"("latencies_ms": [1], "eror": 0)")),
                         "eror: unknown field"));
  EXPECT_TRUE(StartsWith(ErrorOf(Raw("")), "latencies_ms: missing"));
  std::string unaligned = Raw(R"("latencies_ms": [1])");
  unaligned.replace(unaligned.find("1700000000000"), 13, "1700000000123");
  EXPECT_TRUE(StartsWith(ErrorOf(unaligned), "window_start_ms: "));
  std::string float_start = Raw(R"("latencies_ms": [1])");
  float_start.replace(float_start.find("1700000000000"), 13, "1.5");
  EXPECT_TRUE(StartsWith(ErrorOf(float_start),
                         "window_start_ms: expected an "
                         "integer"));
  EXPECT_TRUE(StartsWith(
      ErrorOf(Raw(R"("count": 1, "sketch": {"relative_accuracy": 0.005, )"
                  R"("index_offset": -460, "counts": [-1]})")),
      "sketch.counts[0]: negative count"));
  EXPECT_TRUE(StartsWith(
      ErrorOf(Raw(R"("count": 1, "sketch": {"relative_accuracy": 0.005, )"
                  R"("index_offset": 99999999999, "counts": [1]})")),
      "sketch.index_offset: "));
  EXPECT_TRUE(StartsWith(
      ErrorOf(Raw(R"("count": 1, "sketch": {"relative_accuracy": 0.01, )"
                  R"("counts": [1]})")),
      "sketch.relative_accuracy: "));
  EXPECT_TRUE(StartsWith(
      ErrorOf(Raw(R"("count": 1, "sketch": {"counts": [1], "gamma": 2})")),
      "sketch.gamma: unknown field"));
  EXPECT_TRUE(StartsWith(ErrorOf(Raw(R"("latencies_ms": [1], "sketch": {})")),
                         "sketch: "));
  // The review: a key given twice kept the last value (a 5 s latency was
  // lost), and null latencies made an empty window, both without a word.
  EXPECT_EQ(ErrorOf(Raw(R"("latencies_ms": [5000], "latencies_ms": [1])")),
            "latencies_ms: given twice; give each field once");
  EXPECT_EQ(ErrorOf(Raw(R"("service": "other", "latencies_ms": [1])")),
            "service: given twice; give each field once");
  EXPECT_TRUE(StartsWith(ErrorOf(Raw(R"("latencies_ms": null)")),
                         "latencies_ms: null"));
  EXPECT_TRUE(ParseSliWindowJson(Raw(R"("latencies_ms": [])")).ok());
}

TEST(SliJsonTest, LinesAreNumberedAndAllReported) {
  std::istringstream in(Raw(R"("latencies_ms": [1])") + "\n\n" +
                        Raw(R"("latencies_ms": [1, null])") + "\n" +
                        "garbage\n" + Raw(R"("latencies_ms": [2])") + "\n");
  const SliJsonLines lines = ParseSliJsonLines(in);
  EXPECT_EQ(lines.windows.size(), 2u);
  ASSERT_EQ(lines.errors.size(), 2u);
  EXPECT_TRUE(StartsWith(lines.errors[0], "line 3: latencies_ms[1]: "))
      << lines.errors[0];
  EXPECT_TRUE(StartsWith(lines.errors[1], "line 4: not JSON"))
      << lines.errors[1];
  EXPECT_EQ(lines.error_lines, 2);
}

// A window missing several fields names them all in one message (a
// newcomer needed six rounds of "X: missing" to learn the schema).
TEST(SliJsonTest, EveryMissingFieldIsNamedAtOnce) {
  const std::string error = ErrorOf(R"({"group": "canary"})");
  EXPECT_TRUE(StartsWith(error, "service: missing")) << error;
  for (const char* field :
       {"instance", "deployment_id", "policy_version", "window_start_ms",
        "window_length_ms", "latencies_ms", "configs/sli/example.jsonl"}) {
    EXPECT_NE(error.find(field), std::string::npos) << field << ": " << error;
  }
}

// The example the README points to is valid, line for line.
TEST(SliJsonTest, TheShippedExampleIsValid) {
  std::ifstream in("configs/sli/example.jsonl");
  ASSERT_TRUE(in) << "configs/sli/example.jsonl";
  SliJsonLines lines = ParseSliJsonLines(in);
  EXPECT_EQ(lines.error_lines, 0);
  for (const std::string& e : lines.errors) ADD_FAILURE() << e;
  EXPECT_EQ(lines.windows.size(), 8u);
}

}  // namespace
}  // namespace phaseloop::sli
