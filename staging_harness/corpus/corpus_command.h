#ifndef PHASELOOP_STAGING_HARNESS_CORPUS_CORPUS_COMMAND_H_
#define PHASELOOP_STAGING_HARNESS_CORPUS_CORPUS_COMMAND_H_

// `phaseloop corpus build | fetch-debian | generate`: corpora of real
// programs as linked, unoptimised modules plus DIR/manifest.json (see
// corpus_builder.h for what a program is, manifest.h for the format).
// Exit codes: 0 success, 1 internal failure (nothing could be built,
// downloads failed), 2 bad input (flags, directories, a corpus of another
// kind at --out).

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace phaseloop::corpus {

struct CorpusFlags {
  std::string out;
  std::string objective = "size";
  std::string convention = "real-build";
  int jobs = 0;  // 0 = hardware threads
  std::vector<std::string> cflags;
  // __DATE__/__TIME__ of every source; "" = $SOURCE_DATE_EPOCH, else 0.
  std::string source_date_epoch;
  // Build C files named like tests too (default: listed under `skipped`).
  bool keep_test_sources = false;
};

struct BuildFlags {
  CorpusFlags corpus;
  std::vector<std::string> source_dirs;
};

struct FetchDebianFlags {
  CorpusFlags corpus;
  std::vector<std::string> packages;  // empty = the default list
  std::string cache;                  // "" = DefaultDebianCache()
  double configure_timeout_seconds = 300;
  bool rebuild = false;
};

struct GenerateFlags {
  CorpusFlags corpus;
  int csmith = 0;
  uint64_t seed = 1;
  int timeout_ms = 2000;
};

int RunCorpusBuild(const BuildFlags& flags, std::ostream& out,
                   std::ostream& err);
int RunFetchDebian(const FetchDebianFlags& flags, std::ostream& out,
                   std::ostream& err);
int RunGenerate(const GenerateFlags& flags, std::ostream& out,
                std::ostream& err);

void AddCorpusCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::corpus

#endif  // PHASELOOP_STAGING_HARNESS_CORPUS_CORPUS_COMMAND_H_
