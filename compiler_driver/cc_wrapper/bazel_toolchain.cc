#include "compiler_driver/cc_wrapper/bazel_toolchain.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files/atomic_file.h"
#include "common/files/user_dirs.h"
#include "common/process/shell_quote.h"
#include "common/signing/signature.h"
#include "common/signing/trust_file.h"
#include "compiler_driver/cc_wrapper/bazel_toolchain_files.h"
#include "compiler_driver/passes/pipeline_check.h"

namespace phaseloop::cc_wrapper {
namespace {

namespace fs = std::filesystem;

// `path` with its directory resolved (/bin/clang-16 -> /usr/bin/clang-16)
// and its name kept: clang derives its include paths from the path it is run
// by, and a symlinked name (clang-16 -> clang) must stay what it is.
std::string WithCanonicalDir(const fs::path& path) {
  std::error_code error;
  fs::path dir = fs::canonical(fs::absolute(path).parent_path(), error);
  return error ? fs::absolute(path).string() : (dir / path.filename()).string();
}

// `name` itself if it contains a slash, else its first hit on PATH, with a
// canonical directory; "" if none is executable.
std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    return access(name.c_str(), X_OK) == 0 ? WithCanonicalDir(name) : "";
  }
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(
           path != nullptr ? path : "/usr/bin:/bin", ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0)
      return WithCanonicalDir(candidate);
  }
  return "";
}

// The first of `names` found on PATH; else /usr/bin/<first name> (Bazel needs
// a path for every tool, and most builds never run strip or objcopy).
std::string FindTool(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (std::string found = FindProgram(name); !found.empty()) return found;
  }
  return "/usr/bin/" + names.front();
}

