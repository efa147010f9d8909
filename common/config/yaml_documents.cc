#include "common/config/yaml_documents.h"

#include <string_view>

namespace phaseloop::config {
namespace {

bool IsMarker(std::string_view line, std::string_view marker) {
  if (line.substr(0, 3) != marker) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' ||
         line[3] == '\r';
}

// Only comments, blank lines and directives (%YAML, %TAG: they belong to
// the document the next "---" opens), no content.
bool HoldsNothing(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != '#' &&
        line[0] != '%') {
      return false;
    }
    pos = end + 1;
  }
  return true;
}

struct Piece {
  int first_line;  // 0-based line of the piece's first line
  std::string_view text;
  bool after_marker;  // opened by "---"
};

// The stream's documents, each as its text (with its first line).
std::vector<Piece> SplitDocuments(const std::string& text) {
  std::vector<Piece> pieces;
  const std::string_view all(text);
  size_t start = 0, pos = 0;
  int line_no = 0, start_line = 0;
  bool after_marker = false;
  while (pos <= all.size()) {
    size_t end = all.find('\n', pos);
    if (end == std::string_view::npos) end = all.size();
    const std::string_view line = all.substr(pos, end - pos);
    const bool starts = IsMarker(line, "---");
    const bool ends = IsMarker(line, "...");
    if (starts || ends) {
      pieces.push_back(
          {start_line, all.substr(start, pos - start), after_marker});
      // "--- value" keeps its content: the document starts on this line.
      start = starts ? pos + 3 : end + 1;
      start_line = starts ? line_no : line_no + 1;
      after_marker = starts;
      if (start > all.size()) start = all.size();
    }
    if (end == all.size()) break;
    pos = end + 1;
    ++line_no;
  }
  pieces.push_back({start_line, all.substr(start), after_marker});
  std::vector<Piece> documents;
  for (const Piece& piece : pieces) {
    if (!piece.after_marker && HoldsNothing(piece.text)) continue;
    documents.push_back(piece);
  }
  return documents;
}

}  // namespace

int SecondYamlDocumentLine(const std::string& text) {
  const std::vector<Piece> pieces = SplitDocuments(text);
  return pieces.size() < 2 ? 0 : pieces[1].first_line + 1;
}

std::vector<YAML::Node> LoadYamlDocuments(const std::string& text) {
  std::vector<YAML::Node> documents;
  for (const Piece& piece : SplitDocuments(text)) {
    // Leading newlines keep yaml-cpp's line numbers those of the stream.
    std::string source(static_cast<size_t>(piece.first_line), '\n');
    source.append(piece.text);
    documents.push_back(YAML::Load(source));
  }
  return documents;
}

}  // namespace phaseloop::config
