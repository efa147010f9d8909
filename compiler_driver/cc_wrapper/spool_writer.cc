#include "compiler_driver/cc_wrapper/spool_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "common/protobuf/utf8_text.h"

namespace phaseloop::cc_wrapper {
namespace {

void PutVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Wire types: 0 varint, 2 length-delimited.
void PutTag(int field, int wire_type, std::string* out) {
  PutVarint((static_cast<uint64_t>(field) << 3) | wire_type, out);
}

// A proto3 string must be UTF-8, or no reader can parse the record: paths,
// options and messages need not be (a source named in Latin-1), so other
// bytes are written as \xNN.
void PutString(int field, const std::string& value, std::string* out) {
  if (value.empty()) return;  // proto3 default, not serialized
  const std::string valid =
      protobuf::IsValidUtf8(value) ? value : protobuf::ValidUtf8(value);
  PutTag(field, 2, out);
  PutVarint(valid.size(), out);
  out->append(valid);
}

void PutInt(int field, int64_t value, std::string* out) {
  if (value == 0) return;
  PutTag(field, 0, out);
  PutVarint(static_cast<uint64_t>(value), out);
}

bool MakeDirs(const std::string& dir) {
  std::string path;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      path = dir.substr(0, i);
      if (mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) return false;
    }
  }
  return true;
}

std::string Hex(const unsigned char* bytes, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 15]);
  }
  return out;
}

bool WriteNewSpoolFile(const std::string& dir, const std::string& batch,
                       std::string* error) {
  std::string name = dir + "/" + std::to_string(UnixTimeMs()) + "-" +
                     std::to_string(getpid()) + "-" +
                     NewDecisionId().substr(0, 8);
  std::string temp = name + ".tmp";
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot create '" + temp + "': " + std::strerror(errno);
    return false;
  }
  size_t written = 0;
  while (written < batch.size()) {
    ssize_t n = write(fd, batch.data() + written, batch.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  bool ok = written == batch.size() && close(fd) == 0;
  if (!ok || rename(temp.c_str(), (name + kSpoolSuffix).c_str()) != 0) {
    *error =
        "cannot write '" + name + kSpoolSuffix + "': " + std::strerror(errno);
    unlink(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace

int64_t UnixTimeMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string NewDecisionId() {
  unsigned char bytes[16] = {};
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0 && read(fd, bytes, sizeof bytes) == sizeof bytes;
  if (fd >= 0) close(fd);
  if (!ok) {
    uint64_t a = static_cast<uint64_t>(
        std::chrono::steady_clock::now().time_since_epoch().count());
    uint64_t b = static_cast<uint64_t>(getpid()) ^ (a << 17);
    std::memcpy(bytes, &a, 8);
    std::memcpy(bytes + 8, &b, 8);
  }
  return Hex(bytes, sizeof bytes);
}

std::string EncodeLauncherBatch(const LauncherRecord& record) {
  std::string decision;
  PutString(1, NewDecisionId(), &decision);
  PutInt(2, static_cast<int64_t>(record.outcome), &decision);
  PutString(3, record.reason, &decision);
  PutString(4, record.detail, &decision);
  PutString(5, record.source, &decision);
  PutString(12, record.build_id, &decision);
  PutInt(19, UnixTimeMs(), &decision);
  std::string batch;
  PutTag(1, 2, &batch);
  PutVarint(decision.size(), &batch);
  batch.append(decision);
  return batch;
}

bool WriteSpoolFile(const std::string& dir, const std::string& batch,
                    std::string* error, const SpoolWriteOptions& options) {
  if (dir.empty()) {
    *error =
        "no spool directory: HOME is unset and the per-user one under /tmp "
        "is not this user's own private directory (set PHASELOOP_SPOOL)";
    return false;
  }
  if (!MakeDirs(dir)) {
    *error = "cannot create the spool directory '" + dir +
             "': " + std::strerror(errno);
    return false;
  }
  return WriteWithinCap(
      dir, static_cast<int64_t>(batch.size()), options.records,
      options.max_size, [&] { return WriteNewSpoolFile(dir, batch, error); },
      error);
}

}  // namespace phaseloop::cc_wrapper