// A value as a .bazelrc line needs it: Bazel splits rc lines into words as
// a shell does, so a path with a space (`--out "my tools/pl"`) printed bare
// made the pasted line name another package.
std::string RcWord(const std::string& value) {
  if (value.find_first_of(" \t\"'\\") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     const char* what) {
  if (std::error_code error; fs::is_directory(path, error)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " '", path, "' is a directory; give a file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", what, " '", path, "'; check the path"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Temp file + rename: the file is either old or new, never half-written.
absl::Status WriteFileAtomically(const fs::path& path,
                                 const std::string& content, fs::perms perms) {
  absl::Status written = files::WriteFileAtomically(path.string(), content,
                                                    static_cast<mode_t>(perms));
  if (!written.ok()) {
    return absl::PermissionDeniedError(
        absl::StrCat(written.message(), "; check that --out is writable"));
  }
  return absl::OkStatus();
}

// The nearest ancestor of `dir` (itself included) holding a WORKSPACE file.
absl::StatusOr<fs::path> FindWorkspaceRoot(const fs::path& dir) {
  for (fs::path p = dir; !p.empty(); p = p.parent_path()) {
    if (fs::exists(p / "WORKSPACE") || fs::exists(p / "WORKSPACE.bazel"))
      return p;
    if (p == p.root_path()) break;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "--out '", dir.string(),
      "' is not inside a Bazel workspace (no WORKSPACE file in it or above "
      "it); pass a directory of your workspace, e.g. --out tools/phaseloop"));
}

// Refuses to overwrite a BUILD file the user wrote.
absl::Status CheckBuildFileIsOurs(const fs::path& package_dir) {
  for (const char* name : {"BUILD.bazel", "BUILD"}) {
    fs::path build = package_dir / name;
    if (!fs::exists(build)) continue;
    std::ifstream in(build);
    std::string first_line;
    std::getline(in, first_line);
    if (std::string(name) == "BUILD.bazel" ||
        !absl::StartsWith(first_line, kGeneratedMarker)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", build.string(),
          "' exists and was not written by `phaseloop toolchain bazel`; pass "
          "--out a new directory (e.g. tools/phaseloop) or remove that file"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CheckedCc(const std::string& cc) {
  if (cc.empty())
    return absl::InvalidArgumentError("no phaseloop-cc given; pass --cc PATH");
  if (access(cc.c_str(), X_OK) != 0 || fs::is_directory(cc)) {
    return absl::NotFoundError(
        absl::StrCat("phaseloop-cc '", cc,
                     "' is not an executable file; pass --cc with the "
                     "path of phaseloop-cc "
                     "(bazel-bin/compiler_driver/cc_wrapper/phaseloop-cc)"));
  }
  // The `phaseloop` command itself passed this check, and every compile
  // then failed on its unknown --phaseloop-policy option; phaseloop-c++
  // would compile C files as C++. A link named otherwise is fine.
  // (The launcher is C++ when the name it is run by ends in "++".)
  const std::string given = fs::path(cc).filename().string();
  if ((given != "phaseloop-cc" &&
       fs::weakly_canonical(cc).filename() != "phaseloop-cc") ||
      absl::EndsWith(given, "++")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cc '", cc,
                     "' is not phaseloop-cc; pass the compiler wrapper "
                     "(bazel-bin/compiler_driver/cc_wrapper/phaseloop-cc, or "
                     "PREFIX/bin/phaseloop-cc after tools/install.sh)"));
  }
  // The wrapper finds its optimizer next to its resolved executable.
  fs::path opt = fs::weakly_canonical(cc).parent_path() / "phaseloop-cc-opt";
  if (access(opt.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(
        "'", opt.string(),
        "' is missing: phaseloop-cc needs phaseloop-cc-opt in "
        "its directory; build //compiler_driver/cc_wrapper:phaseloop-cc (it "
        "brings both) or copy both files together"));
  }
  return fs::absolute(cc).lexically_normal().string();
}

// The spec line of a --policy file, checked here so a typo fails the
// generator, not every compile (each failed open to plain clang without a
// word on the console): baseline, fixed:<pipeline>, or artifact:<file> in
// the package (Bazel neither tracks nor ships to remote executors a file
// outside it: a fixed artifact left plain-clang objects in place).
absl::Status CheckPackagePolicySpec(absl::string_view spec,
                                    const std::string& policy_file,
                                    const fs::path& package) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--policy file '", policy_file, "': '", spec, "' ", why));
  };
  if (spec == "baseline") return absl::OkStatus();
  if (absl::StartsWith(spec, "fixed:")) {
    if (spec.size() == 6) {
      return bad("names no pipeline; write e.g. fixed:default<Oz>");
    }
    // A misspelled pass (defualt<Oz>) failed every compile open.
    // Trimmed as the wrapper trims it (`fixed: default<Oz>` runs).
    if (absl::Status allowed = passes::CheckWholePolicyPipeline(
            absl::StripAsciiWhitespace(spec.substr(6)));
        !allowed.ok()) {
      return bad(absl::StrCat("cannot run: ", allowed.message()));
    }
    return absl::OkStatus();
  }
  if (absl::ConsumePrefix(&spec, "artifact:")) {
    const fs::path file(std::string(spec.substr(0, spec.find('?'))));
    bool escapes = file.empty() || file.is_absolute();
    for (const fs::path& part : file) escapes = escapes || part == "..";
    if (escapes) {
      return bad(
          "names an artifact outside the toolchain package, which Bazel "
          "neither tracks as an input nor ships to remote executors; pass "
          "the artifact with --artifact FILE instead (it is copied into the "
          "package)");
    }
    if (!fs::is_regular_file(package / file)) {
      return bad(absl::StrCat(
          "names ", (package / file).string(),
          ", which is not in the package; pass the artifact with --artifact "
          "FILE (copied beside the policy)"));
    }
    return absl::OkStatus();
  }
  return bad(
      "is not a policy the toolchain can run; write baseline, "
      "fixed:<pipeline> or artifact:<file in the package> (or pass a learned "
      "artifact with --artifact FILE)");
}

absl::StatusOr<std::string> PolicyContent(const BazelToolchainOptions& options,
                                          const fs::path& existing) {
  if (options.policy_file.empty()) {
    if (fs::exists(existing)) return ReadFile(existing.string(), "policy file");
    return std::string(kDefaultPolicy);
  }
  absl::StatusOr<std::string> text =
      ReadFile(options.policy_file, "--policy file");
  if (!text.ok()) return text.status();
  // A table or an artifact given as the policy file runs as it is.
  if (absl::StartsWith(*text, "# phaseloop policy table") ||
      absl::StartsWith(*text, "phaseloop-policy\n")) {
    return text;
  }
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    if (absl::Status spec = CheckPackagePolicySpec(line, options.policy_file,
                                                   existing.parent_path());
        !spec.ok()) {
      return spec;
    }
    return text;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--policy file '", options.policy_file,
                   "' has no spec line; write one such as `baseline` or "
                   "`fixed:default<Oz>`"));
}

