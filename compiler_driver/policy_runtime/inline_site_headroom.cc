// How much deciding inlining call site by call site could shrink objects
// below -Oz, measured in process through the inliner's own call-site advice
// (passes/inline_site_advice.h) rather than by rewriting IR before opt, as
// tools/inline_site_headroom.py did: every call site the -Oz inliner asks
// about is seen as it stands at that moment (after earlier inlining and
// simplification), not only calls present in the unoptimised module.
//
// For each corpus module of the split (at most --max-ir unoptimised IR
// instructions): -Oz once, recording the sites the inliner asks about; then
// each of the first --max-sites sites reversed alone (inline where LLVM
// would not, keep the call where it would); then the reversals that shrank
// the object added greedily, biggest first, each kept only if the whole
// shrinks further. With --rounds N, up to N-1 more rounds do the same on top
// of what is kept, over the sites as that run asks them (a kept reversal
// changes which sites come after it). With --choices EVAL_JSON (a
// `phaseloop eval --json` report, e.g. of the shipped policy in topk), the
// reversals apply to each module's chosen pipeline instead of -Oz: what they
// add on top of the policy. Sizes are allocated bytes (every SHF_ALLOC
// section), tuned and emitted as `phaseloop eval` measures (opt's tuning).
// Prints one line per module and the geomeans of -Oz's bytes over the
// choice's and over the result's: a lower bound on what per-call-site
// decisions are worth. With --sites-out FILE, one JSON line per site asked
// in the unreversed run, with its features and the bytes its reversal alone
// gives: training data for an advice that decides from features. Figures,
// no assertions; BENCHMARKS.md has the results.
//
//   bazel run -c opt //compiler_driver/policy_runtime:inline_site_headroom --
//       --corpus ~/.cache/phaseloop/corpus-debian --split validation
//       [--max-ir 6000] [--max-sites 200] [--rounds 1] [--limit N]
//       [--sites-out FILE] [--choices EVAL_JSON]

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/passes/inline_site_advice.h"
#include "compiler_driver/passes/pass_runner.h"
#include "compiler_driver/session/pass_target.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "nlohmann/json.hpp"

namespace phaseloop::policy_runtime {
namespace {

struct Options {
  std::string corpus, split = "validation", sites_out;
  // Module name -> the pipeline reversals apply to (--choices); empty: -Oz.
  std::map<std::string, std::string> choices;
  int64_t max_ir = 6000;
  int max_sites = 200;
  int rounds = 1;
  int limit = 0;
};

struct Totals {
  int modules = 0, shrunk = 0, runs = 0;
  int kept_inline = 0, kept_call = 0;  // reversals in the greedy result
  double log_ratio = 0;                // -Oz's bytes over the reversed result's
  double log_choice = 0;               // -Oz's bytes over the chosen pipeline's
  double cpu_s = 0;
};

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// One module's measurements: a pipeline (-Oz, or a policy's choice, with
// its codegen options) with a set of reversed sites.
class ModuleLab {
 public:
  ModuleLab(const llvm::Module& module, passes::PassRunner& runner,
            codegen::ObjectEmitter& emitter, const std::string& pipeline)
      : module_(module), runner_(runner), emitter_(emitter) {
    absl::StatusOr<codegen::SplitPipelineText> split =
        codegen::SplitPipeline(pipeline);
    if (split.ok()) {
      split_ = *std::move(split);
    } else {
      split_.ir_pipeline = pipeline;  // fails in Run, measured as -1
    }
  }

  // Allocated bytes of the object; -1 when a step fails. `record` (may be
  // null) gets the sites asked.
  int64_t Size(const std::set<int>& flips,
               passes::FlipInlineSites* record = nullptr) {
    ++runs_;
    passes::FlipInlineSites own(flips);
    passes::FlipInlineSites* advice = record != nullptr ? record : &own;
    std::unique_ptr<llvm::Module> clone = llvm::CloneModule(module_);
    if (!runner_.Run(*clone, split_.ir_pipeline, advice).ok()) return -1;
    absl::StatusOr<std::string> object =
        emitter_.EmitObject(std::move(clone), split_.codegen);
    if (!object.ok()) return -1;
    absl::StatusOr<int64_t> bytes = codegen::AllocatedSectionBytes(*object);
    return bytes.ok() ? *bytes : -1;
  }
  int runs() const { return runs_; }

