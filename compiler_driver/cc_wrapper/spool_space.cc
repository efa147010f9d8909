#include "compiler_driver/cc_wrapper/spool_space.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace phaseloop::cc_wrapper {
namespace {

constexpr char kCountersMagic[] = "phaseloop-spool-counters-v1";

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// The counters file, open and flock'ed for as long as this lives.
class CountersLock {
 public:
  CountersLock(const std::string& dir, bool exclusive) {
    const std::string path = dir + "/" + kCountersFile;
    fd_ = exclusive ? open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)
                    : open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
    while (flock(fd_, exclusive ? LOCK_EX : LOCK_SH) != 0) {
      if (errno != EINTR) {
        close(fd_);
        fd_ = -1;
        return;
      }
    }
  }
  ~CountersLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }
  bool ok() const { return fd_ >= 0; }

  bool Read(SpoolCounters* c) const {
    char buffer[256] = {};
    ssize_t n = pread(fd_, buffer, sizeof buffer - 1, 0);
    if (n <= 0) return false;
    char magic[64] = {};
    long long v[5] = {};
    // The fifth (failed_records) is newer: a line without it counts 0.
    const int read = std::sscanf(buffer, "%63s %lld %lld %lld %lld %lld", magic,
                                 &v[0], &v[1], &v[2], &v[3], &v[4]);
    if (read < 5 || std::strcmp(magic, kCountersMagic) != 0) return false;
    *c = {v[0], v[1], v[2], v[3], v[4]};
    return true;
  }

  void Write(const SpoolCounters& c) const {
    char buffer[256];
    int n =
        std::snprintf(buffer, sizeof buffer, "%s %lld %lld %lld %lld %lld\n",
                      kCountersMagic, static_cast<long long>(c.bytes),
                      static_cast<long long>(c.shipped_bytes),
                      static_cast<long long>(c.dropped_records),
                      static_cast<long long>(c.evicted_files),
                      static_cast<long long>(c.failed_records));
    // A failed write leaves a line that does not parse: the next writer
    // measures the spool again.
    if (pwrite(fd_, buffer, n, 0) != n) return;
    if (ftruncate(fd_, n) != 0) return;
  }

 private:
  int fd_ = -1;
};

struct SpoolEntry {
  std::string name;
  int64_t bytes;
  bool shipped;
};

// Every record file of the spool, sorted by name (= by time).
std::vector<SpoolEntry> Scan(const std::string& dir) {
  std::vector<SpoolEntry> entries;
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) return entries;
  while (dirent* entry = readdir(handle)) {
    std::string name = entry->d_name;
    const bool shipped = EndsWith(name, kShippedSuffix);
    if (!shipped && !EndsWith(name, kSpoolSuffix)) continue;
    struct stat st;
    if (stat((dir + "/" + name).c_str(), &st) != 0) continue;
    entries.push_back({std::move(name), SpoolBytes(st.st_size), shipped});
  }
  closedir(handle);
  std::sort(
      entries.begin(), entries.end(),
      [](const SpoolEntry& a, const SpoolEntry& b) { return a.name < b.name; });
  return entries;
}

// Sets bytes and shipped_bytes from the files themselves.
void Measure(const std::vector<SpoolEntry>& entries, SpoolCounters* c) {
  c->bytes = c->shipped_bytes = 0;
  for (const SpoolEntry& e : entries) {
    c->bytes += e.bytes;
    if (e.shipped) c->shipped_bytes += e.bytes;
  }
}

// Deletes the oldest shipped files until `need` more bytes fit within 90 %
// of `max_size` or no shipped file is left.
void Evict(const std::string& dir, int64_t need, int64_t max_size,
           SpoolCounters* c) {
  std::vector<SpoolEntry> entries = Scan(dir);
  Measure(entries, c);
  const int64_t target = max_size - max_size / 10;
  for (const SpoolEntry& e : entries) {
    if (c->bytes + need <= target) break;
    if (!e.shipped) continue;
    if (unlink((dir + "/" + e.name).c_str()) != 0 && errno != ENOENT) continue;
    c->bytes -= e.bytes;
    c->shipped_bytes -= e.bytes;
    ++c->evicted_files;
  }
}

}  // namespace

int64_t SpoolBytes(int64_t file_size) {
  return (std::max<int64_t>(file_size, 1) + 4095) / 4096 * 4096;
}

bool ParseSize(const std::string& text, int64_t* bytes) {
  size_t i = 0;
  int64_t value = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (value > (int64_t{1} << 50)) return false;
    value = value * 10 + (text[i++] - '0');
  }
  if (i == 0) return false;
  std::string unit = text.substr(i);
  if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  int64_t scale = 1;
  if (unit == "K" || unit == "k") {
    scale = 1000;
  } else if (unit == "M") {
    scale = 1000 * 1000;
  } else if (unit == "G") {
    scale = 1000 * 1000 * 1000;
  } else if (unit == "Ki") {
    scale = int64_t{1} << 10;
  } else if (unit == "Mi") {
    scale = int64_t{1} << 20;
  } else if (unit == "Gi") {
    scale = int64_t{1} << 30;
  } else if (!unit.empty()) {
    return false;
  }
  *bytes = value * scale;
  return true;
}

bool WriteWithinCap(const std::string& dir, int64_t file_size, int records,
                    int64_t max_size, const std::function<bool()>& write,
                    std::string* error) {
  CountersLock lock(dir, /*exclusive=*/true);
  if (!lock.ok()) return write();
  SpoolCounters c;
  if (!lock.Read(&c)) {
    c = SpoolCounters();
    Measure(Scan(dir), &c);
  }
  const int64_t need = SpoolBytes(file_size);
  if (max_size > 0 && c.bytes + need > max_size && c.shipped_bytes > 0) {
    Evict(dir, need, max_size, &c);
  }
  if (max_size > 0 && c.bytes + need > max_size) {
    c.dropped_records += records;
    lock.Write(c);
    *error = "the spool '" + dir + "' is full of unshipped records (" +
             std::to_string(c.bytes) + " of " + std::to_string(max_size) +
             " bytes): this record was dropped; run phaseloop decisions ship "
             "or raise max_size";
    return false;
  }
  const bool written = write();
  if (written) {
    c.bytes += need;
  } else {
    c.failed_records += records;
  }
  lock.Write(c);
  return written;
}

void MarkShipped(const std::string& dir,
                 const std::vector<std::string>& paths) {
  CountersLock lock(dir, /*exclusive=*/true);
  for (const std::string& path : paths) {
    if (!EndsWith(path, kSpoolSuffix)) continue;
    const std::string shipped =
        path.substr(0, path.size() - std::strlen(kSpoolSuffix)) +
        kShippedSuffix;
    rename(path.c_str(), shipped.c_str());
  }
  if (!lock.ok()) return;
  SpoolCounters c;
  if (!lock.Read(&c)) c = SpoolCounters();
  Measure(Scan(dir), &c);
  lock.Write(c);
}

bool ReadSpoolCounters(const std::string& dir, SpoolCounters* counters) {
  CountersLock lock(dir, /*exclusive=*/false);
  return lock.ok() && lock.Read(counters);
}

}  // namespace phaseloop::cc_wrapper
