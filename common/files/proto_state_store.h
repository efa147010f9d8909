#ifndef PHASELOOP_COMMON_FILES_PROTO_STATE_STORE_H_
#define PHASELOOP_COMMON_FILES_PROTO_STATE_STORE_H_

// Durable states kept one directory per id, STATE_DIR/<kind>/<id>/
// state.json: a protobuf message in protobuf JSON, replaced atomically
// (atomic_file) at every save, so a process killed at any instant leaves
// the state before a save or the state after it, never half of one. The
// canary's runs (STATE_DIR/canaries/) and the loop's loops (STATE_DIR/
// loops/) are kept this way.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/files/atomic_file.h"
#include "common/files/proto_json.h"
#include "common/files/state_ids.h"
#include "common/protobuf/utf8_strings.h"

namespace phaseloop::files {

// How one kind of state is named in paths and messages.
struct StateKind {
  std::string dir;          // "canaries": STATE_DIR/canaries/<id>/
  std::string id_name;      // "canary id", for CheckStateId
  std::string owner;        // "the run's state directory", for CheckStateId
  std::string noun;         // "canary run": "no canary run 'x' (path)"
  std::string state_noun;   // "canary state": "path: not a canary state"
  std::string fresh_start;  // "run the canary again under a new --canary-id"
};

// `text` (read from `source`) as a Message; DataLoss naming the file and
// how to start afresh when it is not one.
template <typename Message>
absl::StatusOr<Message> StateFromJson(const std::string& text,
                                      const std::string& source,
                                      const StateKind& kind) {
  Message state;
  if (absl::Status parsed = ProtoFromJson(text, &state); !parsed.ok()) {
    return absl::DataLossError(absl::StrCat(
        source, ": not a ", kind.state_noun, " (", parsed.message(),
        "); it was written by another tool or damaged: move it aside and ",
        kind.fresh_start));
  }
  return state;
}

// A new state, holding only what it was started with (paths, names, the
// command line), before its first save: InvalidArgument naming the field
// when one is not UTF-8. Its JSON file cannot hold such bytes, and escaped
// (as ProtoStateStore::Save escapes text) a path would name another file:
// a resumed run would open another buffer.
inline absl::Status CheckStartsInUtf8(const google::protobuf::Message& state,
                                      const StateKind& kind) {
  std::optional<std::string> field = protobuf::FirstInvalidUtf8Field(state);
  if (!field) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the ", kind.noun, "'s ", *field,
      " is not UTF-8 text, which its JSON state file cannot keep: give "
      "paths and names in UTF-8"));
}

// Message has its id as a string field (read by kId) and created_ms().
template <typename Message, const std::string& (Message::*kId)() const>
class ProtoStateStore {
 public:
  ProtoStateStore(std::string state_dir, StateKind kind)
      : state_dir_(std::move(state_dir)), kind_(std::move(kind)) {}

  std::string Dir(const std::string& id) const {
    return absl::StrCat(state_dir_, "/", kind_.dir, "/", id);
  }
  std::string StatePath(const std::string& id) const {
    return absl::StrCat(Dir(id), "/state.json");
  }

  // NotFound when `id` has no state yet; DataLoss naming the file when it
  // cannot be parsed or names another id than its directory's (reports and
  // later saves are written under the id a state holds: an empty or a
  // "../.." one wrote outside the state directory); the read error naming
  // it when it cannot be read (a state that exists is never taken for none,
  // which would start afresh over it).
  absl::StatusOr<Message> Load(const std::string& id) const {
    const std::string path = StatePath(id);
    std::string text;
    if (absl::Status read = ReadWholeFile(path, &text); !read.ok()) {
      if (!absl::IsNotFound(read)) return read;
      return absl::NotFoundError(
          absl::StrCat("no ", kind_.noun, " '", id, "' (", path, ")"));
    }
    absl::StatusOr<Message> state = StateFromJson<Message>(text, path, kind_);
    if (state.ok() && ((*state).*kId)() != id) {
      return absl::DataLossError(absl::StrCat(
          path, ": a ", kind_.state_noun, " of '", ((*state).*kId)(),
          "', not of '", id,
          "' (the directory it is in): damaged, or copied from another; "
          "move it aside and ",
          kind_.fresh_start));
    }
    return state;
  }

  // Atomically replaces the state (its directory is created).
  absl::Status Save(const Message& state) const {
    const std::string& id = (state.*kId)();
    if (auto status = CheckStateId(id, kind_.id_name, kind_.owner);
        !status.ok()) {
      return status;
    }
    if (auto status = MakeDirectories(Dir(id)); !status.ok()) return status;
    // Text a state collects that is not UTF-8 (a child's output line, a
    // reason) is saved with each stray byte as \xNN (ProtoToJson). Paths
    // and names a state is started with are checked by its owner before
    // the first save (CheckStartsInUtf8): escaped, they would name another
    // file.
    return WriteFileAtomically(StatePath(id), ProtoToJson(state));
  }

  // Every state under the state dir, newest first (by created_ms, then id);
  // one that cannot be read or parsed is an error naming it, or, given
  // `unreadable`, is added there and the others are listed (one damaged
  // state hid every other run from `canary list`).
  absl::StatusOr<std::vector<Message>> List(
      std::vector<absl::Status>* unreadable = nullptr) const {
    std::vector<Message> states;
    for (const std::string& id :
         ListStateIds(absl::StrCat(state_dir_, "/", kind_.dir))) {
      auto state = Load(id);
      if (absl::IsNotFound(state.status())) continue;  // a directory being made
      if (!state.ok() && unreadable != nullptr) {
        unreadable->push_back(state.status());
        continue;
      }
      if (!state.ok()) return state.status();
      states.push_back(*std::move(state));
    }
    std::sort(states.begin(), states.end(),
              [](const Message& a, const Message& b) {
                if (a.created_ms() != b.created_ms()) {
                  return a.created_ms() > b.created_ms();
                }
                return (a.*kId)() < (b.*kId)();
              });
    return states;
  }

 private:
  std::string state_dir_;
  StateKind kind_;
};

}  // namespace phaseloop::files

#endif  // PHASELOOP_COMMON_FILES_PROTO_STATE_STORE_H_
