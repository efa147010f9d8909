#include "staging_harness/staging/machine_activity.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/files/atomic_file.h"

namespace phaseloop::staging {
namespace {

std::optional<std::string> Slurp(const char* path) {
  std::string text;
  if (!files::ReadWholeFile(path, &text).ok()) return std::nullopt;
  return text;
}

absl::StatusOr<CpuTicks> ParseCpuLine(const std::vector<std::string>& fields,
                                      const std::string& line) {
  // cpu user nice system idle iowait irq softirq steal [guest guest_nice]
  if (fields.size() < 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "/proc/stat: a cpu line needs at least 7 counters: \"", line, "\""));
  }
  long long v[8] = {};  // steal stays 0 on kernels that do not count it
  const size_t counters = std::min<size_t>(fields.size() - 1, 8);
  for (size_t i = 0; i < counters; ++i) {
    if (!absl::SimpleAtoi(fields[i + 1], &v[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "/proc/stat: counter ", i + 1, " is not a number: \"", line, "\""));
    }
  }
  CpuTicks ticks;
  ticks.busy = v[0] + v[1] + v[2] + v[5] + v[6];
  ticks.steal = v[7];
  ticks.total = ticks.busy + v[3] + v[4] + ticks.steal;
  return ticks;
}

double Fraction(long long part, long long whole) {
  return whole > 0 ? double(part) / double(whole) : 0;
}

}  // namespace

absl::StatusOr<ProcStat> ParseProcStat(const std::string& text) {
  ProcStat stat;
  bool saw_all = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, "cpu")) continue;
    std::vector<std::string> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    absl::StatusOr<CpuTicks> ticks = ParseCpuLine(fields, std::string(line));
    if (!ticks.ok()) return ticks.status();
    if (fields[0] == "cpu") {
      stat.all = *ticks;
      saw_all = true;
      continue;
    }
    if (!absl::SimpleAtoi(absl::string_view(fields[0]).substr(3),
                          &ticks->cpu) ||
        ticks->cpu < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("/proc/stat: \"", fields[0], "\" names no CPU"));
    }
    stat.cpus.push_back(*ticks);
  }
  if (!saw_all) {
    return absl::InvalidArgumentError(
        "/proc/stat: no \"cpu\" line (is /proc a Linux procfs?)");
  }
  return stat;
}

absl::StatusOr<double> ParseLoadAverage(const std::string& text) {
  std::vector<std::string> fields =
      absl::StrSplit(text, ' ', absl::SkipEmpty());
  double load = 0;
  if (fields.empty() || !absl::SimpleAtod(fields[0], &load)) {
    return absl::InvalidArgumentError(
        absl::StrCat("/proc/loadavg: no load average in \"", text, "\""));
  }
  return load;
}

MachineActivity ActivityBetween(const ProcStat& before, const ProcStat& after) {
  MachineActivity activity;
  activity.available = true;
  activity.steal = Fraction(after.all.steal - before.all.steal,
                            after.all.total - before.all.total);
  for (const CpuTicks& a : after.cpus) {
    for (const CpuTicks& b : before.cpus) {
      if (b.cpu != a.cpu) continue;
      activity.cpus.push_back({a.cpu,
                               Fraction(a.busy - b.busy, a.total - b.total),
                               Fraction(a.steal - b.steal, a.total - b.total)});
    }
  }
  return activity;
}

std::optional<ProcStat> ReadProcStat() {
  std::optional<std::string> text = Slurp("/proc/stat");
  if (!text) return std::nullopt;
  absl::StatusOr<ProcStat> stat = ParseProcStat(*text);
  if (!stat.ok()) return std::nullopt;
  return *stat;
}

std::optional<double> ReadLoadAverage() {
  std::optional<std::string> text = Slurp("/proc/loadavg");
  if (!text) return std::nullopt;
  absl::StatusOr<double> load = ParseLoadAverage(*text);
  if (!load.ok()) return std::nullopt;
  return *load;
}

std::vector<std::string> BusyMachineWarnings(const MachineActivity& activity,
                                             int pinned_cpu) {
  std::vector<std::string> warnings;
  const CpuActivity* timed = nullptr;
  for (const CpuActivity& c : activity.cpus) {
    if (pinned_cpu >= 0 && c.cpu == pinned_cpu) timed = &c;
  }
  if (activity.available && timed != nullptr && timed->steal >= 0.02) {
    warnings.push_back(
        absl::StrFormat("the hypervisor took %.1f %% of CPU %d's time",
                        100 * timed->steal, timed->cpu));
  } else if (activity.available && timed == nullptr && activity.steal >= 0.02) {
    warnings.push_back(absl::StrFormat(
        "the hypervisor took %.1f %% of the CPUs' time", 100 * activity.steal));
  }
  for (auto [side, share] :
       {std::pair<const char*, double>{"baseline", activity.baseline_cpu_share},
        {"candidate", activity.candidate_cpu_share}}) {
    if (share > 0 && share < 0.95) {
      warnings.push_back(absl::StrFormat(
          "the %s's runs held their CPU %.1f %% of their wall time (other "
          "work or I/O shared it)",
          side, 100 * share));
    }
  }
  if (activity.available && pinned_cpu >= 0) {
    for (const CpuActivity& c : activity.cpus) {
      if (c.cpu == pinned_cpu || c.busy <= 0.5) continue;
      warnings.push_back(absl::StrFormat(
          "CPU %d was %.0f %% busy with other work (it shares caches and "
          "memory bandwidth with the timed CPU)",
          c.cpu, 100 * c.busy));
    }
  }
  return warnings;
}

}  // namespace phaseloop::staging
