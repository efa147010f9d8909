#include "staging_harness/corpus/program_discovery.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/protobuf/utf8_text.h"
#include "compiler_driver/ir/module_loader.h"

namespace phaseloop::corpus {
namespace {

namespace fs = std::filesystem;

// Directory names whose sources are not the program itself.
const std::set<std::string>& ExcludedDirs() {
  static const auto* dirs = new std::set<std::string>{"test",
                                                      "tests",
                                                      "testsuite",
                                                      "testing",
                                                      "t",
                                                      "unittest",
                                                      "unittests",
                                                      "regress",
                                                      "example",
                                                      "examples",
                                                      "demo",
                                                      "demos",
                                                      "sample",
                                                      "samples",
                                                      "doc",
                                                      "docs",
                                                      "documentation",
                                                      "bench",
                                                      "benchmark",
                                                      "benchmarks",
                                                      "perf",
                                                      "fuzz",
                                                      "fuzzer",
                                                      "fuzzing",
                                                      "ossfuzz",
                                                      "oss-fuzz",
                                                      "debian",
                                                      "win32",
                                                      "win64",
                                                      "windows",
                                                      "msvc",
                                                      "vstudio",
                                                      "visualc",
                                                      "msdos",
                                                      "dos",
                                                      "os2",
                                                      "vms",
                                                      "amiga",
                                                      "amigaos",
                                                      "beos",
                                                      "riscos",
                                                      "wince",
                                                      "macos",
                                                      "macosx",
                                                      "mac",
                                                      "qnx",
                                                      "nt",
                                                      "djgpp",
                                                      "watcom",
                                                      "contrib",
                                                      "build",
                                                      "cmake",
                                                      "m4",
                                                      "po",
                                                      "autom4te.cache"};
  return *dirs;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Basenames of .c files that some source in `sources` #includes.
std::set<std::string> IncludedCFiles(const std::vector<std::string>& sources) {
  static const std::regex kInclude(R"(#\s*include\s*["<]([^">]+\.c)[">])");
  std::set<std::string> included;
  for (const std::string& source : sources) {
    absl::StatusOr<std::string> text = ir::ReadFile(source);
    if (!text.ok()) continue;
    for (std::sregex_iterator it(text->begin(), text->end(), kInclude), end;
         it != end; ++it) {
      included.insert(fs::path((*it)[1].str()).filename().string());
    }
  }
  return included;
}

// True when `dir` holds a `.c` file at any depth.
bool HoldsCSources(const fs::path& dir) {
  std::error_code ec;
  auto it = fs::recursive_directory_iterator(
      dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (EndsWith(it->path().filename().string(), ".c") &&
        it->is_regular_file(ec)) {
      return true;
    }
  }
  return false;
}

// Why discovery does not descend into directory `name`, or "" when it does.
std::string ExcludedDirReason(const std::string& name, bool symlink) {
  if (name[0] == '.') return "hidden directory (e.g. quilt's .pc copies)";
  if (symlink) return "symbolic link to a directory (not followed)";
  if (ExcludedDirs().count(Lower(name))) {
    return "directory named for tests, examples, docs, benchmarks, fuzzers, "
           "packaging or another platform";
  }
  return "";
}

// The directory flags of `dir`: every phaseloop-cflags from `base` down to
// `dir`, root first. `cache` keeps each directory's parsed file.
absl::StatusOr<std::vector<std::string>> DirectoryCflags(
    const fs::path& base, const fs::path& dir,
    std::map<std::string, std::vector<std::string>>& cache) {
  std::vector<fs::path> chain;
  for (fs::path p = dir;; p = p.parent_path()) {
    chain.push_back(p);
    if (p == base || p == p.parent_path()) break;
  }
  std::vector<std::string> flags;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    auto cached = cache.find(it->string());
    if (cached == cache.end()) {
      std::vector<std::string> parsed;
      const fs::path file = *it / kCflagsFileName;
      std::error_code ec;
      if (fs::exists(file, ec)) {
        absl::StatusOr<std::string> text = ir::ReadFile(file.string());
        if (!text.ok()) return text.status();
        absl::StatusOr<std::vector<std::string>> got =
            ParseCflagsFile(*text, file.string());
        if (!got.ok()) return got.status();
        parsed = *std::move(got);
      }
      cached = cache.emplace(it->string(), std::move(parsed)).first;
    }
    flags.insert(flags.end(), cached->second.begin(), cached->second.end());
  }
  return flags;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseCflagsFile(
    const std::string& text, const std::string& path) {
  // Flags that would change what the frontend writes, or where.
  static const std::set<std::string> kRefused = {
      "-o",  "-c",  "-S",  "-E",         "-M",          "-MM",  "-MD", "-MMD",
      "-MF", "-MT", "-MQ", "-emit-llvm", "-save-temps", "-###", "-v"};
  std::vector<std::string> flags;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const std::string content(line.substr(0, line.find('#')));
    for (absl::string_view word :
         absl::StrSplit(content, absl::ByAnyChar(" \t\r"), absl::SkipEmpty())) {
      const std::string flag(word);
      const bool refused = kRefused.count(flag) > 0 ||
                           flag.rfind("-o", 0) == 0 ||
                           flag.rfind("-save-temps", 0) == 0;
      if (flag[0] != '-' || refused) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ":", line_number, ": '", flag, "' ",
            flag[0] != '-' ? "is not a flag (each starts with '-'; `#` starts "
                             "a comment)"
                           : "changes the frontend's output and is not "
                             "allowed; give defines, include paths and "
                             "language flags (-D, -U, -I, -std=, -f...)"));
      }
      flags.push_back(flag);
    }
  }
  return flags;
}

