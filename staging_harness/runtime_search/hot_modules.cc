#include "staging_harness/runtime_search/hot_modules.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/process/subprocess.h"
#include "staging_harness/runner/workload_runs.h"

namespace phaseloop::runtime_search {
namespace {

namespace fs = std::filesystem;

constexpr char kEvent[] = "cpu-clock:u";

bool Under(const std::string& path, const std::string& dir) {
  if (dir.empty()) return false;
  const std::string prefix = absl::EndsWith(dir, "/") ? dir : dir + "/";
  return absl::StartsWith(path, prefix);
}

// Every regular file under `dir`, relative, with '/' separators.
std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code error;
  for (fs::recursive_directory_iterator it(dir, error), end;
       !error && it != end; it.increment(error)) {
    if (it->is_regular_file(error)) {
      files.push_back(fs::relative(it->path(), dir, error).generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The object a decision names, under the build directory: the object path
// as given when absolute, else the one file whose relative path ends with
// it (a recursive make compiles in subdirectories).
std::string FindObject(const std::string& build_dir,
                       const std::vector<std::string>& files,
                       const std::string& object_path, std::string* why) {
  if (object_path.empty()) {
    *why = "the decision names no object";
    return "";
  }
  if (fs::path(object_path).is_absolute()) {
    if (fs::exists(object_path)) return object_path;
    *why = absl::StrCat(object_path, " does not exist");
    return "";
  }
  std::string relative = fs::path(object_path).lexically_normal().string();
  std::vector<std::string> found;
  for (const std::string& file : files) {
    if (file == relative || absl::EndsWith(file, "/" + relative)) {
      found.push_back(file);
    }
  }
  if (found.size() == 1) return build_dir + "/" + found[0];
  *why = found.empty() ? absl::StrCat("no ", relative, " under ", build_dir)
                       : absl::StrCat(found.size(), " files named ", relative,
                                      " under ", build_dir, " (ambiguous)");
  return "";
}

absl::StatusOr<std::vector<std::string>> TextSymbols(const std::string& nm,
                                                     const std::string& obj) {
  process::ProcessSpec spec;
  spec.argv = {"sh", "-c", "exec \"$0\" --defined-only --no-sort \"$1\"", nm,
               obj};
  spec.timeout_seconds = 60;
  absl::StatusOr<process::ProcessResult> run = process::RunProcess(spec);
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(nm, " failed on ", obj, " (exit ", run->exit_code,
                     "): ", process::ShortReason(run->output),
                     "; install llvm-16 (apt-get install llvm-16)"));
  }
  std::vector<std::string> symbols;
  for (absl::string_view line : absl::StrSplit(run->output, '\n')) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() != 3 || fields[1].size() != 1) continue;
    const char type = fields[1][0];
    if (type == 'T' || type == 't' || type == 'W' || type == 'w' ||
        type == 'i') {
      symbols.emplace_back(fields[2]);
    }
  }
  return symbols;
}

}  // namespace

SymbolSamples ParsePerfScript(absl::string_view text,
                              const std::string& program_dir) {
  SymbolSamples samples;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    const size_t open = line.rfind(" (");
    if (open == absl::string_view::npos || line.back() != ')') continue;
    ++samples.total;
    const std::string dso(line.substr(open + 2, line.size() - open - 3));
    if (!Under(dso, program_dir)) continue;
    ++samples.program;
    absl::string_view head = line.substr(0, open);
    const size_t space = head.find(' ');
    absl::string_view symbol =
        space == absl::string_view::npos
            ? absl::string_view()
            : absl::StripAsciiWhitespace(head.substr(space + 1));
    // "sym+0x1f" when perf adds the offset.
    if (size_t plus = symbol.rfind("+0x"); plus != absl::string_view::npos) {
      symbol = symbol.substr(0, plus);
    }
    if (symbol.empty() || symbol == "[unknown]") {
      ++samples.unknown;
      continue;
    }
    ++samples.by_symbol[std::string(symbol)];
  }
  return samples;
}

