#include "offline_rl/policy_store/policy_command.h"

#include <unistd.h>

#include <iostream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/command/exit_code.h"
#include "common/command/stop_signals.h"
#include "common/files/atomic_file.h"
#include "common/signing/service_token.h"
#include "common/signing/trust_file.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "offline_rl/policy_store/directory_policy_store.h"
#include "offline_rl/policy_store/policy_show.h"
#include "offline_rl/policy_store/policy_store.h"
#include "offline_rl/policy_store/policy_store_client.h"
#include "offline_rl/policy_store/policy_store_service.h"

namespace phaseloop::policy_store {

int RunPolicyServe(const PolicyServeFlags& flags, std::ostream& out,
                   std::ostream& err) {
  constexpr char kName[] = "phaseloop policy serve: ";
  // Block the stop signals before gRPC starts its threads (they inherit the
  // mask), so only sigwait below receives them.
  command::BlockedStopSignals stop_signals;

  StoreOptions options;
  if (!flags.trust_file.empty()) {
    absl::StatusOr<signing::TrustedKeys> trust =
        signing::TrustedKeys::Read(flags.trust_file);
    if (!trust.ok()) {
      err << kName << "--trust-file: " << trust.status().message() << "\n";
      return command::kExitBadInput;
    }
    options.trust =
        std::make_shared<const signing::TrustedKeys>(*std::move(trust));
  }
  ServerOptions server_options;
  if (!flags.token_file.empty()) {
    absl::StatusOr<std::string> token =
        signing::ReadTokenFile(flags.token_file);
    if (!token.ok()) {
      err << kName << "--token-file: " << token.status().message() << "\n";
      return command::kExitBadInput;
    }
    server_options.token = *std::move(token);
  }
  absl::StatusOr<std::unique_ptr<PolicyStore>> store =
      OpenPolicyStore(flags.dir, options);
  if (!store.ok()) {
    err << kName << "--dir " << flags.dir << ": " << store.status().message()
        << "\n";
    return absl::IsDataLoss(store.status()) ? command::kExitInternal
                                            : command::kExitBadInput;
  }
  absl::StatusOr<std::unique_ptr<PolicyStoreServer>> server =
      PolicyStoreServer::Start(store->get(), flags.listen, server_options);
  if (!server.ok()) {
    err << kName << server.status().message() << "\n";
    return command::kExitBadInput;
  }
  const std::string address = (*server)->address();
  if (!flags.address_file.empty()) {
    absl::Status written =
        files::WriteFileAtomically(flags.address_file, address + "\n");
    if (!written.ok()) {
      err << kName << "--address-file: " << written.message() << "\n";
      return command::kExitBadInput;
    }
  }
  out << address << std::endl;
  absl::StatusOr<PolicyListing> listing = (*store)->List();
  err << kName << "serving " << flags.dir << " ("
      << (listing.ok() ? listing->policies.size() : 0) << " versions) at "
      << address
      << (options.trust ? absl::StrCat("; signatures by ",
                                       options.trust->KeyIdList(), " required")
                        : std::string("; signatures not checked"))
      << (server_options.token.empty() ? "" : "; token required to change it")
      << "; SIGINT or SIGTERM stops" << std::endl;

  const int signal_number = stop_signals.Wait();
  (*server)->Shutdown(absl::Seconds(5));
  if (!flags.address_file.empty()) unlink(flags.address_file.c_str());
  err << kName << "stopped by signal " << signal_number << "\n";
  return command::kExitOk;
}

int RunPolicyShow(const PolicyFlags& flags, std::ostream& out,
                  std::ostream& err) {
  std::string bytes;
  absl::Status read = files::ReadWholeFile(flags.file, &bytes);
  if (!read.ok()) {
    err << "phaseloop policy show: " << read.message() << "\n";
    return command::kExitBadInput;
  }
  absl::StatusOr<v1::PolicyArtifact> artifact =
      policy_runtime::ParsePolicyArtifactFile(bytes, flags.file);
  if (!artifact.ok()) {
    err << "phaseloop policy show: " << artifact.status().message() << "\n";
    return command::kExitBadInput;
  }
  const std::string version = policy_runtime::PolicyVersionOf(*artifact);
  // With --store: what the store records about this version (the artifact
  // itself cannot say whether a canary failed it).
  const StoredPolicy* stored = nullptr;
  PolicyListing listing;
  if (!flags.store.empty()) {
    absl::StatusOr<std::unique_ptr<PolicyStore>> store =
        ConnectPolicyStore(flags.store);
    absl::StatusOr<PolicyListing> listed =
        store.ok() ? (*store)->List() : store.status();
    if (!listed.ok()) {
      err << "phaseloop policy show: --store " << flags.store << ": "
          << listed.status().message() << "\n";
      return command::kExitInternal;
    }
    listing = std::move(*listed);
    for (const StoredPolicy& p : listing.policies) {
      if (p.policy_version == version) stored = &p;
    }
  }
  if (flags.json) {
    nlohmann::json doc = DescribePolicyJson(*artifact, version, bytes.size());
    if (!flags.store.empty()) {
      nlohmann::json in_store = {{"address", flags.store},
                                 {"stored", stored != nullptr}};
      if (stored != nullptr) {
        in_store["channels"] = stored->channels;
        in_store["verdict"] = nullptr;
        if (!stored->verdict.verdict.empty()) {
          in_store["verdict"] = {
              {"verdict", stored->verdict.verdict},
              {"reason", stored->verdict.reason},
              {"marked_unix_ms", stored->verdict.marked_unix_ms}};
        }
      }
      doc["store"] = in_store;
    }
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << DescribePolicyText(*artifact, version, bytes.size());
    if (!flags.store.empty() && stored == nullptr) {
      out << "store " << flags.store << ": not stored\n";
    } else if (stored != nullptr) {
      out << "store " << flags.store << ": channels "
          << (stored->channels.empty() ? "-"
                                       : absl::StrJoin(stored->channels, ","))
          << "; verdict "
          << (stored->verdict.verdict.empty()
                  ? std::string("none")
                  : absl::StrCat(stored->verdict.verdict, " (",
                                 stored->verdict.reason, ")"))
          << "\n";
    }
  }
  return command::kExitOk;
}

namespace {

using RunFunction = int (*)(const PolicyFlags&, std::ostream&, std::ostream&);

// Adds a subcommand whose flags live in a fresh PolicyFlags.
std::pair<CLI::App*, std::shared_ptr<PolicyFlags>> AddSubcommand(
    CLI::App& policy, const char* name, const char* help, RunFunction run,
    bool remote, int& exit_code) {
  auto flags = std::make_shared<PolicyFlags>();
  CLI::App* command = policy.add_subcommand(name, help);
  if (remote) {
    command
        ->add_option("--store", flags->store,
                     "policy store address HOST:PORT (what `phaseloop policy "
                     "serve` prints)")
        ->envname(kPolicyStoreEnv)
        ->required();
    command
        ->add_option("--token-file", flags->token_file,
                     "file holding the store's token (needed by push, "
                     "promote, rollback and mark when the store asks one)")
        ->envname(kPolicyStoreTokenFileEnv);
  }
  command->add_flag("--json", flags->json, "print JSON");
  command->callback([flags, run, &exit_code] {
    exit_code = run(*flags, std::cout, std::cerr);
  });
  return {command, flags};
}

}  // namespace

void AddPolicyCommand(CLI::App& app, int& exit_code) {
  CLI::App* policy = app.add_subcommand(
      "policy", "Policy artifacts and the policy store (versions, channels)");
  policy->require_subcommand(1);

  auto serve_flags = std::make_shared<PolicyServeFlags>();
  CLI::App* serve = policy->add_subcommand(
      "serve",
      "Serve the policy store in --dir over gRPC until SIGINT/SIGTERM; prints "
      "the bound address (the --store of the other commands)");
  serve
      ->add_option("--dir", serve_flags->dir,
                   "store directory (created if missing)")
      ->required();
  serve
      ->add_option("--listen", serve_flags->listen,
                   "HOST:PORT to listen on; port 0 picks a free one")
      ->capture_default_str();
  serve->add_option("--address-file", serve_flags->address_file,
                    "also write the bound address to FILE (atomically; "
                    "removed on a clean stop)");
  serve->add_option("--trust-file", serve_flags->trust_file,
                    "accept only artifacts signed by a key of this trust "
                    "file, on push and on pull");
  serve->add_option("--token-file", serve_flags->token_file,
                    "ask this token of push, promote, rollback and mark "
                    "(required when --listen is not loopback)");
  serve->callback([serve_flags, &exit_code] {
    exit_code = RunPolicyServe(*serve_flags, std::cout, std::cerr);
  });

  auto [push, push_flags] =
      AddSubcommand(*policy, "push", "Verify an artifact file and store it",
                    RunPolicyPush, true, exit_code);
  push->add_option("file", push_flags->file, "artifact file")->required();
  push->add_option("--channel", push_flags->channel,
                   "then point this channel (stable, candidate) at it");
  push->add_option("--note", push_flags->note, "text kept with the version");
  push->add_option("--signature", push_flags->signature_file,
                   "its detached signature (default: FILE.sig when it "
                   "exists)");

  AddSubcommand(*policy, "list",
                "Stored versions (objective, algorithm, metrics, push time) "
                "and channels",
                RunPolicyList, true, exit_code);

  auto [promote, promote_flags] =
      AddSubcommand(*policy, "promote", "Point a channel at a stored version",
                    RunPolicyPromote, true, exit_code);
  promote
      ->add_option("version", promote_flags->version,
                   "policy version (or a unique prefix of >= 6 digits)")
      ->required();
  promote->add_option("--channel", promote_flags->channel, "stable, candidate")
      ->required();
  promote->add_flag("--force", promote_flags->force,
                    "promote to stable even a version marked failed");

  auto [mark, mark_flags] = AddSubcommand(
      *policy, "mark",
      "Record a verdict on a stored version: failed (a canary failed it; "
      "stable refuses it without --force) or cleared (withdraw the mark)",
      RunPolicyMark, true, exit_code);
  mark->add_option("version", mark_flags->version,
                   "policy version (or a unique prefix of >= 6 digits)")
      ->required();
  mark->add_option("--verdict", mark_flags->verdict, "failed, cleared")
      ->required();
  mark->add_option("--reason", mark_flags->reason,
                   "why (kept with the verdict; e.g. the canary's judgement)")
      ->required();

  auto [rollback, rollback_flags] = AddSubcommand(
      *policy, "rollback", "Point a channel back at its previous version",
      RunPolicyRollback, true, exit_code);
  rollback
      ->add_option("--channel", rollback_flags->channel, "stable, candidate")
      ->required();

  auto [pull, pull_flags] = AddSubcommand(
      *policy, "pull",
      "Download a channel's or version's artifact, verify it and write it "
      "atomically (run by CI before a build; the compiler never fetches)",
      RunPolicyPull, true, exit_code);
  pull->add_option("--channel", pull_flags->channel, "stable, candidate");
  pull->add_option("--version", pull_flags->version, "policy version");
  pull->add_option("--out", pull_flags->out, "artifact file to write")
      ->required();
  pull->add_option("--trust-file", pull_flags->trust_file,
                   "write nothing unless the artifact is signed by a key of "
                   "this trust file")
      ->envname("PHASELOOP_TRUST_FILE");

  auto [show, show_flags] = AddSubcommand(
      *policy, "show",
      "Describe an artifact file offline: version, objective, shapes, "
      "metadata, candidates",
      RunPolicyShow, false, exit_code);
  show->add_option("file", show_flags->file, "artifact file")->required();
  show->add_option("--store", show_flags->store,
                   "also show what the policy store at HOST:PORT records "
                   "about this version (channels, verdict)");

  auto [keygen, keygen_flags] = AddSubcommand(
      *policy, "keygen",
      "Generate an ed25519 key that signs policies: DIR/policy-signing.key "
      "(secret, mode 0600) and DIR/policy-signing.pub (a trust file naming "
      "it)",
      RunPolicyKeygen, false, exit_code);
  keygen->add_option("--out", keygen_flags->out, "directory of the key files")
      ->required();
  keygen->add_option("--comment", keygen_flags->comment,
                     "text after the key in the .pub line (who, when)");

  auto [sign, sign_flags] =
      AddSubcommand(*policy, "sign", "Sign an artifact file: writes FILE.sig",
                    RunPolicySign, false, exit_code);
  sign->add_option("file", sign_flags->file, "artifact file")->required();
  sign->add_option("--key", sign_flags->key_file,
                   "secret key file (policy-signing.key)")
      ->required();

  auto [verify, verify_flags] = AddSubcommand(
      *policy, "verify",
      "Check an artifact's FILE.sig against a trust file, as the wrapper "
      "does",
      RunPolicyVerify, false, exit_code);
  verify->add_option("file", verify_flags->file, "artifact file")->required();
  verify->add_option("--trust-file", verify_flags->trust_file, "trust file")
      ->envname("PHASELOOP_TRUST_FILE")
      ->required();
  verify->add_option("--signature", verify_flags->signature_file,
                     "the signature (default FILE.sig)");
}

}  // namespace phaseloop::policy_store
