// Measures whether topk could share -Oz's work with the candidates that
// begin with it ("default<Oz>,X": half of the shipped default's candidate
// set), before any of it is built into topk: for every such candidate on
// real modules, the candidate run whole on a clone of the unoptimised module
// (what topk does today) against X run on a copy of the module -Oz left,
// copied through bitcode with use lists (what sharing would do), and with
// --clone through llvm::CloneModule instead. Prints how many give the same
// optimised IR (ir::ModuleStateHash) and the same object bytes, and the CPU
// time of both ways. Figures, no assertions; BENCHMARKS.md has the results.
//
//   bazel run -c opt //compiler_driver/policy_runtime:prefix_sharing_benchmark
//     -- --corpus ~/.cache/phaseloop/corpus-debian --split validation
//        --policy $PWD/configs/policies/default.plpolicy [--max-ir 15000]
//        [--limit N] [--clone]
// (one command line)

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler_driver/codegen/codegen_options.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/passes/pass_runner.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "nlohmann/json.hpp"

namespace phaseloop::policy_runtime {
namespace {

constexpr char kOzPrefix[] = "default<Oz>,";

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

struct Options {
  std::string corpus, split = "validation", policy;
  int64_t max_ir = 15000;
  int limit = 0;
  bool clone = false;
};

struct Totals {
  int modules = 0, pairs = 0, ir_equal = 0, object_equal = 0, failed = 0;
  double whole_s = 0, shared_s = 0;
};

// The optimised state and object of `module` after `ir_pipeline` with
// `codegen`; false when a step fails.
bool Finish(std::unique_ptr<llvm::Module> module,
            const std::string& ir_pipeline,
            const codegen::CodegenOptions& codegen, passes::PassRunner& runner,
            codegen::ObjectEmitter& emitter, std::string* state,
            std::string* object) {
  if (!ir_pipeline.empty() && !runner.Run(*module, ir_pipeline).ok()) {
    return false;
  }
  *state = ir::ModuleStateHash(*module);
  // PREFIX_SHARING_DUMP=PREFIX: each optimised module's IR as
  // PREFIX.<n>.ll, whole and shared of one candidate one after the other.
  if (const char* dump = std::getenv("PREFIX_SHARING_DUMP")) {
    static int dumped = 0;
    std::ofstream(absl::StrCat(dump, ".", dumped++, ".ll"))
        << ir::ModuleText(*module);
  }
  absl::StatusOr<std::string> emitted =
      emitter.EmitObject(std::move(module), codegen);
  if (!emitted.ok()) return false;
  *object = *std::move(emitted);
  return true;
}

std::unique_ptr<llvm::Module> Copy(const llvm::Module& module,
                                   const std::string& bitcode, bool clone,
                                   llvm::LLVMContext& context) {
  if (clone) return llvm::CloneModule(module);
  // A context of its own (the caller's `context`): parsed into the
  // original's, named struct types would be renamed (".217"), which changes
  // no object but the IR.
  auto parsed = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode, module.getModuleIdentifier()), context);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return nullptr;
  }
  return std::move(*parsed);
}

