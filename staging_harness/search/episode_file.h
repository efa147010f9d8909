#ifndef PHASELOOP_STAGING_HARNESS_SEARCH_EPISODE_FILE_H_
#define PHASELOOP_STAGING_HARNESS_SEARCH_EPISODE_FILE_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "phaseloop/v1/episode.pb.h"
#include "staging_harness/search/episode_sink.h"

namespace phaseloop::search {

// The episode file: length-delimited v1::Episode records, each followed by a
// checksum, appended one whole record per write(2):
//
//   record := varint32 length | payload (length bytes, a serialised Episode)
//             | fixed32 little-endian masked CRC-32C of the payload
//
// (the mask is TFRecord's, so an all-zero tail never checks out). A writer
// killed mid-record leaves an incomplete last record; readers ignore it and
// the next FileEpisodeSink::Open cuts it off before appending. A bad record
// followed by more data is corruption, not a crash, and is reported as
// DataLoss; so is a whole record (its checksum holds) that is not an
// Episode, even the last one.

// Appends episodes to a file. One writer per file: Open takes an exclusive
// advisory lock (flock) held until the sink is destroyed.
class FileEpisodeSink final : public EpisodeSink {
 public:
  // Creates the file or opens it for appending after checking its records;
  // an incomplete last record (an earlier writer's crash) is truncated away
  // and counted in cut_tail_bytes(), for the caller to say.
  static absl::StatusOr<std::unique_ptr<FileEpisodeSink>> Open(
      const std::string& path);
  ~FileEpisodeSink() override;

  // One write(2) of the whole record; on a failed or short write the file is
  // cut back to its previous length.
  absl::Status Write(const v1::Episode& episode) override;
  // fdatasync: the episodes written so far survive a machine crash.
  absl::Status Flush() override;

  const std::string& path() const { return path_; }
  int64_t records_written() const { return records_written_; }
  // Bytes of an incomplete last record Open cut off (0: none).
  int64_t cut_tail_bytes() const { return cut_tail_bytes_; }

 private:
  FileEpisodeSink(std::string path, int fd, int64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}

  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;  // bytes of whole records in the file
  int64_t records_written_ = 0;
  int64_t cut_tail_bytes_ = 0;
};

// Reads an episode file record by record. Not thread-safe.
class EpisodeFileReader {
 public:
  static absl::StatusOr<std::unique_ptr<EpisodeFileReader>> Open(
      const std::string& path);
  ~EpisodeFileReader();

  // The next episode: true, or false at the end of the whole records (an
  // incomplete last record is skipped; see truncated_tail_bytes()). DataLoss
  // for a damaged record that is not the last one, and for a whole record
  // that is not an Episode.
  absl::StatusOr<bool> Next(v1::Episode& episode);

  // Bytes of whole, valid records read so far.
  int64_t valid_bytes() const { return offset_; }
  // Bytes of the incomplete last record ignored (0 when the file is whole).
  int64_t truncated_tail_bytes() const { return tail_bytes_; }

 private:
  EpisodeFileReader(std::string path, std::FILE* file, int64_t size)
      : path_(std::move(path)), file_(file), size_(size) {}

  std::string path_;
  std::FILE* file_ = nullptr;
  int64_t size_ = 0;
  int64_t offset_ = 0;
  int64_t tail_bytes_ = 0;
};

struct EpisodeFileContents {
  std::vector<v1::Episode> episodes;
  int64_t truncated_tail_bytes = 0;
};

// Every whole episode of a file.
absl::StatusOr<EpisodeFileContents> ReadEpisodeFile(const std::string& path);

// CRC-32C (Castagnoli) of `data`; exposed for tests.
uint32_t Crc32c(const void* data, size_t size);

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_SEARCH_EPISODE_FILE_H_
