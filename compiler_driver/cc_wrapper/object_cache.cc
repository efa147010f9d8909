#include "compiler_driver/cc_wrapper/object_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/files/atomic_file.h"
#include "compiler_driver/cc_wrapper/cache_fields.h"
#include "compiler_driver/ir/module_hash.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/BLAKE3.h"

namespace phaseloop::cc_wrapper {
namespace {

constexpr char kEntryMagic[] = "phaseloop object cache entry";

// Every field of CodegenSettings: a field added there without a line here
// would let two settings share objects, so the size is pinned.
struct SerialisedCodegenSettings {
  bool flags[5];
  std::string target_cpu, target_features;
};
static_assert(sizeof(codegen::CodegenSettings) ==
                  sizeof(SerialisedCodegenSettings),
              "CodegenSettings changed: serialise the new field in "
              "CodegenSettingsText (object_cache.cc) and bump "
              "kObjectCacheFormat");
std::string CodegenSettingsText(const codegen::CodegenSettings& s) {
  return absl::StrCat(
      "function_sections=", s.function_sections,
      " data_sections=", s.data_sections,
      " unique_section_names=", s.unique_section_names, " addrsig=", s.addrsig,
      " split_machine_functions=", s.split_machine_functions,
      " target_cpu=", s.target_cpu, " target_features=", s.target_features);
}

// BLAKE3 of a file, read in chunks.
absl::StatusOr<std::string> HashFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  llvm::BLAKE3 hasher;
  std::vector<char> buffer(1 << 20);
  for (;;) {
    const ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd);
      return absl::InternalError(
          absl::StrCat("cannot read ", path, ": ", std::strerror(error)));
    }
    hasher.update(llvm::StringRef(buffer.data(), size_t(n)));
  }
  close(fd);
  return llvm::toHex(hasher.final<16>(), /*LowerCase=*/true);
}

}  // namespace

std::string ObjectCacheKey(const ObjectCacheKeyInput& input) {
  std::string text;
  AppendField(&text, "format", absl::StrCat(kObjectCacheFormat));
  AppendField(&text, "llvm", LLVM_VERSION_STRING);
  AppendField(&text, "wrapper", input.wrapper_identity);
  AppendField(&text, "module_hash", input.module_hash);
  AppendField(&text, "opt_level", input.opt_level);
  AppendField(&text, "pipeline", input.pipeline);
  AppendField(&text, "codegen", CodegenSettingsText(input.codegen));
  AppendField(&text, "count_executed", input.count_executed ? "1" : "0");
  AppendField(&text, "lto", LtoModeName(input.lto));
  return ir::ContentHash(text);
}

absl::StatusOr<std::string> WrapperIdentity(const std::string& exe_path,
                                            const std::string& memo_dir) {
  struct stat info;
  if (stat(exe_path.c_str(), &info) != 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot stat ", exe_path, ": ", std::strerror(errno)));
  }
  const std::string memo =
      memo_dir.empty()
          ? ""
          : absl::StrCat(
                memo_dir, "/",
                ir::ContentHash(absl::StrCat(
                    info.st_dev, " ", info.st_ino, " ", info.st_size, " ",
                    info.st_mtim.tv_sec, ".", info.st_mtim.tv_nsec, " ",
                    info.st_ctim.tv_sec, ".", info.st_ctim.tv_nsec)));
  std::string remembered;
  if (!memo.empty() && files::ReadWholeFile(memo, &remembered).ok() &&
      IsCacheKey(remembered)) {
    return absl::StrCat("phaseloop-cc-opt:", remembered);
  }
  absl::StatusOr<std::string> hash = HashFile(exe_path);
  if (!hash.ok()) return hash.status();
  if (!memo.empty() && files::MakeDirectories(memo_dir).ok()) {
    files::WriteFileAtomically(memo, *hash).IgnoreError();  // only a memo
  }
  return absl::StrCat("phaseloop-cc-opt:", *hash);
}

std::string SerializeEntry(const std::string& key, const CachedObject& entry) {
  return absl::StrCat(kEntryMagic, " v", kObjectCacheFormat, "\nkey ", key,
                      "\nir_count_after ", entry.ir_count_after, "\ntext_size ",
                      entry.text_size, "\nalloc_size ", entry.alloc_size,
                      "\nobject_size ", entry.object.size(), "\nobject_hash ",
                      ir::ContentHash(entry.object), "\n\n", entry.object);
}