// `requested`, else `default_name` under the user's cache directory
// ($XDG_CACHE_HOME/phaseloop, else ~/.cache/phaseloop, else under the
// password file's home), else `fallback` (empty: an error); created and made
// absolute. `flag` names the option in errors.
absl::StatusOr<std::string> CacheDirectory(const BazelToolchainOptions& options,
                                           const std::string& requested,
                                           const std::string& default_name,
                                           const std::string& flag,
                                           const std::string& what,
                                           const std::string& fallback = "") {
  std::string dir = requested;
  if (dir.empty()) {
    dir = files::UserCacheDir(default_name, options.environment,
                              options.passwd_home);
  }
  if (dir.empty()) dir = fallback;
  if (dir.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "neither XDG_CACHE_HOME nor HOME is set; pass ", flag, " DIR"));
  }
  fs::path path = fs::absolute(dir).lexically_normal();
  std::error_code error;
  fs::create_directories(path, error);
  if (error || !fs::is_directory(path)) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create the ", what, " directory '", path.string(),
                     "'; pass ", flag, " with a writable directory"));
  }
  return path.string();
}

// Whether `dir` (absolute, normal) is not the `default_name` directory
// phaseloop-cc finds itself in a Bazel action, which has no environment:
// cc_wrapper.sh must then name it.
bool NeedsNaming(const BazelToolchainOptions& options, const std::string& dir,
                 const std::string& default_name) {
  const std::string in_action = files::UserCacheDir(
      default_name, files::FixedEnvironment({}), options.passwd_home);
  return in_action.empty() ||
         fs::path(in_action).lexically_normal().string() != dir;
}

// The paths among `paths` under the user's home (HOME or the password
// file's).
std::vector<std::string> UnderHome(const BazelToolchainOptions& options,
                                   const std::vector<std::string>& paths) {
  std::vector<std::string> homes = {options.passwd_home};
  if (std::optional<std::string> home = options.environment("HOME")) {
    homes.push_back(*home);
  }
  std::vector<std::string> found;
  for (const std::string& path : paths) {
    for (std::string home : homes) {
      if (home.empty() || home == "/") continue;
      home = fs::path(home).lexically_normal().string();
      if (home.back() != '/') home += '/';
      if (absl::StartsWith(path, home)) {
        found.push_back(path);
        break;
      }
    }
  }
  return found;
}

