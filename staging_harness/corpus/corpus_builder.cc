#include "staging_harness/corpus/corpus_builder.h"

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "common/process/parallel_for.h"
#include "common/process/subprocess.h"
#include "common/protobuf/utf8_text.h"
#include "compiler_driver/ir/collected_diagnostics.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/ir/module_loader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/raw_ostream.h"
#include "staging_harness/corpus/program_discovery.h"

namespace phaseloop::corpus {
namespace {

namespace fs = std::filesystem;

struct Group {
  SourceGroup sources;
  const SourceTree* tree = nullptr;
};

// A context whose diagnostics (linker errors) are collected, not printed:
// LLVM's default handler would exit the process on an error.
struct CollectingContext {
  llvm::LLVMContext context;
  ir::CollectedDiagnostics diagnostics{context};
};

bool DefinesMain(const llvm::Module& module) {
  const llvm::Function* main = module.getFunction("main");
  return main != nullptr && !main->isDeclaration();
}

// External definitions that a second definition elsewhere would clash with.
std::set<std::string> StrongDefinitions(const llvm::Module& module) {
  std::set<std::string> names;
  for (const llvm::GlobalValue& gv : module.global_values()) {
    if (gv.isDeclaration() || gv.hasLocalLinkage() || gv.hasLinkOnceLinkage() ||
        gv.hasWeakLinkage() || gv.hasCommonLinkage() ||
        gv.hasAvailableExternallyLinkage()) {
      continue;
    }
    names.insert(gv.getName().str());
  }
  return names;
}

std::set<std::string> DefinedFunctions(const llvm::Module& module) {
  std::set<std::string> names;
  for (const llvm::Function& f : module) {
    if (!f.isDeclaration() && !f.hasLocalLinkage())
      names.insert(f.getName().str());
  }
  return names;
}

class GroupBuilder {
 public:
  GroupBuilder(const Group& group, const CorpusSettings& settings,
               const std::string& corpus_dir)
      : group_(group), settings_(settings), corpus_dir_(corpus_dir) {}

  // `bitcode[i]` is the compiled group.sources.sources[i] (or its error).
  void Build(const std::vector<absl::StatusOr<std::string>>& bitcode,
             const std::function<std::string(const std::string&)>& claim) {
    std::vector<std::pair<std::string, std::unique_ptr<llvm::Module>>> mains;
    std::unique_ptr<llvm::Module> library;
    std::set<std::string> library_defs;
    for (size_t i = 0; i < bitcode.size(); ++i) {
      const std::string& path = group_.sources.sources[i];
      const std::string stem = fs::path(path).stem().string();
      const std::string as_program =
          absl::StrCat(group_.sources.name, "/", stem);
      if (!bitcode[i].ok()) {
        Skip(as_program, "source",
             process::ShortReason(std::string(bitcode[i].status().message())));
        continue;
      }
      absl::StatusOr<std::unique_ptr<llvm::Module>> module =
          ir::ParseModule(*bitcode[i], path, ctx_.context);
      if (!module.ok()) {
        Skip(as_program, "source", std::string(module.status().message()));
        continue;
      }
      if (DefinesMain(**module)) {
        mains.emplace_back(stem, *std::move(module));
        continue;
      }
      std::set<std::string> defs = StrongDefinitions(**module);
      if (!library) {
        library = *std::move(module);
        library_defs = std::move(defs);
        continue;
      }
      std::string clash;
      for (const std::string& d : defs) {
        if (library_defs.count(d)) clash = d;
      }
      if (!clash.empty()) {
        Skip(as_program, "source",
             absl::StrCat("defines '", clash,
                          "', already defined by an "
                          "earlier source of ",
                          group_.sources.name));
        continue;
      }
      ctx_.diagnostics.Clear();
      if (llvm::Linker::linkModules(*library, *std::move(module))) {
        Skip(as_program, "source",
             absl::StrCat("link: ", ctx_.diagnostics.messages()));
        continue;
      }
      library_defs.insert(defs.begin(), defs.end());
    }
    if (mains.empty()) {
      if (library) Finish(claim(group_.sources.name), std::move(library));
      return;
    }
    const std::string library_bitcode =
        library ? ir::ModuleBitcode(*library) : "";
    const std::set<std::string> library_functions =
        library ? DefinedFunctions(*library) : std::set<std::string>();
    std::set<std::string> used;
    library.reset();
    for (auto& [stem, program] : mains) {
      const std::string name =
          claim(absl::StrCat(group_.sources.name, "/", stem));
      if (!library_bitcode.empty()) {
        absl::StatusOr<std::unique_ptr<llvm::Module>> copy =
            ir::ParseModule(library_bitcode, name, ctx_.context);
        ctx_.diagnostics.Clear();
        if (!copy.ok() ||
            llvm::Linker::linkModules(*program, *std::move(copy),
                                      llvm::Linker::LinkOnlyNeeded)) {
          Skip(name, "program",
               absl::StrCat("link: ", copy.ok() ? ctx_.diagnostics.messages()
                                                : copy.status().message()));
          continue;
        }
      }
      for (const std::string& f : DefinedFunctions(*program)) {
        if (library_functions.count(f)) used.insert(f);
      }
      Finish(name, std::move(program));
    }
    // Programs that use little of the directory's library (generators,
    // tools): the library is a module of its own too.
    if (!library_functions.empty() &&
        used.size() * 2 < library_functions.size()) {
      absl::StatusOr<std::unique_ptr<llvm::Module>> copy =
          ir::ParseModule(library_bitcode, group_.sources.name, ctx_.context);
      if (copy.ok()) Finish(claim(group_.sources.name), *std::move(copy));
    }
  }

