#include "tests/argv_fuzz/allowlist.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace phaseloop::argv_fuzz {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

}  // namespace

bool LoadAllowlist(const std::string& path, std::vector<KnownEntry>* entries,
                   std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path;
    return false;
  }
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::stringstream words(line);
    std::string word;
    KnownEntry e;
    e.line = n;
    while (words >> word) {
      if (e.name.empty()) {
        e.name = word;
      } else if (word.rfind("args=", 0) == 0) {
        e.args = Split(word.substr(5), ',');
      } else if (word.rfind("stderr-has=", 0) == 0) {
        e.stderr_has = word.substr(11);
      } else if (word.rfind("differs=", 0) == 0) {
        for (const auto& k : Split(word.substr(8), ',')) {
          if (std::find(std::begin(kKinds), std::end(kKinds), k) ==
              std::end(kKinds)) {
            *error = path + ":" + std::to_string(n) + ": unknown kind " + k;
            return false;
          }
          e.kinds.insert(k);
        }
      } else {
        *error = path + ":" + std::to_string(n) + ": cannot read '" + word +
                 "' (want NAME args=... differs=...)";
        return false;
      }
    }
    if (e.name.empty()) continue;
    if (e.kinds.empty()) {
      *error =
          path + ":" + std::to_string(n) + ": " + e.name + " lists no differs=";
      return false;
    }
    entries->push_back(std::move(e));
  }
  return true;
}

namespace {

std::vector<std::string> ExpandedArgs(const Case& c) {
  std::vector<std::string> out;
  for (const auto& a : c.args) {
    auto it =
        a.size() > 1 && a[0] == '@' ? c.files.find(a.substr(1)) : c.files.end();
    if (it == c.files.end()) {
      out.push_back(a);
      continue;
    }
    std::stringstream words(it->second);
    std::string w;
    while (words >> w) out.push_back(w);
  }
  return out;
}

}  // namespace

const KnownEntry* Covering(const std::vector<KnownEntry>& entries,
                           const Case& c, const Difference& d) {
  const std::vector<std::string> args = ExpandedArgs(c);
  for (const auto& e : entries) {
    bool ok = std::includes(e.kinds.begin(), e.kinds.end(), d.kinds.begin(),
                            d.kinds.end()) &&
              d.clang_stderr.find(e.stderr_has) != std::string::npos;
    for (const auto& tok : e.args) {
      if (!ok) break;
      const bool prefix = !tok.empty() && tok.back() == '*';
      const std::string want = prefix ? tok.substr(0, tok.size() - 1) : tok;
      ok = std::any_of(args.begin(), args.end(), [&](const std::string& a) {
        return prefix ? a.rfind(want, 0) == 0 : a == want;
      });
    }
    if (ok) return &e;
  }
  return nullptr;
}

}  // namespace phaseloop::argv_fuzz
