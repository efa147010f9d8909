#include "compiler_driver/ir/module_loader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace phaseloop::ir {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A temporary file removed when this object dies.
class TempFile {
 public:
  explicit TempFile(std::string_view suffix) {
    llvm::SmallString<128> path;
    if (!llvm::sys::fs::createTemporaryFile("phaseloop", suffix, path)) {
      path_ = std::string(path);
    }
  }
  ~TempFile() {
    if (!path_.empty()) llvm::sys::fs::remove(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

const char* ConventionName(ModuleConvention convention) {
  return convention == ModuleConvention::kRealBuild ? "real-build" : "research";
}

bool IsSourcePath(const std::string& path) {
  for (std::string_view ext : {".c", ".cc", ".cpp", ".cxx", ".C", ".c++"}) {
    if (EndsWith(path, ext)) return true;
  }
  return false;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  // open() would stop at a NUL and read another file (policy_file_fuzzer:
  // "artifact:\0\0/x" in a policy file read the policy's directory).
  if (path.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read '", absl::CHexEscape(path),
                     "': a file path cannot hold a NUL byte"));
  }
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot read '", path, "': it is a directory, not a file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read '", path,
                                            "': no such file or not readable; "
                                            "check the path"));
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

absl::StatusOr<std::string> CompileToBitcode(const std::string& source_path,
                                             const FrontendOptions& options) {
  if (!llvm::sys::fs::exists(source_path)) {
    return absl::NotFoundError(absl::StrCat(
        "source '", source_path, "' does not exist; check the path"));
  }
  llvm::ErrorOr<std::string> clang =
      llvm::sys::findProgramByName(options.clang);
  if (!clang) {
    return absl::FailedPreconditionError(absl::StrCat(
        "compiler '", options.clang,
        "' not found on PATH; run tools/setup.sh to install clang-16"));
  }
  TempFile output(".bc");
  TempFile diagnostics(".txt");
  if (output.path().empty() || diagnostics.path().empty()) {
    return absl::InternalError("cannot create a temporary file in $TMPDIR");
  }
  std::vector<std::string> args = {*clang, "-c", "-emit-llvm"};
  if (options.convention == ModuleConvention::kResearch) {
    args.insert(args.end(), {"-O0", "-Xclang", "-disable-O0-optnone"});
  } else {
    args.insert(args.end(), {absl::StrCat("-", OptLevelName(options.opt_level)),
                             "-Xclang", "-disable-llvm-passes"});
  }
  args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
  args.insert(args.end(), {source_path, "-o", output.path()});
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(diagnostics.path()),
      llvm::StringRef(diagnostics.path())};
  std::optional<llvm::ArrayRef<llvm::StringRef>> env;
  std::vector<std::string> env_strings;
  std::vector<llvm::StringRef> env_refs;
  if (!options.source_date_epoch.empty()) {
    for (char** e = environ; *e != nullptr; ++e) {
      if (!absl::StartsWith(*e, "SOURCE_DATE_EPOCH="))
        env_strings.push_back(*e);
    }
    env_strings.push_back(
        absl::StrCat("SOURCE_DATE_EPOCH=", options.source_date_epoch));
    env_refs.assign(env_strings.begin(), env_strings.end());
    env = env_refs;
  }
  std::string exec_error;
  int rc = llvm::sys::ExecuteAndWait(*clang, argv, env, redirects,
                                     /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                     &exec_error);
  if (rc != 0) {
    absl::StatusOr<std::string> diag = ReadFile(diagnostics.path());
    return absl::InvalidArgumentError(
        absl::StrCat("clang-16 could not compile '", source_path, "' (exit ",
                     rc, ")", exec_error.empty() ? "" : ": ", exec_error, "\n",
                     diag.ok() ? *diag : std::string()));
  }
  return ReadFile(output.path());
}

absl::StatusOr<std::unique_ptr<llvm::Module>> ParseModule(
    const std::string& bytes, const std::string& name,
    llvm::LLVMContext& context, bool verify) {
  std::unique_ptr<llvm::Module> module;
  llvm::MemoryBufferRef buffer(bytes, name);
  if (bytes.size() >= 4 && (bytes.compare(0, 2, "BC") == 0 ||
                            static_cast<unsigned char>(bytes[0]) == 0xDE)) {
    llvm::Expected<std::unique_ptr<llvm::Module>> parsed =
        llvm::parseBitcodeFile(buffer, context);
    if (!parsed) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", name,
          "' is not valid LLVM bitcode: ", llvm::toString(parsed.takeError()),
          "; regenerate it with clang-16 -emit-llvm"));
    }
    module = std::move(*parsed);
  } else {
    llvm::SMDiagnostic diag;
    module = llvm::parseAssembly(buffer, diag, context);
    if (!module) {
      std::string text;
      llvm::raw_string_ostream os(text);
      diag.print(name.c_str(), os, /*ShowColors=*/false);
      return absl::InvalidArgumentError(absl::StrCat(
          "'", name,
          "' is not valid LLVM IR (expected .ll text or .bc): ", os.str()));
    }
  }
  if (!verify) return module;
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", name, "' fails the LLVM verifier: ", os.str()));
  }
  return module;
}

absl::StatusOr<std::unique_ptr<llvm::Module>> LoadModule(
    const std::string& path, const FrontendOptions& options,
    llvm::LLVMContext& context) {
  // The name first: `--input /dev/zero` read 4 GB before being refused.
  if (!IsSourcePath(path) && !EndsWith(path, ".bc") && !EndsWith(path, ".ll")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path,
        "' is neither a C/C++ source (.c .cc .cpp .cxx) nor LLVM IR "
        "(.bc .ll); pass one of those"));
  }
  absl::StatusOr<std::string> bytes =
      IsSourcePath(path) ? CompileToBitcode(path, options) : ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  // A .bc without bitcode's magic (empty, truncated, text) was parsed as
  // .ll and refused with an assembly parser's error, or read as an empty
  // module.
  if (EndsWith(path, ".bc") &&
      !(bytes->size() >= 4 &&
        (bytes->compare(0, 4, "BC\xC0\xDE") == 0 ||
         bytes->compare(0, 4, "\xDE\xC0\x17\x0B") == 0))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path, "' is not LLVM bitcode (", bytes->size(),
        " bytes without bitcode's magic number); give a .bc that clang-16 "
        "-emit-llvm wrote, or name a text module .ll"));
  }
  return ParseModule(*bytes, path, context);
}

}  // namespace phaseloop::ir
