#include "common/kafka/delivery_spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files/atomic_file.h"
#include "common/kafka/kafka_error.h"

namespace phaseloop::kafka {
namespace {

constexpr absl::string_view kHeader = "phaseloop-delivery-spool 1\n";
constexpr absl::string_view kSuffix = ".spool";
constexpr absl::string_view kRefusedSuffix = ".refused";

// A new file name in a spool: "<ms>-<pid>-<n><suffix>", in age order.
std::string NewFileName(absl::string_view suffix) {
  static std::atomic<int> counter{0};
  return absl::StrFormat("%013d-%d-%d%s", absl::ToUnixMillis(absl::Now()),
                         getpid(), counter.fetch_add(1), suffix);
}

// Header, then per record "TOPIC_LEN KEY_LEN VALUE_LEN\n" and the bytes.
std::string Encode(const std::vector<SpooledRecord>& records) {
  std::string out(kHeader);
  for (const SpooledRecord& r : records) {
    absl::StrAppend(&out, r.topic.size(), " ", r.key.size(), " ",
                    r.value.size(), "\n", r.topic, r.key, r.value);
  }
  return out;
}

bool Decode(absl::string_view in, std::vector<SpooledRecord>* records) {
  if (!absl::ConsumePrefix(&in, kHeader)) return false;
  while (!in.empty()) {
    const size_t newline = in.find('\n');
    if (newline == absl::string_view::npos) return false;
    std::vector<absl::string_view> sizes =
        absl::StrSplit(in.substr(0, newline), ' ');
    in.remove_prefix(newline + 1);
    size_t t = 0, k = 0, v = 0;
    if (sizes.size() != 3 || !absl::SimpleAtoi(sizes[0], &t) ||
        !absl::SimpleAtoi(sizes[1], &k) || !absl::SimpleAtoi(sizes[2], &v) ||
        t + k + v > in.size()) {
      return false;
    }
    SpooledRecord r;
    r.topic = std::string(in.substr(0, t));
    r.key = std::string(in.substr(t, k));
    r.value = std::string(in.substr(t + k, v));
    in.remove_prefix(t + k + v);
    records->push_back(std::move(r));
  }
  return true;
}

// The *.spool files of `dir`, in name (= age) order.
absl::StatusOr<std::vector<std::string>> SpoolFiles(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot list ", dir, ": ", std::strerror(errno)));
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (absl::EndsWith(name, kSuffix) &&
        !absl::StartsWith(name, files::kTempFilePrefix)) {
      names.push_back(name);
    }
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// An exclusive lock on DIR/.lock while alive, if it could be had at once.
class RetryLock {
 public:
  explicit RetryLock(const std::string& dir) {
    fd_ = open((dir + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    held_ = fd_ >= 0 && flock(fd_, LOCK_EX | LOCK_NB) == 0;
  }
  ~RetryLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }
  bool held() const { return held_; }

 private:
  int fd_ = -1;
  bool held_ = false;
};

std::vector<SpooledRecord> RecordsOf(
    const std::vector<DeliveryFailure>& failures) {
  std::vector<SpooledRecord> records;
  records.reserve(failures.size());
  for (const DeliveryFailure& f : failures) {
    records.push_back({f.topic, f.key, f.value});
  }
  return records;
}

}  // namespace

absl::StatusOr<DeliverySpool> DeliverySpool::Open(const std::string& dir) {
  if (dir.empty()) {
    return absl::InvalidArgumentError(
        "delivery spool: no directory (set PHASELOOP_STATE_DIR or HOME)");
  }
  absl::Status made = files::MakeDirectories(dir);
  if (!made.ok()) {
    return absl::Status(made.code(),
                        absl::StrCat("delivery spool: ", made.message()));
  }
  return DeliverySpool(dir);
}

absl::Status DeliverySpool::Keep(const std::vector<SpooledRecord>& records) {
  if (records.empty()) return absl::OkStatus();
  const std::string name = NewFileName(kSuffix);
  absl::Status written = files::WriteFileAtomically(
      absl::StrCat(dir_, "/", name), Encode(records));
  if (!written.ok()) {
    return absl::Status(
        written.code(),
        absl::StrCat("keeping ", records.size(),
                     " undelivered records in the spool: ", written.message()));
  }
  return written;
}

absl::StatusOr<int64_t> DeliverySpool::KeepUndelivered(
    Producer& producer, std::chrono::milliseconds timeout) {
  std::vector<DeliveryFailure> failures = producer.Drain(timeout);
  absl::Status kept = Keep(RecordsOf(failures));
  if (!kept.ok()) return kept;
  return static_cast<int64_t>(failures.size());
}

absl::StatusOr<SpoolRetry> DeliverySpool::Retry(
    Producer& producer, std::chrono::milliseconds timeout) {
  SpoolRetry result;
  if (producer.stats().in_flight() != 0) {
    return absl::FailedPreconditionError(
        "delivery spool: Retry needs a producer with nothing in flight");
  }
  RetryLock lock(dir_);
  if (!lock.held()) {
    result.busy = true;
    return result;
  }
  absl::StatusOr<std::vector<std::string>> names = SpoolFiles(dir_);
  if (!names.ok()) return names.status();
  struct Batch {
    std::string path;
    std::vector<SpooledRecord> records;
    uint64_t first_tag = 0;
  };
  std::vector<Batch> batches;
  std::set<uint64_t> failed;                // tags
  std::map<uint64_t, std::string> refused;  // tag -> why, never retried
  uint64_t next_tag = 1;
  for (const std::string& name : *names) {
    Batch batch;
    batch.path = absl::StrCat(dir_, "/", name);
    std::string content;
    absl::Status read = files::ReadWholeFile(batch.path, &content);
    if (absl::IsNotFound(read)) continue;  // retried meanwhile
    if (!read.ok()) return read;
    if (!Decode(content, &batch.records)) {
      const std::string aside = batch.path + ".unreadable";
      rename(batch.path.c_str(), aside.c_str());
      result.unreadable.push_back(aside);
      continue;
    }
    batch.first_tag = next_tag;
    for (const SpooledRecord& r : batch.records) {
      const uint64_t tag = next_tag++;
      // Refused at once: kept (full queue for too long, fatal producer), or
      // set aside when too large to produce at all.
      absl::Status produced = producer.Produce(r.topic, r.key, r.value, tag);
      if (TooLargeToProduce(produced)) {
        refused[tag] = absl::StrCat("larger than the producer may send: ",
                                    produced.message());
      } else if (!produced.ok()) {
        failed.insert(tag);
      }
    }
    batches.push_back(std::move(batch));
  }
  std::vector<SpooledRecord> others;  // failures of someone else's records
  std::vector<uint64_t> suspects;     // in batches the broker refused
  for (const DeliveryFailure& f : producer.Drain(timeout)) {
    if (f.tag >= 1 && f.tag < next_tag) {
      failed.insert(f.tag);
      if (BrokerRefusedTheRecords(f.status)) suspects.push_back(f.tag);
    } else {
      others.push_back({f.topic, f.key, f.value});
    }
  }
  // A broker's refusal fails a whole batch: a record the topic can never
  // take (larger than its max.message.bytes) would keep its batch-mates in
  // the spool with it at every run. Each is produced again alone; only one
  // refused alone is set aside. Those not tried in `timeout` stay kept.
  std::sort(suspects.begin(), suspects.end());
  const absl::Time deadline = absl::Now() + absl::FromChrono(timeout);
  for (uint64_t tag : suspects) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration() || !producer.fatal_error().ok()) break;
    auto batch = std::upper_bound(
        batches.begin(), batches.end(), tag,
        [](uint64_t t, const Batch& b) { return t < b.first_tag; });
    const SpooledRecord& r =
        std::prev(batch)->records[tag - std::prev(batch)->first_tag];
    if (!producer.Produce(r.topic, r.key, r.value, tag).ok()) continue;
    bool alone_failed = false;
    for (const DeliveryFailure& f :
         producer.Drain(absl::ToChronoMilliseconds(left))) {
      if (f.tag != tag) {
        others.push_back({f.topic, f.key, f.value});
      } else if (BrokerRefusedTheRecords(f.status)) {
        alone_failed = true;
        refused[tag] = absl::StrCat("refused by the broker even alone: ",
                                    f.status.message());
      } else {
        alone_failed = true;  // another failure: kept, as any
      }
    }
    if (!alone_failed || refused.count(tag) > 0) failed.erase(tag);
  }
  // Kept first: an error below must not drop them.
  if (absl::Status kept = Keep(others); !kept.ok()) return kept;
  result.kept += static_cast<int64_t>(others.size());
  for (const Batch& batch : batches) {
    std::vector<SpooledRecord> set_aside;
    std::string reason;
    for (size_t i = 0; i < batch.records.size(); ++i) {
      if (auto why = refused.find(batch.first_tag + i); why != refused.end()) {
        set_aside.push_back(batch.records[i]);
        if (reason.empty()) reason = why->second;
      }
    }
    bool aside_written = true;
    if (!set_aside.empty()) {
      // Written before the batch is rewritten without them: a crash in
      // between leaves them twice, never nowhere.
      const std::string aside =
          absl::StrCat(dir_, "/", NewFileName(kRefusedSuffix));
      absl::Status written =
          files::WriteFileAtomically(aside, Encode(set_aside));
      aside_written = written.ok();
      // Not written (disk full, say): they stay in the batch, in order.
      result.refused.push_back(
          {aside_written ? aside : std::string(),
           static_cast<int64_t>(set_aside.size()),
           aside_written
               ? reason
               : absl::StrCat(reason, "; not set aside: ", written.message())});
      if (!aside_written) set_aside.clear();
    }
    std::vector<SpooledRecord> left;  // in the batch's order
    for (size_t i = 0; i < batch.records.size(); ++i) {
      const uint64_t tag = batch.first_tag + i;
      if (failed.count(tag) > 0 || (!aside_written && refused.count(tag) > 0)) {
        left.push_back(batch.records[i]);
      }
    }
    result.delivered += static_cast<int64_t>(batch.records.size() -
                                             left.size() - set_aside.size());
    result.kept += static_cast<int64_t>(left.size());
    if (left.size() == batch.records.size()) continue;
    if (!left.empty()) {
      absl::Status rewritten =
          files::WriteFileAtomically(batch.path, Encode(left));
      if (!rewritten.ok()) return rewritten;
    } else if (unlink(batch.path.c_str()) != 0 && errno != ENOENT) {
      return absl::InternalError(absl::StrCat("cannot remove ", batch.path,
                                              ": ", std::strerror(errno)));
    }
  }
  return result;
}

absl::StatusOr<std::vector<SpooledRecord>> DeliverySpool::Records() const {
  absl::StatusOr<std::vector<std::string>> names = SpoolFiles(dir_);
  if (!names.ok()) return names.status();
  std::vector<SpooledRecord> records;
  for (const std::string& name : *names) {
    std::string content;
    absl::Status read =
        files::ReadWholeFile(absl::StrCat(dir_, "/", name), &content);
    if (absl::IsNotFound(read)) continue;
    if (!read.ok()) return read;
    std::vector<SpooledRecord> batch;
    if (!Decode(content, &batch)) continue;
    for (SpooledRecord& r : batch) records.push_back(std::move(r));
  }
  return records;
}

std::string SpoolRetryMessage(const SpoolRetry& retry, const std::string& dir) {
  if (retry.delivered == 0 && retry.kept == 0 && retry.unreadable.empty() &&
      retry.refused.empty()) {
    return "";
  }
  std::string message = absl::StrCat("spool ", dir, ": ", retry.delivered,
                                     " records of an earlier run delivered, ",
                                     retry.kept, " still kept for retry");
  for (const std::string& file : retry.unreadable) {
    absl::StrAppend(&message, "; unreadable, set aside: ", file);
  }
  for (const RefusedRecords& r : retry.refused) {
    absl::StrAppend(&message, "; ", r.count, " that can never be produced (",
                    r.reason, ")",
                    r.file.empty() ? ", still kept"
                                   : absl::StrCat(", set aside: ", r.file));
  }
  return message;
}

std::string KeptForRetryMessage(int64_t kept, const std::string& dir) {
  return absl::StrCat(kept, " records kept for retry in ", dir,
                      " (Kafka did not acknowledge them; the next run "
                      "produces them again first)");
}

}  // namespace phaseloop::kafka