absl::StatusOr<CachedObject> ParseEntry(const std::string& key,
                                        const std::string& bytes) {
  auto bad = [](absl::string_view why) { return absl::DataLossError(why); };
  const size_t end = bytes.find("\n\n");
  if (end == std::string::npos) return bad("no header");
  std::vector<absl::string_view> lines =
      absl::StrSplit(absl::string_view(bytes).substr(0, end), '\n');
  const std::string magic = absl::StrCat(kEntryMagic, " v", kObjectCacheFormat);
  if (lines.size() != 7 || lines[0] != magic) return bad("not a v1 entry");
  std::vector<std::pair<absl::string_view, absl::string_view>> fields;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::pair<absl::string_view, absl::string_view> field =
        absl::StrSplit(lines[i], absl::MaxSplits(' ', 1));
    fields.push_back(field);
  }
  const char* names[] = {"key",        "ir_count_after", "text_size",
                         "alloc_size", "object_size",    "object_hash"};
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].first != names[i]) {
      return bad(absl::StrCat("header line ", i + 2, " is not ", names[i]));
    }
  }
  if (fields[0].second != key) return bad("it holds another key");
  CachedObject entry;
  int64_t object_size = 0;
  if (!absl::SimpleAtoi(fields[1].second, &entry.ir_count_after) ||
      !absl::SimpleAtoi(fields[2].second, &entry.text_size) ||
      !absl::SimpleAtoi(fields[3].second, &entry.alloc_size) ||
      !absl::SimpleAtoi(fields[4].second, &object_size)) {
    return bad("a number in the header does not parse");
  }
  entry.object = bytes.substr(end + 2);
  if (int64_t(entry.object.size()) != object_size) {
    return bad(absl::StrCat("object is ", entry.object.size(),
                            " bytes, the header says ", object_size,
                            " (truncated?)"));
  }
  if (ir::ContentHash(entry.object) != fields[5].second) {
    return bad("the object's content hash does not match the header's");
  }
  // An object, or under -flto the bitcode the wrapper writes (raw, or in
  // its wrapper header: ThinLTO's).
  const absl::string_view start = absl::string_view(entry.object).substr(0, 4);
  if (start != absl::string_view("\x7f"
                                 "ELF",
                                 4) &&
      start != absl::string_view("BC\xc0\xde", 4) &&
      start != absl::string_view("\xde\xc0\x17\x0b", 4)) {
    return bad("the object is neither ELF nor LLVM bitcode");
  }
  return entry;
}

ObjectCache::ObjectCache(std::string dir, absl::StatusOr<std::string> identity)
    : dir_(std::move(dir)), identity_(std::move(identity)) {}

ObjectCache ObjectCache::ForRunningBinary(const std::string& dir) {
  return ObjectCache(dir, WrapperIdentity("/proc/self/exe", dir + "/identity"));
}

std::string ObjectCache::EntryPath(const std::string& key) const {
  return absl::StrCat(dir_, "/objects/", key.substr(0, 2), "/", key);
}

ObjectCacheLookup ObjectCache::Lookup(ObjectCacheKeyInput input) const {
  ObjectCacheLookup lookup;
  lookup.outcome = "miss";
  if (!identity_.ok()) {
    lookup.note = absl::StrCat("object cache unusable: wrapper identity: ",
                               identity_.status().message());
    return lookup;
  }
  input.wrapper_identity = *identity_;
  lookup.key = ObjectCacheKey(input);
  const std::string path = EntryPath(lookup.key);
  std::string bytes;
  absl::Status read = files::ReadWholeFile(path, &bytes);
  if (absl::IsNotFound(read)) return lookup;
  if (!read.ok()) {
    lookup.note = absl::StrCat("object cache: ", read.message());
    return lookup;
  }
  absl::StatusOr<CachedObject> entry = ParseEntry(lookup.key, bytes);
  if (!entry.ok()) {
    lookup.note = absl::StrCat("object cache: bad entry ", path, " (",
                               entry.status().message(), "): recompiled");
    return lookup;
  }
  lookup.outcome = "hit";
  lookup.hit = *std::move(entry);
  return lookup;
}

std::string ObjectCache::Store(const ObjectCacheLookup& miss,
                               const CachedObject& computed) const {
  if (miss.key.empty()) return "";
  const std::string path = EntryPath(miss.key);
  absl::Status stored = files::MakeDirectories(path.substr(0, path.rfind('/')));
  if (stored.ok()) {
    stored =
        files::WriteFileAtomically(path, SerializeEntry(miss.key, computed));
  }
  if (stored.ok()) return "";
  return absl::StrCat("object cache: not stored: ", stored.message());
}

}  // namespace phaseloop::cc_wrapper
