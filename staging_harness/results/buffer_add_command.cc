#include "staging_harness/results/buffer_add_command.h"

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/command/exit_code.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/corpus/manifest.h"
#include "staging_harness/results/stored_episode_sinks.h"
#include "staging_harness/search/episode_file.h"

namespace phaseloop::search {
namespace {

struct Flags {
  std::string buffer;
  std::vector<std::string> corpora;
  std::vector<std::string> episode_files;
};

struct Counts {
  int64_t modules = 0;
  int64_t episodes = 0;
  int64_t truncated_tails = 0;
};

absl::Status AddCorpus(const std::string& dir,
                       replay_buffer::ReplayStore& store, Counts& counts) {
  absl::StatusOr<corpus::Manifest> manifest = corpus::ReadManifest(dir);
  if (!manifest.ok()) return manifest.status();
  replay_buffer::WriteBatch batch;
  batch.modules = manifest->modules;
  counts.modules += static_cast<int64_t>(batch.modules.size());
  return store.Write(batch);
}

absl::Status AddEpisodes(const std::string& path,
                         replay_buffer::ReplayStore& store, Counts& counts) {
  absl::StatusOr<std::unique_ptr<EpisodeFileReader>> reader =
      EpisodeFileReader::Open(path);
  if (!reader.ok()) return reader.status();
  BufferEpisodeSink sink(&store, /*batch=*/256);
  const int64_t before = counts.episodes;
  v1::Episode episode;
  for (;;) {
    absl::StatusOr<bool> next = (*reader)->Next(episode);
    if (!next.ok()) return next.status();
    if (!*next) break;
    if (absl::Status written = sink.Write(episode); !written.ok()) {
      return written;
    }
    ++counts.episodes;
  }
  if ((*reader)->truncated_tail_bytes() > 0) {
    if (counts.episodes == before) {
      return absl::InvalidArgumentError(
          "not one whole episode record: is this an episode file written by "
          "`phaseloop search --episodes-out`?");
    }
    ++counts.truncated_tails;
  }
  return sink.Flush();
}

int Run(const Flags& flags) {
  if (flags.corpora.empty() && flags.episode_files.empty()) {
    std::cerr << "phaseloop buffer add: nothing to add: give --corpus DIR "
                 "and/or --episodes FILE\n";
    return command::kExitBadInput;
  }
  // Inputs that cannot be read are found before the buffer is opened: a
  // failed add left a new, empty buffer file behind.
  for (const std::string& dir : flags.corpora) {
    if (absl::Status s = corpus::ReadManifest(dir).status(); !s.ok()) {
      std::cerr << "phaseloop buffer add: corpus " << dir << ": " << s.message()
                << "\n";
      return command::ExitCodeOf(s);
    }
  }
  for (const std::string& path : flags.episode_files) {
    if (std::error_code error; !std::filesystem::is_regular_file(path, error)) {
      std::cerr << "phaseloop buffer add: episodes " << path
                << ": not a file; give an episode file `phaseloop search "
                   "--episodes-out` wrote\n";
      return command::kExitBadInput;
    }
  }
  absl::StatusOr<std::unique_ptr<replay_buffer::ReplayStore>> store =
      replay_buffer::OpenReplayStore(flags.buffer);
  if (!store.ok()) {
    std::cerr << "phaseloop buffer add: " << store.status().message() << "\n";
    return command::kExitBadInput;
  }
  Counts counts;
  // Modules first: episodes refer to them.
  for (const std::string& dir : flags.corpora) {
    if (absl::Status s = AddCorpus(dir, **store, counts); !s.ok()) {
      std::cerr << "phaseloop buffer add: corpus " << dir << ": " << s.message()
                << "\n";
      return command::ExitCodeOf(s);
    }
  }
  for (const std::string& path : flags.episode_files) {
    if (absl::Status s = AddEpisodes(path, **store, counts); !s.ok()) {
      std::cerr << "phaseloop buffer add: episodes " << path << ": "
                << s.message() << " (episodes before the problem are kept)\n";
      return command::ExitCodeOf(s);
    }
  }
  // Upserts: a record already there by id is counted and left as the
  // same record, not added twice.
  std::cout << "added " << counts.modules << " modules and " << counts.episodes
            << " episodes to " << flags.buffer
            << " (upserted by id: adding the same files again changes "
               "nothing)";
  if (counts.truncated_tails > 0) {
    std::cout << " (" << counts.truncated_tails
              << " episode files ended in an incomplete record, ignored)";
  }
  std::cout << "\n";
  return command::kExitOk;
}

}  // namespace

void AddBufferAddCommand(CLI::App& app, int& exit_code) {
  CLI::App* buffer = app.get_subcommand("buffer");
  auto flags = std::make_shared<Flags>();
  CLI::App* add = buffer->add_subcommand(
      "add",
      "Add corpus modules (manifest.json: splits, baselines) and search "
      "episode files to a buffer (idempotent)");
  add->add_option("--buffer", flags->buffer,
                  "replay buffer file (created when missing)")
      ->required();
  add->add_option("--corpus", flags->corpora,
                  "corpus directory with manifest.json (repeatable)");
  add->add_option("--episodes", flags->episode_files,
                  "episode file from `phaseloop search` (repeatable)");
  add->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace phaseloop::search
