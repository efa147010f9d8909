#include "staging_harness/search/episode_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/testing/test_util.h"

namespace phaseloop::search {
namespace {

v1::Episode MakeEpisode(int i) {
  v1::Episode e;
  e.set_episode_id("run-" + std::to_string(i));
  e.set_module_hash("abc");
  e.set_objective("ir_count");
  for (int s = 0; s < 3 + i; ++s) {
    v1::Step* step = e.add_steps();
    step->set_index(s);
    step->set_action(s * 7 % 122);
    for (int k = 0; k < 56; ++k) step->add_autophase(k + s);
    for (int k = 0; k < 70; ++k) step->add_inst_count(k * s);
  }
  e.set_final_ir_count(100 - i);
  return e;
}

std::string WriteThree(const std::string& name) {
  const std::string path = testing::MakeTempDir() + "/" + name;
  auto sink = FileEpisodeSink::Open(path);
  EXPECT_TRUE(sink.ok()) << sink.status();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE((*sink)->Write(MakeEpisode(i)).ok());
  EXPECT_TRUE((*sink)->Flush().ok());
  return path;
}

int64_t SizeOf(const std::string& path) {
  return static_cast<int64_t>(std::filesystem::file_size(path));
}

TEST(EpisodeFile, RoundTrips) {
  const std::string path = WriteThree("episodes.bin");
  auto contents = ReadEpisodeFile(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->episodes.size(), 3u);
  EXPECT_EQ(contents->truncated_tail_bytes, 0);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(contents->episodes[i].SerializeAsString(),
              MakeEpisode(i).SerializeAsString());
  }
}

TEST(EpisodeFile, TruncatedLastRecordIsIgnoredAtEveryCut) {
  const std::string path = WriteThree("episodes.bin");
  const int64_t size = SizeOf(path);
  auto whole = EpisodeFileReader::Open(path);
  ASSERT_TRUE(whole.ok());
  v1::Episode e;
  ASSERT_TRUE(*(*whole)->Next(e));
  ASSERT_TRUE(*(*whole)->Next(e));
  const int64_t two = (*whole)->valid_bytes();
  const std::string bytes = testing::ReadFileOrEmpty(path);
  // Every cut inside the third record leaves exactly two episodes.
  for (int64_t cut = two + 1; cut < size; ++cut) {
    {
      std::ofstream out(path, std::ios::trunc | std::ios::binary);
      out.write(bytes.data(), cut);
    }
    auto contents = ReadEpisodeFile(path);
    ASSERT_TRUE(contents.ok()) << "cut " << cut << ": " << contents.status();
    EXPECT_EQ(contents->episodes.size(), 2u) << "cut " << cut;
    EXPECT_EQ(contents->truncated_tail_bytes, cut - two);
  }
}

TEST(EpisodeFile, ZeroFilledTailIsIgnored) {
  const std::string path = WriteThree("episodes.bin");
  {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << std::string(100, '\0');
  }
  auto contents = ReadEpisodeFile(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->episodes.size(), 3u);
  EXPECT_EQ(contents->truncated_tail_bytes, 100);
}

TEST(EpisodeFile, ReopeningCutsTheIncompleteRecordBeforeAppending) {
  const std::string path = WriteThree("episodes.bin");
  ASSERT_EQ(truncate(path.c_str(), SizeOf(path) - 5), 0);  // a crash mid-write
  auto before = ReadEpisodeFile(path);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_GT(before->truncated_tail_bytes, 0);
  {
    auto sink = FileEpisodeSink::Open(path);
    ASSERT_TRUE(sink.ok()) << sink.status();
    // What was cut is counted, for the search to say.
    EXPECT_EQ((*sink)->cut_tail_bytes(), before->truncated_tail_bytes);
    ASSERT_TRUE((*sink)->Write(MakeEpisode(7)).ok());
  }
  {
    auto again = FileEpisodeSink::Open(path);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ((*again)->cut_tail_bytes(), 0);
  }
  auto contents = ReadEpisodeFile(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->episodes.size(), 3u);
  EXPECT_EQ(contents->episodes[2].episode_id(), "run-7");
  EXPECT_EQ(contents->truncated_tail_bytes, 0);
}

TEST(EpisodeFile, DamageInTheMiddleIsDataLoss) {
  const std::string path = WriteThree("episodes.bin");
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x55');
  }
  auto contents = ReadEpisodeFile(path);
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(contents.status().message().find("offset 0"), std::string::npos);
  // A writer refuses to append behind it.
  auto sink = FileEpisodeSink::Open(path);
  EXPECT_EQ(sink.status().code(), absl::StatusCode::kDataLoss);
}

// A last record whose checksum holds was written whole: one that is not an
// Episode is damage, not an interrupted write, and is never cut off.
TEST(EpisodeFile, AWholeLastRecordThatIsNotAnEpisodeIsDataLoss) {
  const std::string path = WriteThree("episodes.bin");
  const int64_t size = SizeOf(path);
  const std::string payload = "\xff\xff\xff\xff";  // no valid field tag
  const uint32_t crc = Crc32c(payload.data(), payload.size());
  const uint32_t masked = ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
  {
    std::ofstream f(path, std::ios::app | std::ios::binary);
    f.put(static_cast<char>(payload.size()));
    f << payload;
    for (int i = 0; i < 4; ++i) f.put(static_cast<char>(masked >> (8 * i)));
  }
  auto contents = ReadEpisodeFile(path);
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(contents.status().message().find("is whole (its checksum holds) "
                                             "but is not an Episode"),
            std::string::npos)
      << contents.status();
  auto sink = FileEpisodeSink::Open(path);
  EXPECT_EQ(sink.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(SizeOf(path), size + 1 + 4 + 4);  // nothing cut
}

TEST(EpisodeFile, OneWriterPerFile) {
  const std::string path = testing::MakeTempDir() + "/episodes.bin";
  auto first = FileEpisodeSink::Open(path);
  ASSERT_TRUE(first.ok());
  auto second = FileEpisodeSink::Open(path);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(EpisodeFile, ClearErrors) {
  auto sink = FileEpisodeSink::Open("/no/such/dir/episodes.bin");
  ASSERT_FALSE(sink.ok());
  EXPECT_NE(sink.status().message().find("/no/such/dir/episodes.bin"),
            std::string::npos);
  auto reader = EpisodeFileReader::Open("/no/such/file");
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound);
}

TEST(EpisodeFile, Crc32cKnownValue) {
  // RFC 3720 test vector: 32 bytes of zeros.
  const std::string zeros(32, '\0');
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8a9136aau);
  EXPECT_EQ(Crc32c("123456789", 9), 0xe3069283u);
}

}  // namespace
}  // namespace phaseloop::search