absl::StatusOr<std::vector<UnitSymbols>> UnitsOf(
    const runner::BuiltVariant& built, const std::string& nm,
    std::vector<std::string>* notes) {
  const std::vector<std::string> files = FilesUnder(built.build_dir);
  std::vector<UnitSymbols> units;
  std::set<std::string> seen;  // object files: one decision each
  for (const v1::Decision& d : built.decisions) {
    if (d.module_hash().empty()) continue;
    std::string why;
    const std::string object =
        FindObject(built.build_dir, files, d.object_path(), &why);
    if (object.empty()) {
      notes->push_back(absl::StrCat("left out ", d.source(), " (module ",
                                    d.module_hash(),
                                    "): its object cannot be found: ", why));
      continue;
    }
    if (!seen.insert(object).second) continue;
    absl::StatusOr<std::vector<std::string>> symbols = TextSymbols(nm, object);
    if (!symbols.ok()) return symbols.status();
    units.push_back({d.module_hash(), d.source(), object, *std::move(symbols)});
  }
  return units;
}

Profile Attribute(const SymbolSamples& samples,
                  const std::vector<UnitSymbols>& units) {
  Profile profile;
  profile.total = samples.total;
  profile.program = samples.program;
  profile.unknown = samples.unknown;
  std::map<std::string, std::vector<size_t>> definers;
  for (size_t i = 0; i < units.size(); ++i) {
    for (const std::string& symbol : units[i].symbols) {
      std::vector<size_t>& by = definers[symbol];
      if (by.empty() || by.back() != i) by.push_back(i);
    }
  }
  std::map<std::string, HotModule> modules;
  std::map<std::string, std::map<std::string, double>> symbols_of;
  for (const auto& [symbol, count] : samples.by_symbol) {
    auto it = definers.find(symbol);
    if (it == definers.end()) continue;  // libc's static parts, crt, ...
    profile.attributed += count;
    if (it->second.size() > 1) ++profile.ambiguous_symbols;
    const double each = double(count) / it->second.size();
    for (size_t i : it->second) {
      HotModule& m = modules[units[i].module_hash];
      if (m.module_hash.empty()) {
        m.module_hash = units[i].module_hash;
        m.source = units[i].source;
      }
      m.samples += each;
      symbols_of[m.module_hash][symbol] += each;
    }
  }
  for (auto& [hash, m] : modules) {
    m.share = profile.attributed > 0 ? m.samples / profile.attributed : 0;
    std::vector<std::pair<std::string, double>> top(symbols_of[hash].begin(),
                                                    symbols_of[hash].end());
    std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    if (top.size() > 3) top.resize(3);
    m.top_symbols = std::move(top);
    profile.modules.push_back(m);
  }
  std::sort(profile.modules.begin(), profile.modules.end(),
            [](const HotModule& a, const HotModule& b) {
              return a.samples != b.samples ? a.samples > b.samples
                                            : a.module_hash < b.module_hash;
            });
  if (profile.ambiguous_symbols > 0) {
    profile.notes.push_back(absl::StrCat(
        profile.ambiguous_symbols,
        " sampled symbols are defined by several units: their samples are "
        "split evenly"));
  }
  return profile;
}