  Manifest& result() { return result_; }

 private:
  void Skip(const std::string& name, const std::string& kind,
            const std::string& reason) {
    result_.skipped.push_back({name, group_.tree->origin, kind, reason});
  }

  void Finish(const std::string& name, std::unique_ptr<llvm::Module> module) {
    absl::StatusOr<v1::ModuleRecord> record = WriteCorpusModule(
        std::move(module), name, group_.tree->origin, settings_, corpus_dir_);
    if (!record.ok()) {
      Skip(name, "program", std::string(record.status().message()));
      return;
    }
    result_.modules.push_back(*std::move(record));
  }

  const Group& group_;
  const CorpusSettings& settings_;
  const std::string& corpus_dir_;
  CollectingContext ctx_;
  Manifest result_;
};

}  // namespace

absl::StatusOr<Manifest> BuildModules(const std::vector<SourceTree>& trees,
                                      const CorpusSettings& settings,
                                      const std::string& corpus_dir,
                                      std::ostream& progress) {
  absl::Status valid = ValidateSettings(settings);
  if (!valid.ok()) return valid;
  std::vector<Group> groups;
  std::vector<SkippedEntry> left_out;
  for (const SourceTree& tree : trees) {
    absl::StatusOr<Discovery> found = DiscoverSourceGroups(
        tree.dir, tree.root_name, {settings.keep_test_sources});
    if (!found.ok()) return found.status();
    const std::string root =
        fs::weakly_canonical(fs::absolute(tree.dir)).string();
    for (const LeftOutPath& path : found->left_out) {
      // (Named as valid UTF-8: the manifest is JSON.)
      left_out.push_back(
          {protobuf::ValidUtf8(absl::StrCat(
               tree.root_name, "/",
               fs::path(path.path).lexically_relative(root).string())),
           tree.origin, path.kind, path.reason});
    }
    for (SourceGroup& g : found->groups) {
      g.frontend_args.push_back(
          absl::StrCat("-ffile-prefix-map=", root, "=", tree.root_name));
      groups.push_back({std::move(g), &tree});
    }
  }
  // Phase 1: every source through the frontend (clang processes).
  std::vector<std::pair<size_t, size_t>> work;  // (group, source)
  std::vector<std::vector<absl::StatusOr<std::string>>> bitcode(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    bitcode[g].resize(groups[g].sources.sources.size(),
                      absl::UnknownError("not compiled"));
    for (size_t s = 0; s < groups[g].sources.sources.size(); ++s) {
      work.emplace_back(g, s);
    }
  }
  progress << "corpus: " << work.size() << " C sources in " << groups.size()
           << " directories; compiling with " << settings.jobs << " jobs\n";
  std::mutex mu;
  size_t done = 0, failed = 0;
  process::ParallelFor(work.size(), settings.jobs, [&](size_t i) {
    const auto [g, s] = work[i];
    absl::StatusOr<std::string> bc = ir::CompileToBitcode(
        groups[g].sources.sources[s],
        FrontendFor(settings, groups[g].sources.frontend_args,
                    groups[g].sources.directory_cflags));
    std::lock_guard<std::mutex> lock(mu);
    failed += bc.ok() ? 0 : 1;
    bitcode[g][s] = std::move(bc);
    if (++done % 100 == 0 || done == work.size()) {
      progress << "corpus: compiled " << done << "/" << work.size() << " ("
               << failed << " failed)\n";
    }
  });
  // Phase 2: per directory, link programs, measure, write.
  Manifest out;
  out.convention = ir::ConventionName(settings.convention);
  out.opt_level = OptLevelLabel(settings);
  out.skipped = std::move(left_out);
  std::set<std::string> claimed;
  auto claim = [&](const std::string& wanted) {
    std::lock_guard<std::mutex> lock(mu);
    std::string name = wanted;
    for (int n = 2; !claimed.insert(name).second; ++n) {
      name = absl::StrCat(wanted, "~", n);
    }
    return name;
  };
  done = 0;
  process::ParallelFor(groups.size(), settings.jobs, [&](size_t g) {
    GroupBuilder builder(groups[g], settings, corpus_dir);
    builder.Build(bitcode[g], claim);
    std::vector<absl::StatusOr<std::string>>().swap(bitcode[g]);
    std::lock_guard<std::mutex> lock(mu);
    Manifest& r = builder.result();
    progress << "corpus: [" << ++done << "/" << groups.size() << "] "
             << groups[g].sources.name << ": " << r.modules.size()
             << " modules, " << r.skipped.size() << " skipped\n";
    out.modules.insert(out.modules.end(), r.modules.begin(), r.modules.end());
    out.skipped.insert(out.skipped.end(), r.skipped.begin(), r.skipped.end());
  });
  return out;
}

absl::StatusOr<Manifest> OpenCorpus(const std::string& corpus_dir,
                                    const CorpusSettings& settings) {
  std::error_code ec;
  // A link whose target is missing reads as absent, and making the
  // directory then failed with a bare "File exists".
  if (fs::is_symlink(fs::symlink_status(corpus_dir, ec)) &&
      !fs::exists(corpus_dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--out ", corpus_dir, " is a symbolic link to ",
        fs::read_symlink(corpus_dir, ec).string(),
        ", which does not exist; make that directory, or give another "
        "--out"));
  }
  if (fs::exists(corpus_dir, ec) && !fs::is_directory(corpus_dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--out ", corpus_dir,
        " exists and is not a directory; give a new directory or an "
        "existing corpus's"));
  }
  absl::StatusOr<Manifest> existing = ReadManifest(corpus_dir);
  if (absl::IsNotFound(existing.status())) {
    // A directory of other files (a source tree given as --out by mistake)
    // got manifest.json and modules/ added among them without a word.
    // (Hidden entries and modules/ are a build's own that stopped before
    // its first manifest, e.g. fetch-debian's .sources/.)
    if (fs::is_directory(corpus_dir, ec)) {
      for (const fs::directory_entry& entry :
           fs::directory_iterator(corpus_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name[0] == '.' || name == "modules") continue;
        return absl::InvalidArgumentError(absl::StrCat(
            "--out ", corpus_dir, " holds other files (", name,
            ") and is no corpus (no manifest.json): give a new or empty "
            "directory, or an existing corpus to add to"));
      }
    }
    Manifest empty;
    empty.convention = ir::ConventionName(settings.convention);
    empty.opt_level = OptLevelLabel(settings);
    return empty;
  }
  if (!existing.ok()) return existing.status();
  const std::string convention = ir::ConventionName(settings.convention);
  const std::string level = OptLevelLabel(settings);
  if (existing->convention != convention || existing->opt_level != level) {
    return absl::InvalidArgumentError(absl::StrCat(
        "corpus '", corpus_dir, "' holds ", existing->convention, " -",
        existing->opt_level, " modules, not ", convention, " -", level,
        "; use another --out directory or the same --objective/--convention"));
  }
  return existing;
}

absl::Status CommitCorpus(const std::string& corpus_dir, Manifest& base,
                          const Manifest& update,
                          const std::set<std::string>& rebuilt_origins) {
  for (const std::string& orphan :
       MergeManifest(base, update, rebuilt_origins)) {
    std::error_code ec;
    fs::remove(fs::path(corpus_dir) / orphan, ec);
  }
  return WriteManifest(corpus_dir, base);
}

CorpusTotals Totals(const Manifest& manifest) {
  CorpusTotals t;
  t.modules = static_cast<int64_t>(manifest.modules.size());
  t.skipped = static_cast<int64_t>(manifest.skipped.size());
  for (const v1::ModuleRecord& r : manifest.modules) {
    t.ir_count_o0 += r.ir_count_o0();
    t.ir_count_o3 += r.ir_count_o3();
    t.ir_count_oz += r.ir_count_oz();
  }
  return t;
}

}  // namespace phaseloop::corpus
