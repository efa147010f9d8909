#include "compiler_driver/cc_wrapper/response_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace phaseloop::cc_wrapper {
namespace {

bool IsGnuWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Reads the whole file; false (with errno's text in *error) when it cannot be
// opened or read (a directory opens but fails to read).
bool ReadWholeFile(const std::string& path, std::string* content,
                   std::string* error) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = errno != 0 ? std::strerror(errno) : "cannot open";
    return false;
  }
  char buffer[8192];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    content->append(buffer, static_cast<std::size_t>(in.gcount()));
    if (!in) break;
  }
  if (in.bad()) {
    *error = errno != 0 ? std::strerror(errno) : "read error";
    return false;
  }
  return true;
}

bool StartsWith(const std::string& s, const char* prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}

// Appends the expansion of `args` to *out. `depth` counts the response files
// currently being expanded.
bool ExpandInto(const std::vector<std::string>& args, int depth,
                std::vector<std::string>* out, std::string* error) {
  for (const std::string& arg : args) {
    if (arg.size() < 2 || arg[0] != '@') {
      out->push_back(arg);
      continue;
    }
    const std::string path = arg.substr(1);
    if (depth >= kMaxResponseFileDepth) {
      *error = "response file '" + path + "' is nested more than " +
               std::to_string(kMaxResponseFileDepth) +
               " levels deep (does it include itself?)";
      return false;
    }
    std::string content;
    std::string why;
    if (!ReadWholeFile(path, &content, &why)) {
      *error = "cannot read response file '" + path + "': " + why;
      return false;
    }
    // LLVM converts UTF-16 (by its byte order mark) and skips a UTF-8 one.
    if (StartsWith(content, "\xFF\xFE") || StartsWith(content, "\xFE\xFF")) {
      *error = "response file '" + path +
               "' is UTF-16; only UTF-8 response files are expanded";
      return false;
    }
    std::string_view text(content);
    if (StartsWith(content, "\xEF\xBB\xBF")) text.remove_prefix(3);
    if (!ExpandInto(TokenizeGnuCommandLine(text), depth + 1, out, error)) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<std::string> TokenizeGnuCommandLine(std::string_view text) {
  // Mirrors llvm::cl::TokenizeGNUCommandLine (LLVM 16) step by step.
  std::vector<std::string> tokens;
  std::string token;
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (token.empty()) {
      while (i < n && IsGnuWhitespace(text[i])) ++i;
      if (i == n) break;
    }
    const char c = text[i];
    if (c == '\\' && i + 1 < n) {
      token.push_back(text[++i]);
      continue;
    }
    if (c == '\'' || c == '"') {
      ++i;
      while (i < n && text[i] != c) {
        if (text[i] == '\\' && i + 1 < n) ++i;
        token.push_back(text[i]);
        ++i;
      }
      if (i == n) break;
      continue;
    }
    if (IsGnuWhitespace(c)) {
      if (!token.empty()) tokens.push_back(token);
      token.clear();
      continue;
    }
    token.push_back(c);
  }
  if (!token.empty()) tokens.push_back(token);
  return tokens;
}

std::optional<std::vector<std::string>> ExpandResponseFiles(
    const std::vector<std::string>& args, std::string* error) {
  std::vector<std::string> expanded;
  std::string why;
  if (!ExpandInto(args, 0, &expanded, &why)) {
    if (error != nullptr) *error = why;
    return std::nullopt;
  }
  return expanded;
}

}  // namespace phaseloop::cc_wrapper
