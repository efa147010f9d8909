#include "staging_harness/search/episode_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/protobuf/utf8_strings.h"

namespace phaseloop::search {
namespace {

constexpr uint64_t kMaxRecordBytes = 256u << 20;
constexpr uint32_t kCrcMaskDelta = 0xa282ead8u;

uint32_t MaskedCrc(const std::string& payload) {
  const uint32_t crc = Crc32c(payload.data(), payload.size());
  return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta;
}

std::string ErrnoText() { return std::strerror(errno); }

void AppendVarint32(uint32_t value, std::string& out) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// True when every byte from the current position to the end is zero (a
// filesystem that extended the file but never wrote the data after a crash).
bool RestIsZero(std::FILE* file) {
  int c;
  while ((c = std::fgetc(file)) != EOF) {
    if (c != 0) return false;
  }
  return true;
}

}  // namespace

uint32_t Crc32c(const void* data, size_t size) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ bytes[i]) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

absl::StatusOr<std::unique_ptr<FileEpisodeSink>> FileEpisodeSink::Open(
    const std::string& path) {
  std::error_code error;
  const bool existed = std::filesystem::exists(path, error);
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot open episode file '", path, "' for appending: ", ErrnoText(),
        "; check that its directory exists and is writable"));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat(
        "episode file '", path, "' is being written by another process; ",
        "give each search its own --episodes-out"));
  }
  int64_t valid = 0, cut = 0;
  if (existed) {
    absl::StatusOr<std::unique_ptr<EpisodeFileReader>> reader =
        EpisodeFileReader::Open(path);
    if (!reader.ok()) {
      ::close(fd);
      return reader.status();
    }
    v1::Episode episode;
    for (;;) {
      absl::StatusOr<bool> next = (*reader)->Next(episode);
      if (!next.ok()) {
        ::close(fd);
        return absl::DataLossError(absl::StrCat(
            next.status().message(), "; not appending to it: move it aside"));
      }
      if (!*next) break;
    }
    valid = (*reader)->valid_bytes();
    cut = (*reader)->truncated_tail_bytes();
    if (cut > 0 && ftruncate(fd, valid) != 0) {
      ::close(fd);
      return absl::InternalError(
          absl::StrCat("cannot cut the incomplete last record off '", path,
                       "': ", ErrnoText()));
    }
  } else {
    // Make the new directory entry durable too.
    const std::string dir = std::filesystem::path(path).parent_path().string();
    const int dir_fd =
        ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_CLOEXEC);
    if (dir_fd >= 0) {
      (void)fsync(dir_fd);
      ::close(dir_fd);
    }
  }
  std::unique_ptr<FileEpisodeSink> sink(new FileEpisodeSink(path, fd, valid));
  sink->cut_tail_bytes_ = cut;
  return sink;
}

FileEpisodeSink::~FileEpisodeSink() {
  if (fd_ >= 0) ::close(fd_);  // also releases the lock
}

absl::Status FileEpisodeSink::Write(const v1::Episode& episode) {
  // (Strings that are not UTF-8 are written as \xNN: readable again.)
  const std::string payload = protobuf::SerializeAsValidUtf8(episode);
  if (payload.size() > kMaxRecordBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "episode ", episode.episode_id(), " is ", payload.size(),
        " bytes, more than the episode file's limit of ", kMaxRecordBytes));
  }
  std::string record;
  record.reserve(payload.size() + 9);
  AppendVarint32(static_cast<uint32_t>(payload.size()), record);
  record += payload;
  const uint32_t crc = MaskedCrc(payload);
  for (int i = 0; i < 4; ++i)
    record.push_back(static_cast<char>(crc >> (8 * i)));

  size_t done = 0;
  while (done < record.size()) {
    const ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? ErrnoText() : "short write";
      // No partial record stays behind (if it does, readers skip it and the
      // next Open cuts it off).
      const bool cut = ftruncate(fd_, size_) == 0;
      return absl::UnavailableError(absl::StrCat(
          "cannot append to episode file '", path_, "': ", why,
          cut ? "" : " (the partial record could not be removed)"));
    }
    done += static_cast<size_t>(n);
  }
  size_ += static_cast<int64_t>(record.size());
  ++records_written_;
  return absl::OkStatus();
}

