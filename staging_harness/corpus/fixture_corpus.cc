#include "staging_harness/corpus/fixture_corpus.h"

#include <filesystem>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "staging_harness/corpus/corpus_builder.h"

namespace phaseloop::corpus {

absl::StatusOr<Manifest> BuildFixtureCorpus(
    const std::string& base, const std::vector<std::string>& names,
    ir::ModuleConvention convention) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::remove_all(base, error);
  const fs::path sources = fs::path(base) / "src";
  for (const std::string& name : names) {
    fs::create_directories(sources / name);
    fs::copy_file(fs::path("compiler_driver/fixtures") / (name + ".c"),
                  sources / name / "main.c", error);
    if (error) {
      return absl::NotFoundError(
          absl::StrCat("fixture ", name, ".c: ", error.message()));
    }
  }
  const std::string corpus_dir = (fs::path(base) / "corpus").string();
  const std::string origin = "dir:" + sources.string();
  CorpusSettings settings;
  settings.jobs = 2;
  settings.convention = convention;
  std::ostringstream progress;
  absl::StatusOr<Manifest> built = BuildModules(
      {{sources.string(), "fx", origin}}, settings, corpus_dir, progress);
  if (!built.ok()) return built.status();
  if (built->modules.size() != names.size()) {
    return absl::InternalError(
        absl::StrCat("built ", built->modules.size(), " of ", names.size(),
                     " fixture programs: ", progress.str()));
  }
  absl::StatusOr<Manifest> manifest = OpenCorpus(corpus_dir, settings);
  if (!manifest.ok()) return manifest.status();
  if (absl::Status s = CommitCorpus(corpus_dir, *manifest, *built, {origin});
      !s.ok()) {
    return s;
  }
  return built;
}

}  // namespace phaseloop::corpus
