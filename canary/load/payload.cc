#include "canary/load/payload.h"

#include <iterator>

#include "absl/strings/str_cat.h"
#include "canary/load/seeded_random.h"

namespace phaseloop::canary::load {
namespace {

// Common English words: a skewed choice among them gives text whose
// compression ratio is close to real prose.
constexpr const char* kWords[] = {
    "the",     "of",      "and",    "to",     "in",      "a",      "is",
    "that",    "for",     "it",     "as",     "was",     "with",   "be",
    "by",      "on",      "not",    "he",     "this",    "are",    "or",
    "his",     "from",    "at",     "which",  "but",     "have",   "an",
    "had",     "they",    "you",    "were",   "their",   "one",    "all",
    "we",      "can",     "her",    "has",    "there",   "been",   "if",
    "more",    "when",    "will",   "would",  "who",     "so",     "no",
    "request", "latency", "server", "window", "canary",  "policy", "build",
    "compile", "module",  "reward", "budget", "rollout", "kafka",  "sketch",
    "quantile"};
constexpr size_t kWordCount = std::size(kWords);

}  // namespace

std::string TextLikePayload(uint64_t seed, size_t size) {
  SeededRandom random(seed);
  std::string text;
  text.reserve(size + 16);
  int words_in_line = 0;
  while (text.size() < size) {
    const uint64_t draw = random.Next();
    // Square the uniform index: low indexes (short common words) dominate.
    const double u = static_cast<double>(draw >> 11) * 0x1.0p-53;
    if ((draw & 0x3f) == 0) {
      absl::StrAppend(&text, draw % 10000);
    } else {
      text += kWords[static_cast<size_t>(u * u * kWordCount)];
    }
    if (++words_in_line >= 12 && (draw & 0x300) == 0) {
      text += ".\n";
      words_in_line = 0;
    } else {
      text += ' ';
    }
  }
  text.resize(size);
  return text;
}

}  // namespace phaseloop::canary::load