absl::Status FileEpisodeSink::Flush() {
  if (fdatasync(fd_) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot sync episode file '", path_, "': ", ErrnoText()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<EpisodeFileReader>> EpisodeFileReader::Open(
    const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rbe");
  if (file == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("cannot read episode file '", path, "': ", ErrnoText()));
  }
  struct stat st;
  if (fstat(fileno(file), &st) != 0) {
    std::fclose(file);
    return absl::InternalError(absl::StrCat("cannot stat '", path, "'"));
  }
  return std::unique_ptr<EpisodeFileReader>(
      new EpisodeFileReader(path, file, st.st_size));
}

EpisodeFileReader::~EpisodeFileReader() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::StatusOr<bool> EpisodeFileReader::Next(v1::Episode& episode) {
  if (offset_ >= size_ || tail_bytes_ > 0) return false;
  auto tail = [this] {
    tail_bytes_ = size_ - offset_;
    return false;
  };
  uint64_t length = 0;
  int header = 0;
  for (;; ++header) {
    const int c = std::fgetc(file_);
    if (c == EOF) return tail();
    if (header == 5) {
      return absl::DataLossError(absl::StrCat(
          "episode file '", path_, "': bad record length at offset ", offset_));
    }
    length |= static_cast<uint64_t>(c & 0x7f) << (7 * header);
    if ((c & 0x80) == 0) {
      ++header;
      break;
    }
  }
  const int64_t end = offset_ + header + static_cast<int64_t>(length) + 4;
  if (end > size_) return tail();
  auto damaged = [&](const char* what) -> absl::StatusOr<bool> {
    if (end == size_ || RestIsZero(file_)) return tail();
    return absl::DataLossError(absl::StrCat(
        "episode file '", path_, "': record at offset ", offset_,
        " is damaged (", what,
        ") and more data follows it; the records before it are intact"));
  };
  if (length > kMaxRecordBytes) return damaged("length over the limit");
  std::string payload(length, '\0');
  unsigned char crc_bytes[4];
  if (std::fread(payload.data(), 1, length, file_) != length ||
      std::fread(crc_bytes, 1, 4, file_) != 4) {
    return tail();
  }
  const uint32_t crc = crc_bytes[0] | (crc_bytes[1] << 8) |
                       (crc_bytes[2] << 16) |
                       (static_cast<uint32_t>(crc_bytes[3]) << 24);
  if (crc != MaskedCrc(payload)) return damaged("checksum mismatch");
  // Its checksum holds: the record was written whole, so it was no write
  // cut short, even at the end of the file (a cut would lose it unsaid).
  if (!episode.ParseFromString(payload)) {
    return absl::DataLossError(absl::StrCat(
        "episode file '", path_, "': record at offset ", offset_,
        " is whole (its checksum holds) but is not an Episode (written by "
        "another program, or by a phaseloop before 2026-11-30 with text that "
        "is not UTF-8?); the records before it are intact"));
  }
  offset_ = end;
  return true;
}

absl::StatusOr<EpisodeFileContents> ReadEpisodeFile(const std::string& path) {
  absl::StatusOr<std::unique_ptr<EpisodeFileReader>> reader =
      EpisodeFileReader::Open(path);
  if (!reader.ok()) return reader.status();
  EpisodeFileContents contents;
  for (;;) {
    v1::Episode episode;
    absl::StatusOr<bool> next = (*reader)->Next(episode);
    if (!next.ok()) return next.status();
    if (!*next) break;
    contents.episodes.push_back(std::move(episode));
  }
  contents.truncated_tail_bytes = (*reader)->truncated_tail_bytes();
  return contents;
}

}  // namespace phaseloop::search