 private:
  const llvm::Module& module_;
  passes::PassRunner& runner_;
  codegen::ObjectEmitter& emitter_;
  codegen::SplitPipelineText split_;
  int runs_ = 0;
};

nlohmann::json SiteJson(const std::string& module, const std::string& pipeline,
                        const passes::InlineSite& s, int64_t oz, int64_t base,
                        int64_t flipped) {
  nlohmann::json j = {{"module", module},
                      {"pipeline", pipeline},
                      {"index", s.index},
                      {"caller", s.caller},
                      {"callee", s.callee},
                      {"callee_instructions", s.callee_instructions},
                      {"callee_blocks", s.callee_blocks},
                      {"callee_uses", s.callee_uses},
                      {"callee_local", s.callee_local},
                      {"caller_instructions", s.caller_instructions},
                      {"loop_depth", s.loop_depth},
                      {"constant_arguments", s.constant_arguments},
                      {"default_inlines", s.default_inlines},
                      {"may_inline", s.may_inline},
                      {"oz_bytes", oz},
                      {"base_bytes", base},
                      {"reversed_bytes", flipped}};
  j["cost_estimate"] = s.cost_estimate ? nlohmann::json(*s.cost_estimate)
                                       : nlohmann::json(nullptr);
  return j;
}

void MeasureModule(const std::string& path, const std::string& name,
                   const Options& options, std::ofstream* sites_out,
                   Totals* totals) {
  const double start = CpuSeconds();
  llvm::LLVMContext context;
  auto module = ir::LoadModule(path, ir::FrontendOptions(), context);
  if (!module.ok()) return;
  auto emitter = codegen::ObjectEmitter::ForModule(
      **module, ir::CodegenLevel(ir::OptLevel::kOz));
  if (!emitter.ok()) return;
  passes::PassRunner runner(
      session::PassTargetMachine(**emitter, passes::PipelineFlavor::kOpt),
      passes::TuningFor(ir::OptLevel::kOz, passes::PipelineFlavor::kOpt));
  std::string pipeline = "default<Oz>";
  if (!options.choices.empty()) {
    auto chosen = options.choices.find(name);
    if (chosen == options.choices.end()) {
      std::printf("%-50s not in --choices: left out\n", name.c_str());
      return;
    }
    pipeline = chosen->second;
  }
  ModuleLab lab(**module, runner, **emitter, pipeline);

  passes::FlipInlineSites record;
  const int64_t base = lab.Size({}, &record);
  const int64_t oz =
      pipeline == "default<Oz>"
          ? base
          : ModuleLab(**module, runner, **emitter, "default<Oz>").Size({});
  if (base <= 0 || oz <= 0) {
    std::printf("%-50s %s failed: left out\n", name.c_str(), pipeline.c_str());
    return;
  }
  const int asked = static_cast<int>(record.sites().size());
  const int tried = std::min(asked, options.max_sites);
  std::set<int> kept;
  int64_t best = base;
  size_t shrinking_alone = 0;
  for (int round = 0; round < options.rounds; ++round) {
    // The sites as a run with the reversals kept so far asks them.
    passes::FlipInlineSites now(kept);
    if (round > 0 && lab.Size(kept, &now) != best) break;
    const passes::FlipInlineSites& sites = round == 0 ? record : now;
    const int limit =
        std::min(static_cast<int>(sites.sites().size()), options.max_sites);
    // Each site reversed on top of what is kept, then the greedy
    // combination of those that shrank.
    std::vector<std::pair<int64_t, int>> gains;  // (bytes saved, site)
    for (int i = 0; i < limit; ++i) {
      const passes::InlineSite& site = sites.sites()[i];
      if (kept.count(i) > 0 || (!site.default_inlines && !site.may_inline)) {
        continue;
      }
      std::set<int> trial = kept;
      trial.insert(i);
      const int64_t size = lab.Size(trial);
      if (round == 0 && sites_out != nullptr) {
        *sites_out << SiteJson(name, pipeline, site, oz, base, size)
                          .dump(-1, ' ', false,
                                nlohmann::json::error_handler_t::replace)
                   << "\n";
      }
      if (size > 0 && size < best) gains.push_back({best - size, i});
    }
    if (round == 0) shrinking_alone = gains.size();
    std::sort(gains.begin(), gains.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    const int64_t round_start = best;
    bool first = true;
    for (const auto& [saved, site] : gains) {
      std::set<int> trial = kept;
      trial.insert(site);
      const int64_t size = first ? round_start - saved : lab.Size(trial);
      first = false;
      if (size > 0 && size < best) {
        best = size;
        kept = std::move(trial);
        if (sites.sites()[site].default_inlines) {
          ++totals->kept_call;
        } else {
          ++totals->kept_inline;
        }
      }
    }
    if (best == round_start) break;  // nothing more to find
  }
  const double cpu = CpuSeconds() - start;
  ++totals->modules;
  totals->runs += lab.runs();
  totals->cpu_s += cpu;
  if (best < base) ++totals->shrunk;
  totals->log_ratio += std::log(static_cast<double>(oz) / best);
  totals->log_choice += std::log(static_cast<double>(oz) / base);
  std::printf(
      "%-50s sites %4d (tried %4d), shrinking alone %3zu, kept %2zu: "
      "-Oz %7lld, %s %7lld -> %7lld bytes (-Oz / reversed %.4f), %.1f s\n",
      name.c_str(), asked, tried, shrinking_alone, kept.size(),
      static_cast<long long>(oz), options.choices.empty() ? "itself" : "choice",
      static_cast<long long>(base), static_cast<long long>(best),
      static_cast<double>(oz) / best, cpu);
  std::fflush(stdout);
}

int Main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has = i + 1 < argc;
    if (arg == "--corpus" && has) {
      options.corpus = argv[++i];
    } else if (arg == "--split" && has) {
      options.split = argv[++i];
    } else if (arg == "--max-ir" && has) {
      options.max_ir = std::atoll(argv[++i]);
    } else if (arg == "--max-sites" && has) {
      options.max_sites = std::atoi(argv[++i]);
    } else if (arg == "--rounds" && has) {
      options.rounds = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--limit" && has) {
      options.limit = std::atoi(argv[++i]);
    } else if (arg == "--sites-out" && has) {
      options.sites_out = argv[++i];
    } else if (arg == "--choices" && has) {
      // A `phaseloop eval --json` report: each module's chosen pipeline.
      const std::string path = argv[++i];
      std::ifstream report(path);
      nlohmann::json j = nlohmann::json::parse(report, nullptr, false);
      if (!report || j.is_discarded() || !j.contains("modules")) {
        std::fprintf(stderr,
                     "inline_site_headroom: --choices %s is not a phaseloop "
                     "eval --json report\n",
                     path.c_str());
        return 2;
      }
      for (const auto& m : j["modules"]) {
        const std::string chosen = m.value("pipeline", "");
        if (!chosen.empty()) options.choices[m.value("name", "")] = chosen;
      }
    } else {
      std::fprintf(stderr,
                   "usage: inline_site_headroom --corpus DIR [--split S] "
                   "[--max-ir N] [--max-sites N] [--rounds N] [--limit N] "
                   "[--sites-out FILE] [--choices EVAL_JSON]\n");
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  if (options.corpus.empty()) {
    std::fprintf(stderr,
                 "inline_site_headroom: --corpus is required (the output "
                 "directory of phaseloop corpus fetch-debian)\n");
    return 2;
  }
  std::ifstream in(options.corpus + "/manifest.json");
  if (!in) {
    std::fprintf(stderr, "inline_site_headroom: no manifest.json in %s\n",
                 options.corpus.c_str());
    return 2;
  }
  const nlohmann::json manifest = nlohmann::json::parse(in);
  std::unique_ptr<std::ofstream> sites_out;
  if (!options.sites_out.empty()) {
    sites_out = std::make_unique<std::ofstream>(options.sites_out);
    if (!*sites_out) {
      std::fprintf(stderr, "inline_site_headroom: cannot write %s\n",
                   options.sites_out.c_str());
      return 2;
    }
  }
  Totals totals;
  for (const auto& m : manifest["modules"]) {
    if (m.value("split", "") != options.split) continue;
    const int64_t ir = m.value("ir_count_o0", int64_t{0});
    if (ir == 0 || ir > options.max_ir) continue;
    if (options.limit > 0 && totals.modules >= options.limit) break;
    MeasureModule(options.corpus + "/" + m.value("bitcode_path", ""),
                  m.value("name", ""), options, sites_out.get(), &totals);
  }
  std::printf(
      "\n%s: %d modules of at most %lld IR instructions, %d shrunk; "
      "reversals kept: %d to inline, %d to keep the call\n"
      "geomean -Oz / %s: %.4f; -Oz / reversed: %.4f; %d pipeline runs, "
      "%.0f s CPU\n",
      options.split.c_str(), totals.modules,
      static_cast<long long>(options.max_ir), totals.shrunk, totals.kept_inline,
      totals.kept_call, options.choices.empty() ? "-Oz" : "choice",
      totals.modules > 0 ? std::exp(totals.log_choice / totals.modules) : 0.0,
      totals.modules > 0 ? std::exp(totals.log_ratio / totals.modules) : 0.0,
      totals.runs, totals.cpu_s);
  return 0;
}

}  // namespace
}  // namespace phaseloop::policy_runtime

int main(int argc, char** argv) {
  return phaseloop::policy_runtime::Main(argc, argv);
}
