#include "compiler_driver/policy_runtime/policy_artifact.h"

#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/files/atomic_file.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/passes/pipeline_check.h"
#include "compiler_driver/policy_runtime/state_features.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace phaseloop::policy_runtime {
namespace {

std::string Checksum(absl::string_view bytes) {
  return ir::ContentHash(std::string_view(bytes.data(), bytes.size()));
}

std::string DeterministicBytes(const v1::PolicyArtifact& artifact) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  artifact.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

constexpr char kFixHint[] =
    "re-export it from the learner (phaseloop train) or re-pull it "
    "from the policy store (phaseloop policy pull)";

// Reads one "\n"-terminated header line starting at *pos.
bool NextLine(absl::string_view bytes, size_t* pos, absl::string_view* line) {
  size_t end = bytes.find('\n', *pos);
  if (end == absl::string_view::npos || end - *pos > 200) return false;
  *line = bytes.substr(*pos, end - *pos);
  *pos = end + 1;
  return true;
}

bool HeaderField(absl::string_view line, absl::string_view key,
                 absl::string_view* value) {
  if (!absl::ConsumePrefix(&line, key) || !absl::ConsumePrefix(&line, " ")) {
    return false;
  }
  *value = line;
  return true;
}

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(what);
}

bool AllFinite(const google::protobuf::RepeatedField<float>& values) {
  for (float v : values) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

}  // namespace

std::string SerializePolicyArtifactFile(const v1::PolicyArtifact& artifact) {
  const std::string payload = DeterministicBytes(artifact);
  return absl::StrCat(kPolicyFileMagic, "\nformat_version ",
                      artifact.format_version(), "\npayload_bytes ",
                      payload.size(), "\npayload_blake3 ", Checksum(payload),
                      "\n", payload);
}

bool LooksLikePolicyArtifactFile(absl::string_view file_bytes) {
  return absl::StartsWith(file_bytes, absl::StrCat(kPolicyFileMagic, "\n"));
}

absl::StatusOr<v1::PolicyArtifact> ParsePolicyArtifactFile(
    absl::string_view file_bytes, absl::string_view source_name) {
  auto fail = [&](absl::StatusCode code, absl::string_view what) {
    return absl::Status(code, absl::StrCat("policy artifact ", source_name,
                                           ": ", what, "; ", kFixHint));
  };
  size_t pos = 0;
  absl::string_view line;
  if (!NextLine(file_bytes, &pos, &line) || line != kPolicyFileMagic) {
    return fail(absl::StatusCode::kInvalidArgument,
                absl::StrCat("not a policy artifact file (it does not start "
                             "with the line \"",
                             kPolicyFileMagic, "\")"));
  }
  absl::string_view value;
  uint32_t version = 0;
  if (!NextLine(file_bytes, &pos, &line) ||
      !HeaderField(line, "format_version", &value) ||
      !absl::SimpleAtoi(value, &version)) {
    return fail(
        absl::StatusCode::kDataLoss,
        "the header is truncated or damaged (no format_version line, or "
        "one whose value is not a version number)");
  }
  if (version != kPolicyFormatVersion &&
      version != kPolicyFormatVersionSingleExcluded) {
    return fail(absl::StatusCode::kFailedPrecondition,
                absl::StrCat("format version ", version,
                             " is not a version this driver reads (",
                             kPolicyFormatVersion, " or ",
                             kPolicyFormatVersionSingleExcluded,
                             "); use a driver of the same release"));
  }
  uint64_t payload_bytes = 0;
  if (!NextLine(file_bytes, &pos, &line) ||
      !HeaderField(line, "payload_bytes", &value) ||
      !absl::SimpleAtoi(value, &payload_bytes)) {
    return fail(absl::StatusCode::kDataLoss,
                "the header is truncated or damaged (no payload_bytes line, or "
                "one whose value is not a byte count)");
  }
  absl::string_view checksum;
  if (!NextLine(file_bytes, &pos, &line) ||
      !HeaderField(line, "payload_blake3", &checksum) ||
      checksum.size() != 32) {
    return fail(absl::StatusCode::kDataLoss,
                "the header is truncated or damaged (no payload_blake3 line)");
  }
  absl::string_view payload = file_bytes.substr(pos);
  if (payload.size() != payload_bytes) {
    return fail(absl::StatusCode::kDataLoss,
                absl::StrCat(payload.size() < payload_bytes
                                 ? "the file is truncated: "
                                 : "the file has trailing bytes: ",
                             "the header announces ", payload_bytes,
                             " payload bytes, the file has ", payload.size()));
  }
  if (Checksum(payload) != checksum) {
    return fail(absl::StatusCode::kDataLoss,
                "the payload checksum does not match the header (the file "
                "was modified or damaged after export)");
  }
  v1::PolicyArtifact artifact;
  if (!artifact.ParseFromArray(payload.data(),
                               static_cast<int>(payload.size()))) {
    return fail(absl::StatusCode::kDataLoss,
                "the payload is not a valid phaseloop.v1.PolicyArtifact");
  }
  if (artifact.format_version() != version) {
    return fail(absl::StatusCode::kDataLoss,
                absl::StrCat("the header says format version ", version,
                             ", the payload ", artifact.format_version()));
  }
  if (absl::Status valid = ValidatePolicyArtifact(artifact); !valid.ok()) {
    absl::Status failed =
        fail(absl::StatusCode::kInvalidArgument, valid.message());
    // A refused pipeline stays recognisable (passes::IsRefusedPipeline).
    valid.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
      failed.SetPayload(url, payload);
    });
    return failed;
  }
  return artifact;
}