absl::StatusOr<Profile> ProfileBaseline(const workloads::Workload& workload,
                                        const runner::BuiltVariant& baseline,
                                        const runner::PreparedInputs& inputs,
                                        const ProfileOptions& options,
                                        std::ostream& progress) {
  const std::string run_dir = options.work_dir + "/run";
  const std::string data_dir = options.work_dir + "/perf";
  std::error_code error;
  fs::remove_all(data_dir, error);
  fs::create_directories(data_dir, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot create ", data_dir, ": ", error.message()));
  }
  const std::string frequency = std::to_string(options.frequency_hz);
  const std::string method =
      absl::StrCat("perf record -e ", kEvent, " -F ", frequency);

  // Can perf sample a child here at all?
  process::ProcessSpec probe;
  probe.argv = {options.perf, "record", "-e",
                kEvent,       "-F",     frequency,
                "-q",         "-o",     data_dir + "/probe.data",
                "--",         "true"};
  probe.timeout_seconds = 30;
  absl::StatusOr<process::ProcessResult> probed = process::RunProcess(probe);
  if (!probed.ok() || probed->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot profile the baseline of ", workload.path, ": `", method,
        " -- true` ",
        probed.ok() ? absl::StrCat("exited ", probed->exit_code, ": ",
                                   process::ShortReason(probed->output))
                    : std::string(probed.status().message()),
        ". Install linux-perf (apt-get install linux-perf); as a non-root "
        "user, kernel.perf_event_paranoid must be 2 or lower "
        "(sysctl kernel.perf_event_paranoid=2) for user-space sampling of "
        "one's own processes"));
  }

  if (absl::Status ready =
          runner::PrepareRunDirectory(workload, baseline, inputs, run_dir);
      !ready.ok()) {
    return ready;
  }
  const std::string program_dir = fs::weakly_canonical(run_dir).string();
  progress << "  profile: " << method << " over " << workload.runs.size()
           << " run commands of the baseline\n";
  // Short workloads give few samples per pass: passes are repeated until
  // the program has min_samples or max_passes ran.
  std::string script;
  int passes = 0;
  for (; passes < options.max_passes &&
         ParsePerfScript(script, program_dir).program < options.min_samples;
       ++passes) {
    for (size_t i = 0; i < workload.runs.size(); ++i) {
      const workloads::RunCommand& run = workload.runs[i];
      const std::string data =
          absl::StrCat(data_dir, "/", passes, "-", i, ".data");
      process::ProcessSpec record;
      record.argv = {options.perf, "record", "-e",       kEvent, "-F",
                     frequency,    "-q",     "-o",       data,   "--",
                     "sh",         "-c",     run.command};
      record.cwd = run_dir;
      record.timeout_seconds = 3 * run.timeout_s + 30;
      absl::StatusOr<process::ProcessResult> recorded =
          process::RunProcess(record);
      if (!recorded.ok()) return recorded.status();
      if (recorded->timed_out || recorded->exit_code != run.check.exit_status) {
        return absl::FailedPreconditionError(absl::StrCat(
            workload.path, ": ", run.name, " of the baseline ",
            recorded->timed_out
                ? "ran over 3 x its timeout_s under perf"
                : absl::StrCat("exited ", recorded->exit_code, " under perf"),
            ": ", process::ShortReason(recorded->output)));
      }
      const std::string text_file = data + ".txt";
      process::ProcessSpec read;
      read.argv = {"sh",
                   "-c",
                   "exec \"$0\" script -i \"$1\" -F ip,sym,dso --no-demangle "
                   "> \"$2\"",
                   options.perf,
                   data,
                   text_file};
      read.timeout_seconds = 300;
      absl::StatusOr<process::ProcessResult> scripted =
          process::RunProcess(read);
      if (!scripted.ok()) return scripted.status();
      if (scripted->exit_code != 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("perf script on ", data,
                         " failed: ", process::ShortReason(scripted->output)));
      }
      std::ifstream in(text_file);
      std::stringstream text;
      text << in.rdbuf();
      script += text.str();
    }
  }
  std::vector<std::string> notes;
  absl::StatusOr<std::vector<UnitSymbols>> units =
      UnitsOf(baseline, options.nm, &notes);
  if (!units.ok()) return units.status();
  Profile profile = Attribute(ParsePerfScript(script, program_dir), *units);
  profile.method =
      absl::StrCat(method, ", ", passes, passes == 1 ? " pass" : " passes");
  profile.notes.insert(profile.notes.end(), notes.begin(), notes.end());
  if (profile.program > 0 && profile.unknown * 2 > profile.program) {
    profile.notes.push_back(
        "most of the program's samples have no symbol: are its artifacts "
        "stripped? (the workload's build should keep the symbol table)");
  }
  return profile;
}

std::vector<HotModule> HotSet(const Profile& profile, double coverage,
                              int max_modules) {
  std::vector<HotModule> hot;
  double covered = 0;
  for (const HotModule& m : profile.modules) {
    if (int(hot.size()) >= max_modules || covered >= coverage) break;
    if (m.samples <= 0) break;
    hot.push_back(m);
    covered += m.share;
  }
  return hot;
}

}  // namespace phaseloop::runtime_search
