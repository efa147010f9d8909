#ifndef PHASELOOP_STAGING_HARNESS_STAGING_MACHINE_ACTIVITY_H_
#define PHASELOOP_STAGING_HARNESS_STAGING_MACHINE_ACTIVITY_H_

// What the machine did while a timing phase ran, so a figure taken on a
// busy machine says so. Interleaved pairs cancel drift that hits both sides
// alike, but not an interaction: two builds of one program can suffer
// unequally from a neighbour (BENCHMARKS.md "The profile-guided runtime
// search, test split" records one run 9 % away from every rerun with the
// same binaries). Read from the kernel's /proc/stat and /proc/loadavg
// around the phase, and from the passes' own CPU share (user+sys over wall
// time: below 1 the run waited or was preempted).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::staging {

// One /proc/stat reading, in clock ticks.
struct CpuTicks {
  int cpu = -1;         // N of "cpuN"; -1 for the "cpu" line (all CPUs)
  long long busy = 0;   // user + nice + system + irq + softirq
  long long steal = 0;  // taken by the hypervisor
  long long total = 0;  // all of the above + idle + iowait
};
struct ProcStat {
  CpuTicks all;
  std::vector<CpuTicks> cpus;  // the online CPUs' lines, in file order
};

// Parses /proc/stat's text. InvalidArgument naming the line when the
// "cpu" lines are missing or malformed.
absl::StatusOr<ProcStat> ParseProcStat(const std::string& text);

// The first /proc/loadavg field; InvalidArgument when it is not a number.
absl::StatusOr<double> ParseLoadAverage(const std::string& text);

// One CPU between two readings: fractions of its time spent busy (any
// process, the timed runs included) and taken by the hypervisor.
struct CpuActivity {
  int cpu = 0;
  double busy = 0;
  double steal = 0;
};

struct MachineActivity {
  bool available = false;  // /proc readable at both ends
  // The CPUs online at both readings (matched by number: an offline CPU
  // has no line).
  std::vector<CpuActivity> cpus;
  double steal = 0;    // fraction of all CPUs' time
  int timed_cpu = -1;  // the CPU every timed run was pinned to, or -1
  double load_start = 0, load_end = 0;  // 1-minute load averages
  // Median over the pairs of each side's cpu_s / wall_s (0 when unknown).
  double baseline_cpu_share = 0, candidate_cpu_share = 0;
};

// Difference of two readings (the later second).
MachineActivity ActivityBetween(const ProcStat& before, const ProcStat& after);

// Reads /proc/stat; nullopt where it cannot be read (not Linux, a
// sandbox): the activity is then reported unavailable, never invented.
std::optional<ProcStat> ReadProcStat();
std::optional<double> ReadLoadAverage();

// Sentences for a reader when the phase ran on a busy machine, empty when
// it looked quiet: steal of 2 % or more (of `pinned_cpu`'s time when it is
// >= 0, else of all CPUs'); a side holding its CPU less than 95 % of its
// wall time; with `pinned_cpu` >= 0, another CPU busier than 50 % (its work
// can compete for caches and memory bandwidth).
std::vector<std::string> BusyMachineWarnings(const MachineActivity& activity,
                                             int pinned_cpu);

// What a report says after such a warning.
inline constexpr char kBusyMachineAdvice[] =
    "rerun on a quieter machine before believing a small difference";

}  // namespace phaseloop::staging

#endif  // PHASELOOP_STAGING_HARNESS_STAGING_MACHINE_ACTIVITY_H_