absl::StatusOr<v1::PolicyArtifact> ReadPolicyArtifactFile(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "policy artifact ", path, ": cannot open it (", std::strerror(errno),
        "); check the path, or pull it with phaseloop policy pull"));
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return ParsePolicyArtifactFile(bytes.str(), path);
}

absl::Status WritePolicyArtifactFile(const v1::PolicyArtifact& artifact,
                                     const std::string& path) {
  if (absl::Status valid = ValidatePolicyArtifact(artifact); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to write policy artifact ", path, ": ", valid.message()));
  }
  return files::WriteFileAtomically(path,
                                    SerializePolicyArtifactFile(artifact));
}

std::string PolicyVersionOf(const v1::PolicyArtifact& artifact) {
  return Checksum(DeterministicBytes(artifact));
}

absl::Status ValidatePolicyArtifact(const v1::PolicyArtifact& artifact) {
  if (artifact.format_version() != kPolicyFormatVersion &&
      artifact.format_version() != kPolicyFormatVersionSingleExcluded) {
    return Invalid(absl::StrCat("format_version is ", artifact.format_version(),
                                ", expected ", kPolicyFormatVersion, " or ",
                                kPolicyFormatVersionSingleExcluded));
  }
  const std::string& objective = artifact.objective();
  if (!IsObjectSizeObjective(objective) && objective != kObjectiveIrCount &&
      objective != kObjectiveRuntime) {
    return Invalid(absl::StrCat("unknown objective \"", objective,
                                "\" (expected alloc_size, text_size, "
                                "ir_count or runtime)"));
  }
  const bool stepwise = artifact.formulation() == kFormulationStepwise;
  if (!stepwise && artifact.formulation() != kFormulationCandidate) {
    return Invalid(absl::StrCat("unknown formulation \"",
                                artifact.formulation(),
                                "\" (expected stepwise or candidate)"));
  }
  const int num_actions = artifact.action_names_size();
  if (num_actions == 0) return Invalid("action_names is empty");
  // Checked here, not only when a compile loads it: `policy show`, the
  // store and `toolchain bazel` accepted an artifact every compile then
  // refused (falling back to plain clang on every file).
  const passes::ActionSpace& space = passes::ActionSpace::Llvm16();
  for (const std::string& name : artifact.action_names()) {
    if (!space.Find(name)) {
      return Invalid(absl::StrCat(
          "the policy uses action '", name,
          "', which is not in this driver's action space ", space.version(),
          " (the artifact says ", artifact.action_space_version(),
          "); retrain it for this action space"));
    }
  }
  const int state_dim = StateDim(num_actions);
  const v1::FeatureNormalization& norm = artifact.normalization();
  if (norm.layout() != kStateLayoutV1) {
    return Invalid(absl::StrCat("unknown state layout \"", norm.layout(),
                                "\" (this driver builds \"", kStateLayoutV1,
                                "\")"));
  }
  if (norm.mean_size() != state_dim || norm.scale_size() != state_dim) {
    return Invalid(absl::StrCat("normalization has ", norm.mean_size(),
                                " means and ", norm.scale_size(),
                                " scales; the state of ", num_actions,
                                " actions has ", state_dim, " dimensions"));
  }
  if (!AllFinite(norm.mean()) || !AllFinite(norm.scale())) {
    return Invalid("normalization holds a NaN or infinite value");
  }
  if (artifact.layers_size() == 0) return Invalid("the network has no layers");
  int width = state_dim;
  for (int i = 0; i < artifact.layers_size(); ++i) {
    const v1::DenseLayer& layer = artifact.layers(i);
    if (layer.inputs() != width) {
      return Invalid(absl::StrCat("layer ", i, " takes ", layer.inputs(),
                                  " inputs but receives ", width));
    }
    if (layer.outputs() <= 0) {
      return Invalid(
          absl::StrCat("layer ", i, " has ", layer.outputs(), " outputs"));
    }
    const int64_t expected =
        static_cast<int64_t>(layer.inputs()) * layer.outputs();
    if (layer.weights_size() != expected ||
        layer.bias_size() != layer.outputs()) {
      return Invalid(absl::StrCat(
          "layer ", i, " (", layer.outputs(), "x", layer.inputs(), ") has ",
          layer.weights_size(), " weights and ", layer.bias_size(),
          " biases, expected ", expected, " and ", layer.outputs()));
    }
    if (!v1::DenseLayer::Activation_IsValid(layer.activation())) {
      return Invalid(absl::StrCat("layer ", i, " has unknown activation ",
                                  layer.activation()));
    }
    if (!AllFinite(layer.weights()) || !AllFinite(layer.bias())) {
      return Invalid(
          absl::StrCat("layer ", i, " holds a NaN or infinite weight"));
    }
    width = layer.outputs();
  }
  for (int c = 0; c < artifact.candidates_size(); ++c) {
    const v1::CandidatePipeline& candidate = artifact.candidates(c);
    if (candidate.pipeline().empty()) {
      return Invalid(absl::StrCat("candidate ", c, " (\"", candidate.name(),
                                  "\") has an empty pipeline"));
    }
    // A pass of the action space no policy may run (refused after the
    // artifact was trained: the Attributor) leaves its candidate unused
    // (ArtifactPolicy never measures or chooses it); anything else is no
    // artifact of this driver's.
    if (absl::Status allowed = passes::CheckWholePolicyPipeline(
            candidate.pipeline(),
            absl::StrCat("candidate ", c, " (\"", candidate.name(), "\")"));
        !allowed.ok() && !passes::IsNotForPolicies(allowed)) {
      return allowed;
    }
    for (int32_t action : candidate.actions()) {
      if (action < 0 || action >= num_actions) {
        return Invalid(absl::StrCat("candidate ", c, " (\"", candidate.name(),
                                    "\") uses action ", action,
                                    ", outside [0, ", num_actions, ")"));
      }
    }
  }
  if (stepwise) {
    if (width != num_actions) {
      return Invalid(
          absl::StrCat("a stepwise network must output one score "
                       "per action (",
                       num_actions, "), this one outputs ", width));
    }
    // Each step runs one action on the module, in every compile: bounded
    // like a pipeline's elements (passes/pipeline_check.h).
    if (artifact.max_steps() < 1 || artifact.max_steps() > kMaxStepwiseSteps) {
      return Invalid(absl::StrCat("a stepwise policy needs max_steps in [1, ",
                                  kMaxStepwiseSteps, "], got ",
                                  artifact.max_steps()));
    }
  } else {
    if (artifact.candidates_size() == 0) {
      return Invalid("a candidate policy has no candidates");
    }
    if (width != artifact.candidates_size()) {
      return Invalid(absl::StrCat(
          "a candidate network must output one score "
          "per candidate (",
          artifact.candidates_size(), "), this one outputs ", width));
    }
  }
  if (artifact.default_top_k() < 0 || artifact.max_steps() < 0) {
    return Invalid("default_top_k and max_steps must not be negative");
  }
  const float margin = artifact.single_abstain_margin();
  if (!std::isfinite(margin) || margin < 0) {
    return Invalid(absl::StrCat("single_abstain_margin is ", margin,
                                "; it must be a finite number >= 0"));
  }
  if (margin > 0 && (stepwise || OzCandidateIndex(artifact) < 0)) {
    return Invalid(absl::StrCat(
        "single_abstain_margin ", margin,
        " needs a candidate policy with a -Oz candidate (pipeline ",
        kOzPipeline, ")"));
  }
  for (const v1::CandidatePipeline& c : artifact.candidates()) {
    if (!c.single_excluded()) continue;
    if (artifact.format_version() != kPolicyFormatVersionSingleExcluded) {
      return Invalid(absl::StrCat(
          "candidate ", c.name(),
          " is excluded from single mode, which needs format_version ",
          kPolicyFormatVersionSingleExcluded, " (a format-",
          kPolicyFormatVersion, " driver would not see the exclusion)"));
    }
    // single falls back to -Oz when it may not take its pick.
    if (c.pipeline() == kOzPipeline || OzCandidateIndex(artifact) < 0) {
      return Invalid(absl::StrCat(
          "candidate ", c.name(),
          " is excluded from single mode; that needs a -Oz candidate "
          "(pipeline ",
          kOzPipeline, "), which itself may not be excluded"));
    }
  }
  return absl::OkStatus();
}

