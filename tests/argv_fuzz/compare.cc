#include "tests/argv_fuzz/compare.h"

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

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  std::stringstream in(s);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// The differing middle of two texts (common leading and trailing lines
// dropped), a few lines of each side.
std::string TextDiff(const std::string& a, const std::string& b) {
  const std::vector<std::string> la = Lines(a), lb = Lines(b);
  size_t pre = 0;
  while (pre < la.size() && pre < lb.size() && la[pre] == lb[pre]) ++pre;
  size_t suf = 0;
  while (suf < la.size() - pre && suf < lb.size() - pre &&
         la[la.size() - 1 - suf] == lb[lb.size() - 1 - suf]) {
    ++suf;
  }
  std::ostringstream out;
  auto side = [&](const char* tag, const std::vector<std::string>& l) {
    const size_t n = l.size() - pre - suf;
    for (size_t i = 0; i < n && i < 8; ++i) {
      std::string line = l[pre + i];
      if (line.size() > 200) line = line.substr(0, 200) + "...";
      out << "      " << tag << " " << line << "\n";
    }
    if (n > 8) out << "      " << tag << " ... (" << n - 8 << " more lines)\n";
    if (n == 0) out << "      " << tag << " (nothing)\n";
  };
  out << "      at line " << pre + 1 << ":\n";
  side("clang  |", la);
  side("wrapper|", lb);
  return out.str();
}

std::string BytesDiff(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::ostringstream out;
  out << a.size() << " vs " << b.size() << " bytes, first difference at "
      << "offset " << i;
  return out.str();
}

bool Printable(const std::string& s) {
  for (unsigned char ch : s) {
    if (ch == 0 || (ch < 32 && ch != '\n' && ch != '\t' && ch != '\r')) {
      return false;
    }
  }
  return true;
}

}  // namespace

Difference Compare(const RunResult& clang, const RunResult& wrapper,
                   const std::string& scratch, const std::string& tmp) {
  Difference d;
  if (clang.status != wrapper.status) {
    d.kinds.insert("exit");
    d.details.push_back("exit status: clang " + std::to_string(clang.status) +
                        ", wrapper " + std::to_string(wrapper.status));
  }
  if (clang.out != wrapper.out) {
    d.kinds.insert("stdout");
    d.details.push_back("stdout: " + BytesDiff(clang.out, wrapper.out) +
                        (Printable(clang.out) && Printable(wrapper.out)
                             ? "\n" + TextDiff(clang.out, wrapper.out)
                             : ""));
  }
  const std::string err_a = Normalise(clang.err, scratch, tmp);
  const std::string err_b = Normalise(wrapper.err, scratch, tmp);
  d.clang_stderr = err_a;
  if (err_a != err_b) {
    std::vector<std::string> sorted_a = Lines(err_a), sorted_b = Lines(err_b);
    std::sort(sorted_a.begin(), sorted_a.end());
    std::sort(sorted_b.begin(), sorted_b.end());
    d.kinds.insert(sorted_a == sorted_b ? "stderr-order" : "stderr");
    d.details.push_back("stderr:\n" + TextDiff(err_a, err_b));
  }
  std::set<std::string> only_a, only_b;
  for (const auto& dir : clang.tree.dirs) {
    if (!wrapper.tree.dirs.count(dir)) only_a.insert(dir + "/");
  }
  for (const auto& dir : wrapper.tree.dirs) {
    if (!clang.tree.dirs.count(dir)) only_b.insert(dir + "/");
  }
  for (const auto& [name, bytes] : clang.tree.files) {
    auto it = wrapper.tree.files.find(name);
    if (it == wrapper.tree.files.end()) {
      only_a.insert(name);
    } else if (it->second != bytes) {
      d.kinds.insert("bytes");
      d.details.push_back("file " + name +
                          " differs: " + BytesDiff(bytes, it->second));
    }
  }
  for (const auto& [name, bytes] : wrapper.tree.files) {
    if (!clang.tree.files.count(name)) only_b.insert(name);
  }
  auto join = [](const std::set<std::string>& s) {
    std::string out;
    for (const auto& x : s) out += (out.empty() ? "" : " ") + x;
    return out;
  };
  if (!only_a.empty() || !only_b.empty()) {
    d.kinds.insert("files");
    d.details.push_back("files only clang made: [" + join(only_a) +
                        "], only the wrapper made: [" + join(only_b) + "]");
  }
  return d;
}

}  // namespace phaseloop::argv_fuzz
