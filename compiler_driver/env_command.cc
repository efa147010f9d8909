#include "compiler_driver/env_command.h"

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "absl/strings/str_split.h"
#include "common/command/exit_code.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/observation/features.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/session/baselines.h"
#include "compiler_driver/session/compilation_session.h"
#include "nlohmann/json.hpp"

namespace phaseloop::compiler_driver {
namespace {

const std::vector<std::string>& KnownObservations() {
  static const std::vector<std::string> names = {
      "ir_count", "autophase", "inst_count", "text_size", "ir", "module_hash"};
  return names;
}

template <size_t N>
nlohmann::json NamedVector(const std::array<std::string_view, N>& names,
                           const std::array<int64_t, N>& values) {
  nlohmann::json object = nlohmann::json::object();
  for (size_t i = 0; i < N; ++i) object[std::string(names[i])] = values[i];
  return object;
}

template <size_t N>
void PrintNamedVector(std::ostream& out, const char* title,
                      const std::array<std::string_view, N>& names,
                      const std::array<int64_t, N>& values) {
  out << title << " (" << N << " features, non-zero shown)\n";
  int column = 0;
  for (size_t i = 0; i < N; ++i) {
    if (values[i] == 0) continue;
    std::ostringstream cell;
    cell << names[i] << "=" << values[i];
    out << "  " << std::left << std::setw(24) << cell.str();
    if (++column % 4 == 0) out << "\n";
  }
  if (column % 4 != 0) out << "\n";
}

}  // namespace

int RunEnv(const EnvFlags& flags, std::ostream& out, std::ostream& err) {
  std::optional<ir::OptLevel> level = ir::ParseOptLevel(flags.opt_level);
  if (!level) {
    err << "error: --opt-level '" << flags.opt_level
        << "' is not one of O0 O1 O2 O3 Os Oz\n";
    return command::kExitBadInput;
  }
  ir::FrontendOptions frontend;
  frontend.extra_args = flags.clang_flags;
  if (flags.convention == "research") {
    frontend.convention = ir::ModuleConvention::kResearch;
  } else if (flags.convention != "real-build") {
    err << "error: --convention '" << flags.convention
        << "' is not 'real-build' or 'research'\n";
    return command::kExitBadInput;
  }
  std::vector<std::string> observe;
  for (absl::string_view name :
       absl::StrSplit(flags.observe, ',', absl::SkipEmpty())) {
    std::string n(name);
    if (std::find(KnownObservations().begin(), KnownObservations().end(), n) ==
        KnownObservations().end()) {
      err << "error: --observe: unknown observation '" << n
          << "'; choose from "
             "ir_count,autophase,inst_count,text_size,ir,module_hash\n";
      return command::kExitBadInput;
    }
    observe.push_back(n);
  }
  const passes::ActionSpace& space = passes::ActionSpace::Llvm16();
  std::vector<int> actions;
  for (absl::string_view name :
       absl::StrSplit(flags.passes, ',', absl::SkipEmpty())) {
    std::optional<int> index = space.Find(std::string(name));
    if (!index) {
      err << "error: --passes: '" << name << "' is not an action of "
          << space.version() << "; `phaseloop actions` lists them\n";
      return command::kExitBadInput;
    }
    actions.push_back(*index);
  }

  session::SessionOptions options;
  options.opt_level = *level;
  auto session = session::CompilationSession::StartFromFile(flags.input,
                                                            frontend, options);
  if (!session.ok()) {
    err << "error: " << session.status().message() << "\n";
    return command::kExitBadInput;
  }
  if (absl::Status s = (*session)->Step(actions); !s.ok()) {
    err << "error: " << s.message() << "\n";
    return command::kExitInternal;
  }

  nlohmann::json json;
  json["input"] = flags.input;
  json["convention"] = ir::ConventionName(frontend.convention);
  json["opt_level"] = ir::OptLevelName(*level);
  json["action_space"] = space.version();
  json["passes"] = nlohmann::json::array();
  for (int a : actions) json["passes"].push_back(space.at(a).name);
  nlohmann::json obs = nlohmann::json::object();
  for (const std::string& name : observe) {
    if (name == "ir_count") obs[name] = (*session)->IrCount();
    if (name == "module_hash") obs[name] = (*session)->StateHash();
    if (name == "ir") obs[name] = (*session)->IrText();
    if (name == "autophase") {
      obs[name] =
          NamedVector(observation::AutophaseNames(), (*session)->Autophase());
    }
    if (name == "inst_count") {
      obs[name] =
          NamedVector(observation::InstCountNames(), (*session)->InstCount());
    }
    if (name == "text_size") {
      absl::StatusOr<int64_t> text = (*session)->TextSize();
      if (!text.ok()) {
        err << "error: code generation failed: " << text.status().message()
            << "\n";
        return command::kExitInternal;
      }
      obs[name] = *text;
    }
  }
  json["observations"] = obs;
  if (flags.baselines) {
    auto baselines = session::FileBaselines(flags.input, frontend);
    if (!baselines.ok()) {
      err << "error: baselines: " << baselines.status().message() << "\n";
      return command::kExitInternal;
    }
    json["baselines"] = nlohmann::json::array();
    for (const session::Baseline& b : *baselines) {
      json["baselines"].push_back({{"level", ir::OptLevelName(b.level)},
                                   {"ir_count", b.ir_count},
                                   {"text_size", b.text_size}});
    }
  }

  if (flags.json) {
    out << json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return command::kExitOk;
  }
  out << "input        " << flags.input << " ("
      << json["convention"].get<std::string>() << " module, -"
      << json["opt_level"].get<std::string>() << ")\n";
  out << "passes       "
      << (actions.empty() ? std::string("(none)") : flags.passes) << "\n";
  for (const std::string& name : observe) {
    if (name == "autophase") {
      PrintNamedVector(out, "autophase", observation::AutophaseNames(),
                       (*session)->Autophase());
    } else if (name == "inst_count") {
      PrintNamedVector(out, "inst_count", observation::InstCountNames(),
                       (*session)->InstCount());
    } else if (name == "ir") {
      out << "ir:\n" << obs["ir"].get<std::string>();
    } else {
      out << std::left << std::setw(13) << name
          << obs[name].dump(-1, ' ', false,
                            nlohmann::json::error_handler_t::replace)
          << "\n";
    }
  }
  if (flags.baselines) {
    out << "\nbaselines (clang-16 standard pipelines)\n  level  ir_count  "
           "text_size\n";
    for (const auto& b : json["baselines"]) {
      out << "  " << std::left << std::setw(5) << b["level"].get<std::string>()
          << std::right << std::setw(10) << b["ir_count"].get<int64_t>()
          << std::setw(11) << b["text_size"].get<int64_t>() << "\n";
    }
  }
  return command::kExitOk;
}

void AddEnvCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<EnvFlags>();
  CLI::App* env = app.add_subcommand(
      "env", "Load a module, apply passes in process, print observations");
  env->add_option("--input", flags->input,
                  "C/C++ source (.c .cc .cpp), LLVM bitcode (.bc) or IR (.ll)")
      ->required();
  env->add_option(
      "--passes", flags->passes,
      "comma-separated actions to apply in order (see `phaseloop actions`)");
  env->add_option("--observe", flags->observe,
                  "comma-separated: "
                  "ir_count,autophase,inst_count,text_size,ir,module_hash")
      ->capture_default_str();
  env->add_option("--opt-level", flags->opt_level,
                  "the -O level the source is compiled at (O0 O1 O2 O3 Os Oz)")
      ->capture_default_str();
  env->add_option("--convention", flags->convention,
                  "real-build (default) or research (-O0 -disable-O0-optnone)")
      ->capture_default_str();
  env->add_option(
      "--clang-flag", flags->clang_flags,
      "extra frontend flag for a source input (repeatable), e.g. -DNDEBUG");
  env->add_flag(
      "--baselines", flags->baselines,
      "also print ir_count and text_size after clang-16's O0..Oz pipelines");
  env->add_flag("--json", flags->json, "print JSON instead of a table");
  env->callback([flags, &exit_code] {
    exit_code = RunEnv(*flags, std::cout, std::cerr);
  });
}

void AddActionsCommand(CLI::App& app, int& exit_code) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("actions", "List the pass action space");
  cmd->add_flag("--json", *json, "print JSON instead of a table");
  cmd->callback([json, &exit_code] {
    const passes::ActionSpace& space = passes::ActionSpace::Llvm16();
    if (*json) {
      nlohmann::json list = nlohmann::json::array();
      for (int i = 0; i < space.size(); ++i) {
        list.push_back({{"index", i},
                        {"name", space.at(i).name},
                        {"pipeline", space.at(i).pipeline}});
      }
      std::cout << nlohmann::json{{"version", space.version()},
                                  {"actions", list}}
                       .dump(2, ' ', false,
                             nlohmann::json::error_handler_t::replace)
                << "\n";
    } else {
      std::cout << "action space " << space.version() << " (" << space.size()
                << " actions)\n";
      for (int i = 0; i < space.size(); ++i) {
        std::cout << std::setw(4) << i << "  " << std::left << std::setw(40)
                  << space.at(i).name << std::right << space.at(i).pipeline
                  << "\n";
      }
    }
    exit_code = command::kExitOk;
  });
}

}  // namespace phaseloop::compiler_driver