SingleModeChoice ChooseSingleMode(const float* scores, int n, int oz,
                                  double margin,
                                  const std::vector<bool>& excluded) {
  assert(excluded.empty() || excluded.size() == static_cast<size_t>(n));
  SingleModeChoice choice;
  for (int c = 0; c < n; ++c) {
    if (!excluded.empty() && excluded[c]) continue;
    if (choice.best < 0 || scores[c] > scores[choice.best]) choice.best = c;
  }
  if (choice.best < 0) choice.best = oz;
  choice.pick = choice.best;
  if (oz >= 0 && oz < n && choice.best != oz &&
      scores[choice.best] - scores[oz] < margin) {
    choice.pick = oz;
  }
  return choice;
}

std::vector<bool> SingleExcludedOf(const v1::PolicyArtifact& artifact) {
  std::vector<bool> excluded;
  for (const v1::CandidatePipeline& c : artifact.candidates()) {
    excluded.push_back(c.single_excluded());
  }
  return excluded;
}

int OzCandidateIndex(const v1::PolicyArtifact& artifact) {
  for (int c = 0; c < artifact.candidates_size(); ++c) {
    if (artifact.candidates(c).pipeline() == kOzPipeline) return c;
  }
  return -1;
}

}  // namespace phaseloop::policy_runtime