// Builtin include directories, as clang reports them and resolved: Bazel
// checks every header a compile used (.d file) against this list.
absl::StatusOr<std::vector<std::string>> BuiltinIncludeDirs(
    const std::string& clang) {
  std::vector<std::string> dirs;
  for (const char* lang : {"c", "c++"}) {
    // With and without -no-canonical-prefixes (one of the compile flags):
    // clang's resource directory differs.
    for (const char* prefixes : {"", " -no-canonical-prefixes"}) {
      std::string command =
          absl::StrCat(process::ShellQuote(clang), prefixes, " -E -x ", lang,
                       " - -v </dev/null 2>&1");
      FILE* pipe = popen(command.c_str(), "r");
      if (pipe == nullptr)
        return absl::InternalError("popen failed for " + command);
      std::string output;
      char buffer[4096];
      while (size_t n = fread(buffer, 1, sizeof(buffer), pipe))
        output.append(buffer, n);
      std::vector<std::string> found = ParseIncludeSearchList(output);
      if (pclose(pipe) != 0 || found.empty()) {
        return absl::FailedPreconditionError(
            absl::StrCat("`", command,
                         "` did not list include directories; is clang-16 "
                         "installed (tools/setup.sh)?\n",
                         output));
      }
      for (const std::string& dir : found) {
        std::error_code error;
        for (const std::string& d :
             {dir, fs::weakly_canonical(dir, error).string()}) {
          if (!d.empty() &&
              std::find(dirs.begin(), dirs.end(), d) == dirs.end()) {
            dirs.push_back(d);
          }
        }
      }
    }
  }
  return dirs;
}

// FNV-1a (64 bit) of the files' bytes: a change detector, not a checksum.
absl::StatusOr<std::string> Fingerprint(const std::vector<fs::path>& files) {
  uint64_t hash = 14695981039346656037ull;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    char buffer[1 << 16];
    while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
      for (std::streamsize i = 0; i < in.gcount(); ++i) {
        hash =
            (hash ^ static_cast<unsigned char>(buffer[i])) * 1099511628211ull;
      }
    }
    if (!in.eof()) {
      return absl::NotFoundError(
          absl::StrCat("cannot read '", file.string(), "'"));
    }
  }
  return absl::StrFormat("%016x", hash);
}

// Bazel's tools besides the compiler: LLVM 16's where installed (lld-16 and
// llvm-16 come with tools/setup.sh), else binutils'.
std::vector<std::pair<std::string, std::string>> ToolPaths() {
  return {
      {"ar", FindTool({"llvm-ar-16", "ar"})},
      {"cpp", FindTool({"clang-cpp-16", "cpp"})},
      {"dwp", FindTool({"llvm-dwp-16", "dwp"})},
      {"gcov", FindTool({"llvm-cov-16", "gcov"})},
      {"ld", FindTool({"ld.lld-16", "ld"})},
      {"llvm-cov", FindTool({"llvm-cov-16", "llvm-cov"})},
      {"nm", FindTool({"llvm-nm-16", "nm"})},
      {"objcopy", FindTool({"llvm-objcopy-16", "objcopy"})},
      {"objdump", FindTool({"llvm-objdump-16", "objdump"})},
      {"strip", FindTool({"llvm-strip-16", "strip"})},
  };
}

}  // namespace

std::vector<std::string> ParseIncludeSearchList(const std::string& output) {
  std::vector<std::string> dirs;
  bool inside = false;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (absl::StartsWith(line, "#include <...> search starts here:")) {
      inside = true;
    } else if (absl::StartsWith(line, "End of search list.")) {
      inside = false;
    } else if (inside) {
      line = absl::StripAsciiWhitespace(line);
      absl::ConsumeSuffix(&line, " (framework directory)");
      if (line.empty()) continue;
      std::string dir = fs::path(std::string(line)).lexically_normal().string();
      if (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      dirs.push_back(dir);
    }
  }
  return dirs;
}

