// Fuzzes episode files (ReadEpisodeFile and FileEpisodeSink::Open, issue 19)
// the way a crash, a full disk or a damaged copy leaves them.
//
// Input: byte 0 even — the rest is the file as it is; odd — the rest is
// split at \xff into payloads, each written as a well-framed record
// (length, payload, masked CRC-32C), the last one possibly cut short by
// the byte after the mode byte, so mutations reach the Episode parsing.
//
// Invariants: no crash, hang or sanitizer report; reading either gives the
// whole records and the size of an incomplete tail, or DataLoss/
// InvalidArgument naming the file; opening the file for appending keeps
// every whole record a reader saw (it may only cut an incomplete tail) and
// writes nothing beside the file.

#include <sys/stat.h>

#include <string>
#include <vector>

#include "common/fuzzing/fuzz_target.h"
#include "staging_harness/search/episode_file.h"

namespace phaseloop::search {
namespace {

void AppendVarint32(std::string& out, uint32_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// TFRecord's mask, as episode_file.h describes the record.
uint32_t MaskedCrc(const std::string& payload) {
  const uint32_t crc = Crc32c(payload.data(), payload.size());
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string Framed(std::string_view rest) {
  if (rest.empty()) return {};
  const size_t cut = static_cast<uint8_t>(rest[0]);
  std::string file;
  for (const std::string& payload :
       fuzzing::SplitAll(rest.substr(1), '\xff')) {
    AppendVarint32(file, static_cast<uint32_t>(payload.size()));
    file += payload;
    const uint32_t crc = MaskedCrc(payload);
    for (int i = 0; i < 4; ++i) {
      file.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
    }
  }
  if (cut > 0 && cut < file.size()) file.resize(file.size() - cut);
  return file;
}

int64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

}  // namespace
}  // namespace phaseloop::search

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaseloop;
  if (size == 0) return 0;
  const std::string_view rest = fuzzing::AsText(data + 1, size - 1);
  const std::string file =
      (data[0] & 1) == 0 ? std::string(rest) : search::Framed(rest);
  fuzzing::ScratchDir scratch;
  scratch.Write("episodes.bin", file);
  const std::string path = scratch.path() + "/episodes.bin";
  const auto read = search::ReadEpisodeFile(path);
  if (!read.ok()) {
    const auto code = read.status().code();
    FUZZ_CHECK(code == absl::StatusCode::kDataLoss ||
               code == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(std::string(read.status().message()).find(path) !=
               std::string::npos);
  } else {
    FUZZ_CHECK(read->truncated_tail_bytes >= 0 &&
               read->truncated_tail_bytes <=
                   static_cast<int64_t>(file.size()));
  }
  {
    auto sink = search::FileEpisodeSink::Open(path);
    if (read.ok()) {
      FUZZ_CHECK(sink.ok());
      // Only the incomplete tail may go.
      FUZZ_CHECK(search::FileSize(path) ==
                 static_cast<int64_t>(file.size()) -
                     read->truncated_tail_bytes);
      const auto again = search::ReadEpisodeFile(path);
      FUZZ_CHECK(again.ok());
      FUZZ_CHECK(again->episodes.size() == read->episodes.size());
      FUZZ_CHECK(again->truncated_tail_bytes == 0);
    } else {
      FUZZ_CHECK(!sink.ok());
      FUZZ_CHECK(search::FileSize(path) == static_cast<int64_t>(file.size()));
    }
  }
  // Nothing beside the file (no temporary or lock files left behind).
  FUZZ_CHECK(scratch.Entries() == std::vector<std::string>{"episodes.bin"});
  return 0;
}
