#ifndef PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_COMMAND_H_
#define PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_COMMAND_H_

// `phaseloop policy`: the policy store and policy artifact files.
//   serve --dir DIR [--listen HOST:PORT] [--address-file F]
//       serve the store in DIR over gRPC until SIGINT/SIGTERM; prints the
//       bound address (port 0 = pick one, the default) on stdout
//   push FILE [--channel C] [--note TEXT]          store an artifact
//   list [--json]                                  versions and channels
//   promote VERSION --channel C [--force]          point C at VERSION (a
//       version marked failed goes to stable only with --force)
//   rollback --channel C                           C back to its previous
//   mark VERSION --verdict failed|cleared --reason TEXT
//       record a verdict on a version (list shows it)
//   pull (--channel C | --version V) --out FILE
//       download, verify (checksum, structure, content hash = version) and
//       write FILE atomically. This is what a CI job runs BEFORE a build:
//       the compiler wrapper reads the file and never talks to the network.
//   show FILE [--json] [--store HOST:PORT]
//       what an artifact file holds (offline); with --store also its
//       channels and verdict in that store
//   keygen --out DIR [--comment TEXT]
//       a new ed25519 signing key: DIR/policy-signing.key (secret, 0600)
//       and DIR/policy-signing.pub (a trust file naming it)
//   sign FILE --key KEY         write FILE.sig (a detached signature)
//   verify FILE --trust-file T  check FILE.sig against the trust file
// Signing (common/signing): serve --trust-file T makes the store refuse
// artifacts not signed by a key of T (on push and pull); push sends
// FILE.sig when it exists (or --signature S); pull --trust-file T checks the
// download before writing anything and writes OUT and OUT.sig. serve
// --token-file F asks the token in F of push, promote, rollback and mark;
// serving beyond loopback needs it. Clients pass --token-file (or
// $PHASELOOP_POLICY_STORE_TOKEN_FILE).
// The other remote commands take --store HOST:PORT (or
// $PHASELOOP_POLICY_STORE). Channels: stable, candidate. VERSION may be a
// unique prefix (>= 6 hex). Exit codes: 0 success, 1 internal failure (store
// unreachable, damaged store), 2 bad input (a bad or missing file, unknown
// version or channel, nothing to roll back to).

#include <iosfwd>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::policy_store {

void AddPolicyCommand(CLI::App& app, int& exit_code);

struct PolicyServeFlags {
  std::string dir;
  std::string listen = "127.0.0.1:0";
  std::string address_file;
  std::string trust_file;  // "" = signatures not required
  std::string token_file;  // "" = no token (loopback only)
};

// Every other subcommand's flags (each uses the ones it declares).
struct PolicyFlags {
  std::string store;    // HOST:PORT
  std::string file;     // push/show input
  std::string version;  // promote/pull
  std::string channel;
  std::string note;
  std::string out;      // pull output
  std::string verdict;  // mark
  std::string reason;   // mark
  bool force = false;   // promote
  bool json = false;
  std::string token_file;      // remote commands
  std::string trust_file;      // pull, verify
  std::string signature_file;  // push (default FILE.sig when it exists)
  std::string key_file;        // sign
  std::string comment;         // keygen
};

// Blocks SIGINT and SIGTERM in the calling thread for its duration.
int RunPolicyServe(const PolicyServeFlags& flags, std::ostream& out,
                   std::ostream& err);
int RunPolicyPush(const PolicyFlags& flags, std::ostream& out,
                  std::ostream& err);
int RunPolicyList(const PolicyFlags& flags, std::ostream& out,
                  std::ostream& err);
int RunPolicyPromote(const PolicyFlags& flags, std::ostream& out,
                     std::ostream& err);
int RunPolicyMark(const PolicyFlags& flags, std::ostream& out,
                  std::ostream& err);
int RunPolicyRollback(const PolicyFlags& flags, std::ostream& out,
                      std::ostream& err);
int RunPolicyPull(const PolicyFlags& flags, std::ostream& out,
                  std::ostream& err);
int RunPolicyShow(const PolicyFlags& flags, std::ostream& out,
                  std::ostream& err);
// keygen: --out is `flags.out`.
int RunPolicyKeygen(const PolicyFlags& flags, std::ostream& out,
                    std::ostream& err);
int RunPolicySign(const PolicyFlags& flags, std::ostream& out,
                  std::ostream& err);
int RunPolicyVerify(const PolicyFlags& flags, std::ostream& out,
                    std::ostream& err);

}  // namespace phaseloop::policy_store

#endif  // PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_COMMAND_H_