bool IsTestFileStem(const std::string& stem) {
  const std::string s = Lower(stem);
  return s.rfind("test", 0) == 0 || EndsWith(s, "test") || EndsWith(s, "tests");
}

absl::StatusOr<Discovery> DiscoverSourceGroups(
    const std::string& root, const std::string& root_name,
    const DiscoveryOptions& options) {
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::absolute(root, ec), ec);
  if (!fs::is_directory(base, ec)) {
    return absl::NotFoundError(absl::StrCat(
        "source directory '", root, "' does not exist or is not a directory"));
  }
  Discovery found;
  std::map<std::string, std::vector<std::string>> by_dir;
  std::vector<std::string> extra_includes;
  std::set<std::string> header_dirs;
  auto it = fs::recursive_directory_iterator(
      base, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (it->is_directory(ec)) {
      const std::string reason = ExcludedDirReason(name, it->is_symlink(ec));
      if (!reason.empty()) {
        it.disable_recursion_pending();
        if (HoldsCSources(path)) {
          found.left_out.push_back({path.string(), "directory", reason});
        }
        continue;
      }
      const std::string lower = Lower(name);
      if (it.depth() <= 1 &&
          (lower == "include" || lower == "headers" || lower == "lib")) {
        extra_includes.push_back(path.string());
      }
      continue;
    }
    if (EndsWith(name, ".h")) header_dirs.insert(path.parent_path().string());
    // C++ sources are not built (the corpus is of C programs): said, not
    // dropped without a word.
    if ((EndsWith(name, ".cc") || EndsWith(name, ".cpp") ||
         EndsWith(name, ".cxx") || EndsWith(name, ".C")) &&
        it->is_regular_file(ec)) {
      found.left_out.push_back(
          {path.string(), "source",
           "C++: corpus build builds C programs (phaseloop-c++ optimises "
           "C++ in your own build)"});
      continue;
    }
    if (!EndsWith(name, ".c") || !it->is_regular_file(ec)) continue;
    // A module's name is its path, and the manifest is JSON: a path that is
    // not UTF-8 (a file named in Latin-1) would be stored as another name,
    // and a rebuild would list the module twice.
    if (!protobuf::IsValidUtf8(path.lexically_relative(base).string())) {
      found.left_out.push_back(
          {path.string(), "source",
           "its path is not UTF-8, and the manifest (JSON) names modules by "
           "path: rename it to build it"});
      continue;
    }
    if (!options.keep_test_sources && IsTestFileStem(path.stem().string())) {
      found.left_out.push_back(
          {path.string(), "source",
           "named like a test (--keep-test-sources keeps it)"});
      continue;
    }
    by_dir[path.parent_path().string()].push_back(path.string());
  }
  std::sort(extra_includes.begin(), extra_includes.end());

  std::map<std::string, std::vector<std::string>> cflags_cache;
  for (auto& [dir, sources] : by_dir) {
    std::sort(sources.begin(), sources.end());
    const std::set<std::string> included = IncludedCFiles(sources);
    SourceGroup group;
    group.dir = dir;
    for (const std::string& s : sources) {
      if (!included.count(fs::path(s).filename().string())) {
        group.sources.push_back(s);
      } else {
        found.left_out.push_back(
            {s, "source",
             "#included by another source of its directory (part of that "
             "translation unit)"});
      }
    }
    if (group.sources.empty()) continue;
    absl::StatusOr<std::vector<std::string>> cflags =
        DirectoryCflags(base, dir, cflags_cache);
    if (!cflags.ok()) return cflags.status();
    group.directory_cflags = *std::move(cflags);
    const fs::path rel = fs::path(dir).lexically_relative(base);
    group.name =
        rel == "." ? root_name : absl::StrCat(root_name, "/", rel.string());
    std::string config_h;
    for (fs::path p = dir;; p = p.parent_path()) {
      group.frontend_args.push_back(absl::StrCat("-I", p.string()));
      if (config_h.empty() && fs::is_regular_file(p / "config.h", ec)) {
        config_h = (p / "config.h").string();
      }
      if (p == base || p == p.parent_path()) break;
    }
    for (const std::string& inc : extra_includes) {
      group.frontend_args.push_back(absl::StrCat("-I", inc));
    }
    // Project headers elsewhere in the tree, for `#include "..."` only, so
    // that they never shadow a system header; -iquote is searched before -I,
    // so the directory and its parents go first again.
    for (fs::path p = dir;; p = p.parent_path()) {
      group.frontend_args.insert(group.frontend_args.end(),
                                 {"-iquote", p.string()});
      if (p == base || p == p.parent_path()) break;
    }
    // Nearest first (steps up plus steps down the tree), as a Makefile lists
    // the sibling directories a source needs.
    std::vector<std::pair<int, std::string>> nearest;
    for (const std::string& inc : header_dirs) {
      const fs::path rel = fs::path(inc).lexically_relative(dir);
      int steps = 0;
      for (const fs::path& part : rel) steps += part != "." ? 1 : 0;
      nearest.emplace_back(steps, inc);
    }
    std::sort(nearest.begin(), nearest.end());
    for (const auto& [steps, inc] : nearest) {
      group.frontend_args.insert(group.frontend_args.end(), {"-iquote", inc});
    }
    if (!config_h.empty()) {
      group.frontend_args.insert(group.frontend_args.end(),
                                 {"-DHAVE_CONFIG_H", "-include", config_h});
    }
    found.groups.push_back(std::move(group));
  }
  std::sort(found.left_out.begin(), found.left_out.end(),
            [](const LeftOutPath& a, const LeftOutPath& b) {
              return a.path < b.path;
            });
  return found;
}

}  // namespace phaseloop::corpus