absl::StatusOr<BazelToolchain> WriteBazelToolchain(
    const BazelToolchainOptions& options) {
  if (options.out_dir.empty()) {
    return absl::InvalidArgumentError(
        "no --out given; pass the package directory to "
        "write, e.g. --out tools/phaseloop");
  }
  const fs::path out = fs::absolute(options.out_dir).lexically_normal();
  if (fs::exists(out) && !fs::is_directory(out)) {
    return absl::FailedPreconditionError(
        absl::StrCat("--out '", out.string(),
                     "' exists and is not a directory; pass a directory"));
  }
  absl::StatusOr<fs::path> root = FindWorkspaceRoot(out);
  if (!root.ok()) return root.status();
  if (absl::Status s = CheckBuildFileIsOurs(out); !s.ok()) return s;
  absl::StatusOr<std::string> cc = CheckedCc(options.cc);
  if (!cc.ok()) return cc.status();
  // phaseloop-cc will run this clang-16 (cc_wrapper.sh puts its directory
  // first on PATH), so its include directories are the ones BUILD lists.
  const std::string clang = FindProgram(options.clang);
  if (clang.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", options.clang,
                     "' is not on PATH; install clang-16 (tools/setup.sh)"));
  }
  absl::StatusOr<std::string> policy = PolicyContent(options, out / "policy");
  if (!policy.ok()) return policy.status();
  std::optional<std::string> artifact;
  std::optional<std::string> artifact_signature;
  if (options.policy_file.empty() && !options.artifact_file.empty()) {
    absl::StatusOr<std::string> bytes =
        ReadFile(options.artifact_file, "policy artifact");
    if (!bytes.ok()) return bytes.status();
    artifact = *std::move(bytes);
    policy = ArtifactPolicyFile();
    // Its signature travels with it when there is one.
    const std::string signature_path =
        signing::SignaturePathFor(options.artifact_file);
    if (fs::exists(signature_path)) {
      absl::StatusOr<std::string> signature =
          ReadFile(signature_path, "policy artifact signature");
      if (!signature.ok()) return signature.status();
      artifact_signature = *std::move(signature);
    }
  }
  std::optional<std::string> trust;
  if (!options.trust_file.empty()) {
    absl::StatusOr<std::string> text =
        ReadFile(options.trust_file, "trust file");
    if (!text.ok()) return text.status();
    // Checked here, so a typo fails the generator instead of every compile.
    absl::StatusOr<signing::TrustedKeys> parsed =
        signing::TrustedKeys::Parse(*text, options.trust_file);
    if (!parsed.ok()) return parsed.status();
    trust = *std::move(text);
  }
  const bool has_trust = trust.has_value() || fs::exists(out / kTrustFileName);
  absl::StatusOr<std::string> spool =
      CacheDirectory(options, options.spool_dir, "spool", "--spool", "spool");
  if (!spool.ok()) return spool.status();
  absl::StatusOr<std::string> outcomes = std::string();
  if (options.outcome_cache_dir != "off") {
    // With no user cache directory (a service's clean environment): beside
    // the spool.
    outcomes =
        CacheDirectory(options, options.outcome_cache_dir, "outcomes",
                       "--outcome-cache", "outcome cache",
                       (fs::path(*spool).parent_path() / "outcomes").string());
    if (!outcomes.ok()) return outcomes.status();
  }
  const fs::path cc_dir = fs::weakly_canonical(*cc).parent_path();
  absl::StatusOr<std::string> fingerprint =
      Fingerprint({fs::weakly_canonical(*cc), cc_dir / "phaseloop-cc-opt"});
  if (!fingerprint.ok()) return fingerprint.status();
  absl::StatusOr<std::vector<std::string>> include_dirs =
      BuiltinIncludeDirs(clang);
  if (!include_dirs.ok()) return include_dirs.status();

  BuildFileSettings build;
  build.package = out.lexically_relative(*root).string();
  if (build.package == ".") build.package.clear();
  build.include_dirs = *include_dirs;
  build.tool_paths = ToolPaths();
  build.use_lld = !FindProgram("ld.lld-16").empty();
  CcWrapperSettings wrapper{*cc, *fingerprint, clang};
  const bool spool_in_script = NeedsNaming(options, *spool, "spool");
  if (spool_in_script) wrapper.spool_dir = *spool;
  const bool outcomes_in_script =
      outcomes->empty() || NeedsNaming(options, *outcomes, "outcomes");
  if (outcomes_in_script)
    wrapper.outcome_cache_dir = outcomes->empty() ? "off" : *outcomes;
  if (has_trust) {
    wrapper.trust_file = absl::StrCat(
        build.package.empty() ? "" : build.package + "/", kTrustFileName);
  }

  std::error_code error;
  fs::create_directories(out, error);
  if (error) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot create --out '", out.string(), "': ", error.message()));
  }
  const fs::perms file = fs::perms::owner_read | fs::perms::owner_write |
                         fs::perms::group_read | fs::perms::others_read;
  const fs::perms script = file | fs::perms::owner_exec |
                           fs::perms::group_exec | fs::perms::others_exec;
  if (trust) {  // before the script that names it
    if (absl::Status s =
            WriteFileAtomically(out / kTrustFileName, *trust, file);
        !s.ok()) {
      return s;
    }
  }
  if (artifact) {  // before the policy file that names it
    // The signature first, and a stale one removed: the new artifact never
    // sits beside the old one's signature.
    if (artifact_signature) {
      if (absl::Status s = WriteFileAtomically(out / kArtifactSignatureFileName,
                                               *artifact_signature, file);
          !s.ok()) {
        return s;
      }
    } else {
      fs::remove(out / kArtifactSignatureFileName, error);
      if (error) {
        return absl::PermissionDeniedError(
            absl::StrCat("cannot remove the stale signature ",
                         (out / kArtifactSignatureFileName).string(), ": ",
                         error.message()));
      }
    }
    if (absl::Status s =
            WriteFileAtomically(out / kArtifactPolicyFileName, *artifact, file);
        !s.ok()) {
      return s;
    }
  }
  // BUILD last: a package with a BUILD file is complete.
  for (const auto& [name, content, perms] :
       {std::tuple<const char*, std::string, fs::perms>{"policy", *policy,
                                                        file},
        {"cc_wrapper.sh", RenderCcWrapper(wrapper), script},
        {"BUILD", RenderBuildFile(build), file}}) {
    if (absl::Status s = WriteFileAtomically(out / name, content, perms);
        !s.ok()) {
      return s;
    }
  }

  BazelToolchain result;
  result.package = build.package;
  result.crosstool_top = absl::StrCat("//", build.package, ":toolchain");
  result.policy_path = (out / "policy").string();
  result.spool_dir = *spool;
  result.outcome_cache_dir = *outcomes;
  result.spool_in_script = spool_in_script;
  result.outcome_cache_in_script = outcomes_in_script;
  result.per_user_paths =
      UnderHome(options, {wrapper.phaseloop_cc, wrapper.clang,
                          wrapper.spool_dir, wrapper.outcome_cache_dir});
  // A directory named because the user's environment moved it (an
  // XDG_CACHE_HOME outside the home) is theirs too; one given by flag may
  // be shared on purpose.
  for (const auto& [given, named] :
       {std::pair{options.spool_dir, wrapper.spool_dir},
        std::pair{options.outcome_cache_dir, wrapper.outcome_cache_dir}}) {
    if (given.empty() && !named.empty() && named != "off" &&
        std::find(result.per_user_paths.begin(), result.per_user_paths.end(),
                  named) == result.per_user_paths.end()) {
      result.per_user_paths.push_back(named);
    }
  }
  if (has_trust) result.trust_path = (out / kTrustFileName).string();
  result.artifact_signed = artifact_signature.has_value();
  result.bazelrc_lines = {
      absl::StrCat("build --crosstool_top=", RcWord(result.crosstool_top)),
      "build --host_crosstool_top=@bazel_tools//tools/cpp:toolchain",
      absl::StrCat("build --sandbox_writable_path=", RcWord(*spool)),
  };
  if (!outcomes->empty()) {
    result.bazelrc_lines.push_back(
        absl::StrCat("build --sandbox_writable_path=", RcWord(*outcomes)));
  }
  return result;
}

}  // namespace phaseloop::cc_wrapper
