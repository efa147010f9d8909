#include "common/kafka/lost_records_log.h"

#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files/atomic_file.h"

namespace phaseloop::kafka {
namespace {

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppend(&out, "\\u00", absl::Hex(c, absl::kZeroPad2));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// One flat JSON object of strings and integers, as LostRecordsLine writes
// it: key -> raw value (strings unescaped). nullopt-like false on anything
// else.
bool ParseFlatObject(absl::string_view line,
                     std::map<std::string, std::string>* fields) {
  size_t i = 0;
  auto skip = [&] {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  };
  auto string = [&](std::string* out) {
    if (i >= line.size() || line[i] != '"') return false;
    for (++i; i < line.size(); ++i) {
      char c = line[i];
      if (c == '"') {
        ++i;
        return true;
      }
      if (c == '\\') {
        if (++i >= line.size()) return false;
        c = line[i];
        if (c == 'n') {
          c = '\n';
        } else if (c == 'u') {
          int code = 0;
          if (i + 4 >= line.size() ||
              !absl::SimpleHexAtoi(line.substr(i + 1, 4), &code)) {
            return false;
          }
          c = static_cast<char>(code);
          i += 4;
        }
      }
      out->push_back(c);
    }
    return false;
  };
  skip();
  if (i >= line.size() || line[i++] != '{') return false;
  while (true) {
    skip();
    std::string key, value;
    if (!string(&key)) return false;
    skip();
    if (i >= line.size() || line[i++] != ':') return false;
    skip();
    if (i < line.size() && line[i] == '"') {
      if (!string(&value)) return false;
    } else {
      while (i < line.size() && (line[i] == '-' || isdigit(line[i]))) {
        value.push_back(line[i++]);
      }
      if (value.empty()) return false;
    }
    (*fields)[key] = value;
    skip();
    if (i >= line.size()) return false;
    if (line[i] == '}') return true;
    if (line[i++] != ',') return false;
  }
}

}  // namespace

LostRecordsEntry MakeLostRecordsEntry(const RecordsLost& lost,
                                      absl::string_view group,
                                      absl::string_view consumer) {
  LostRecordsEntry entry;
  entry.lost = lost;
  entry.group = std::string(group);
  entry.consumer = std::string(consumer);
  entry.time_ms = absl::ToUnixMillis(absl::Now());
  return entry;
}

std::string LostRecordsLine(const LostRecordsEntry& entry) {
  const std::string time = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ",
                                            absl::FromUnixMillis(entry.time_ms),
                                            absl::UTCTimeZone());
  return absl::StrCat(
      "{\"time\":", JsonString(time), ",\"time_ms\":", entry.time_ms,
      ",\"topic\":", JsonString(entry.lost.topic),
      ",\"partition\":", entry.lost.partition,
      ",\"first_offset\":", entry.lost.first_offset,
      ",\"last_offset\":", entry.lost.last_offset,
      ",\"count\":", entry.lost.count(), ",\"group\":", JsonString(entry.group),
      ",\"consumer\":", JsonString(entry.consumer), "}\n");
}

absl::Status AppendLostRecords(const std::string& path,
                               const LostRecordsEntry& entry) {
  absl::Status appended = files::AppendDurably(path, LostRecordsLine(entry));
  if (!appended.ok()) {
    return absl::Status(
        appended.code(),
        absl::StrCat("recording lost records of ", entry.lost.topic, "/",
                     entry.lost.partition, ": ", appended.message()));
  }
  return appended;
}

absl::StatusOr<std::vector<LostRecordsEntry>> ReadLostRecordsLog(
    const std::string& path) {
  std::string content;
  absl::Status read = files::ReadWholeFile(path, &content);
  if (!read.ok()) return read;
  std::vector<LostRecordsEntry> entries;
  for (absl::string_view line :
       absl::StrSplit(content, '\n', absl::SkipWhitespace())) {
    std::map<std::string, std::string> f;
    LostRecordsEntry entry;
    if (!ParseFlatObject(line, &f) ||
        !absl::SimpleAtoi(f["time_ms"], &entry.time_ms) ||
        !absl::SimpleAtoi(f["partition"], &entry.lost.partition) ||
        !absl::SimpleAtoi(f["first_offset"], &entry.lost.first_offset) ||
        !absl::SimpleAtoi(f["last_offset"], &entry.lost.last_offset)) {
      continue;  // torn by a crash mid-append
    }
    entry.lost.topic = f["topic"];
    entry.group = f["group"];
    entry.consumer = f["consumer"];
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace phaseloop::kafka
