#include "common/files/atomic_file.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::files {
namespace {

namespace stdfs = std::filesystem;

std::string Read(const std::string& path) {
  std::string content;
  EXPECT_TRUE(ReadWholeFile(path, &content).ok()) << path;
  return content;
}

// Files in `dir` other than `keep`: temp files left behind.
int OtherFiles(const std::string& dir, const std::string& keep) {
  int n = 0;
  for (const auto& entry : stdfs::directory_iterator(dir)) {
    if (entry.path().filename() != keep) ++n;
  }
  return n;
}

TEST(AtomicFileTest, WritesAndReplacesWholeFiles) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/index.json";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  EXPECT_EQ(Read(path), "first");
  ASSERT_TRUE(WriteFileAtomically(path, "second, longer").ok());
  EXPECT_EQ(Read(path), "second, longer");
  EXPECT_EQ(OtherFiles(dir, "index.json"), 0);
}

TEST(AtomicFileTest, SetsTheRequestedMode) {
  const std::string path = testing::MakeTempDir() + "/tool.sh";
  ASSERT_TRUE(WriteFileAtomically(path, "#!/bin/sh\n", 0755).ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
}

TEST(AtomicFileTest, MissingDirectoryIsAnErrorNamingThePath) {
  absl::Status status =
      WriteFileAtomically("/nonexistent-dir/sub/file.json", "x");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("/nonexistent-dir/sub/file.json"),
            std::string::npos)
      << status;
}

TEST(AtomicFileTest, ReadingAMissingFileIsNotFound) {
  std::string content;
  EXPECT_EQ(ReadWholeFile("/nonexistent/x", &content).code(),
            absl::StatusCode::kNotFound);
}

TEST(AtomicFileTest, CommitFileMovesAFileWrittenElsewhere) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/model.pt";
  const std::string temp = TempPathFor(path);
  EXPECT_EQ(stdfs::path(temp).parent_path(), stdfs::path(dir));
  EXPECT_NE(TempPathFor(path), temp);  // unique per call
  {
    FILE* f = fopen(temp.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs("weights", f);
    fclose(f);
  }
  ASSERT_TRUE(CommitFile(temp, path).ok());
  EXPECT_EQ(Read(path), "weights");
  EXPECT_FALSE(stdfs::exists(temp));
}

// A process that dies after writing the new content but before the rename
// leaves the old file whole under its name (and a temp file its owner may
// delete), never a mix or an empty file.
TEST(AtomicFileTest, CrashBetweenWriteAndRenameKeepsTheOldFile) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/manifest.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old content").ok());
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("PHASELOOP_TEST_CRASH_BEFORE_RENAME", "manifest.json", 1);
    (void)WriteFileAtomically(path, std::string(1 << 20, 'n'));
    _exit(0);  // not reached: the hook aborts
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer should have crashed";
  EXPECT_EQ(Read(path), "old content");
  int temps = 0;
  for (const auto& entry : stdfs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind(kTempFilePrefix, 0) == 0) {
      ++temps;
    }
  }
  EXPECT_EQ(temps, 1);
}

// SIGKILL at arbitrary points of a writer replacing the file over and over:
// every reader sees one of the whole contents.
TEST(AtomicFileTest, KilledWritersNeverLeaveAPartialFile) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/policy.plpolicy";
  const std::string a(300000, 'a');
  const std::string b(200000, 'b');
  ASSERT_TRUE(WriteFileAtomically(path, a).ok());
  for (int round = 0; round < 20; ++round) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int i = 0;; ++i) (void)WriteFileAtomically(path, i % 2 ? a : b);
    }
    usleep(1000 * (1 + round % 7));
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    const std::string seen = Read(path);
    EXPECT_TRUE(seen == a || seen == b)
        << "round " << round << ": " << seen.size() << " bytes";
  }
}

// Appends create the file and its directories and add to the end; a file
// in the way of a directory is an error naming it.
TEST(AtomicFileTest, AppendDurablyAddsLinesAndCreatesDirectories) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/state/phaseloop/log.jsonl";
  ASSERT_TRUE(AppendDurably(path, "one\n").ok());
  ASSERT_TRUE(AppendDurably(path, "two\n").ok());
  EXPECT_EQ(Read(path), "one\ntwo\n");
  ASSERT_TRUE(WriteFileAtomically(dir + "/file", "x").ok());
  absl::Status blocked = AppendDurably(dir + "/file/log.jsonl", "one\n");
  EXPECT_FALSE(blocked.ok());
  EXPECT_NE(blocked.message().find(dir + "/file"), std::string::npos)
      << blocked;
}

}  // namespace
}  // namespace phaseloop::files