void MeasureModule(const std::string& path, const std::string& name,
                   const std::vector<std::string>& candidates,
                   const Options& options, Totals* totals) {
  llvm::LLVMContext context;
  ir::FrontendOptions frontend;
  frontend.opt_level = ir::OptLevel::kOz;
  auto module = ir::LoadModule(path, frontend, context);
  if (!module.ok()) return;
  auto emitter = codegen::ObjectEmitter::ForModule(
      **module, ir::CodegenLevel(ir::OptLevel::kOz));
  if (!emitter.ok()) return;
  passes::PassRunner runner(
      &(*emitter)->target_machine(),
      passes::TuningFor(ir::OptLevel::kOz, passes::PipelineFlavor::kClang));
  // Shared: -Oz once, its result kept as bitcode (or a module to clone).
  const double oz_start = CpuSeconds();
  std::unique_ptr<llvm::Module> oz = llvm::CloneModule(**module);
  if (!runner.Run(*oz, "default<Oz>").ok()) return;
  std::string bitcode;
  if (!options.clone) {
    llvm::raw_string_ostream os(bitcode);
    llvm::WriteBitcodeToFile(*oz, os, /*ShouldPreserveUseListOrder=*/true);
    os.flush();
  }
  totals->shared_s += CpuSeconds() - oz_start;
  int equal = 0, same_object = 0, pairs = 0;
  for (const std::string& candidate : candidates) {
    auto split = codegen::SplitPipeline(candidate);
    if (!split.ok()) continue;
    const std::string tail = split->ir_pipeline.substr(sizeof(kOzPrefix) - 1);
    std::string whole_state, whole_object, shared_state, shared_object;
    double start = CpuSeconds();
    const bool whole_ok =
        Finish(llvm::CloneModule(**module), split->ir_pipeline, split->codegen,
               runner, **emitter, &whole_state, &whole_object);
    totals->whole_s += CpuSeconds() - start;
    start = CpuSeconds();
    llvm::LLVMContext copy_context;
    std::unique_ptr<llvm::Module> copy =
        Copy(*oz, bitcode, options.clone, copy_context);
    const bool shared_ok =
        copy != nullptr && Finish(std::move(copy), tail, split->codegen, runner,
                                  **emitter, &shared_state, &shared_object);
    totals->shared_s += CpuSeconds() - start;
    if (!whole_ok || !shared_ok) {
      ++totals->failed;
      continue;
    }
    ++pairs;
    if (whole_state == shared_state) ++equal;
    if (whole_object == shared_object) ++same_object;
  }
  ++totals->modules;
  totals->pairs += pairs;
  totals->ir_equal += equal;
  totals->object_equal += same_object;
  std::printf("%-50s %3d pairs, IR equal %3d, object equal %3d\n", name.c_str(),
              pairs, equal, same_object);
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
    } else if (arg == "--policy" && has) {
      options.policy = argv[++i];
    } else if (arg == "--max-ir" && has) {
      options.max_ir = std::atoll(argv[++i]);
    } else if (arg == "--limit" && has) {
      options.limit = std::atoi(argv[++i]);
    } else if (arg == "--clone") {
      options.clone = true;
    } else {
      std::fprintf(stderr,
                   "usage: prefix_sharing_benchmark --corpus DIR --policy "
                   "FILE [--split S] [--max-ir N] [--limit N] [--clone]\n");
      return 2;
    }
  }
  if (options.corpus.empty() || options.policy.empty()) {
    std::fprintf(stderr,
                 "prefix_sharing_benchmark: --corpus and --policy "
                 "are required (try --help)\n");
    return 2;
  }
  auto artifact = ReadPolicyArtifactFile(options.policy);
  if (!artifact.ok()) {
    std::fprintf(stderr, "prefix_sharing_benchmark: %s\n",
                 std::string(artifact.status().message()).c_str());
    return 2;
  }
  std::vector<std::string> candidates;
  for (const auto& c : artifact->candidates()) {
    if (absl::StartsWith(c.pipeline(), kOzPrefix) &&
        !absl::StartsWith(c.pipeline(), "default<Oz>,codegen<")) {
      candidates.push_back(c.pipeline());
    }
  }
  std::ifstream in(options.corpus + "/manifest.json");
  if (!in) {
    std::fprintf(stderr, "prefix_sharing_benchmark: no manifest.json in %s\n",
                 options.corpus.c_str());
    return 2;
  }
  const nlohmann::json manifest = nlohmann::json::parse(in);
  Totals totals;
  for (const auto& m : manifest["modules"]) {
    if (m.value("split", "") != options.split) continue;
    const int64_t ir = m.value("ir_count_o0", int64_t{0});
    if (ir == 0 || ir > options.max_ir) continue;
    if (options.limit > 0 && totals.modules >= options.limit) break;
    MeasureModule(options.corpus + "/" + m.value("bitcode_path", ""),
                  m.value("name", ""), candidates, options, &totals);
  }
  std::printf(
      "\n%d candidates beginning with -Oz; %d modules, %d pairs (%d failed)\n"
      "optimised IR equal: %d of %d; object bytes equal: %d of %d\n"
      "CPU: whole candidates %.1f s, shared -Oz (%s) %.1f s: %.3fx\n",
      static_cast<int>(candidates.size()), totals.modules, totals.pairs,
      totals.failed, totals.ir_equal, totals.pairs, totals.object_equal,
      totals.pairs, totals.whole_s, options.clone ? "CloneModule" : "bitcode",
      totals.shared_s,
      totals.whole_s > 0 ? totals.shared_s / totals.whole_s : 0.0);
  return 0;
}

}  // namespace
}  // namespace phaseloop::policy_runtime

int main(int argc, char** argv) {
  return phaseloop::policy_runtime::Main(argc, argv);
}
