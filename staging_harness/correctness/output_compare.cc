#include "staging_harness/correctness/output_compare.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace phaseloop::correctness {
namespace {

constexpr size_t kChunk = 1 << 16;  // bytes read at a time from each file
constexpr int64_t kExcerptBefore = 20;
constexpr int64_t kExcerptLength = 48;
constexpr size_t kTokenShown = 40;

struct FileCloser {
  void operator()(FILE* f) const { fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;

// One output of one run, for messages: "the candidate run's file 'out.txt'".
struct Output {
  std::string path;
  std::string label;
};

absl::StatusOr<File> Open(const Output& output) {
  FILE* f = fopen(output.path.c_str(), "rb");
  if (f == nullptr) {
    const int error = errno;
    std::string message =
        absl::StrCat("cannot read ", output.label, " at '", output.path,
                     "': ", strerror(error),
                     "; the runner must keep every output it compares");
    return error == ENOENT ? absl::NotFoundError(message)
                           : absl::InvalidArgumentError(message);
  }
  return File(f);
}

absl::Status ReadError(const Output& output) {
  return absl::InvalidArgumentError(
      absl::StrCat("error reading ", output.label, " at '", output.path, "'"));
}

// A byte as the detail shows it inside quotes.
void AppendShown(unsigned char c, std::string* out) {
  if (c == '\'' || c == '\\') {
    out->push_back('\\');
    out->push_back(static_cast<char>(c));
  } else if (c == '\t') {
    out->append("\\t");
  } else if (c == '\r') {
    out->append("\\r");
  } else if (c < 0x20 || c == 0x7f) {
    absl::StrAppendFormat(out, "\\x%02x", c);
  } else {
    out->push_back(static_cast<char>(c));
  }
}

bool IsBinary(unsigned char c) {
  return c == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r');
}

// What a file holds around a difference: its bytes from `from` to the end of
// that line (at most kExcerptLength), whether `at` is past its end, and
// whether they look binary.
struct Excerpt {
  std::string bytes;
  bool ends_at_difference = false;
  bool binary = false;
  int byte_at = -1;  // the byte at the difference, -1 past the end
};

absl::StatusOr<Excerpt> ReadExcerpt(const Output& output, int64_t from,
                                    int64_t at) {
  absl::StatusOr<File> file = Open(output);
  if (!file.ok()) return file.status();
  Excerpt e;
  if (fseeko(file->get(), from, SEEK_SET) != 0) return ReadError(output);
  std::vector<char> buffer(at - from + kExcerptLength);
  const size_t n = fread(buffer.data(), 1, buffer.size(), file->get());
  if (ferror(file->get())) return ReadError(output);
  const size_t offset = static_cast<size_t>(at - from);
  e.ends_at_difference = n <= offset;
  if (!e.ends_at_difference) {
    e.byte_at = static_cast<unsigned char>(buffer[offset]);
  }
  for (size_t i = 0; i < n && i < offset + kExcerptLength; ++i) {
    const unsigned char c = static_cast<unsigned char>(buffer[i]);
    if (c == '\n' && i >= offset) break;
    e.binary = e.binary || IsBinary(c);
    e.bytes.push_back(static_cast<char>(c));
  }
  return e;
}

std::string Quoted(const Excerpt& e, bool elided_before) {
  if (e.bytes.empty() && e.ends_at_difference) return "the end of the output";
  std::string out = "'";
  if (elided_before) out.append("...");
  for (char c : e.bytes) AppendShown(static_cast<unsigned char>(c), &out);
  out.append("'");
  if (e.ends_at_difference) out.append(" (end of output)");
  return out;
}

// The first difference at byte `at`, on line `line` (1-based) that starts at
// byte `line_start`, described from both files.
absl::StatusOr<std::string> DescribeByteDifference(const Output& reference,
                                                   const Output& candidate,
                                                   int64_t at, int64_t line,
                                                   int64_t line_start) {
  const int64_t from = std::max(line_start, at - kExcerptBefore);
  absl::StatusOr<Excerpt> expected = ReadExcerpt(reference, from, at);
  if (!expected.ok()) return expected.status();
  absl::StatusOr<Excerpt> got = ReadExcerpt(candidate, from, at);
  if (!got.ok()) return got.status();
  if (expected->binary || got->binary) {
    auto byte = [](const Excerpt& e) {
      return e.byte_at < 0 ? std::string("the end of the output")
                           : absl::StrFormat("0x%02x", e.byte_at);
    };
    return absl::StrCat("byte ", at, ": expected ", byte(*expected), ", got ",
                        byte(*got));
  }
  return absl::StrCat("line ", line, ": expected ",
                      Quoted(*expected, from > line_start), ", got ",
                      Quoted(*got, from > line_start));
}

// Byte equality, streamed; the first difference's description, or nullopt.
absl::StatusOr<std::optional<std::string>> CompareExact(
    const Output& reference, const Output& candidate) {
  absl::StatusOr<File> ref = Open(reference);
  if (!ref.ok()) return ref.status();
  absl::StatusOr<File> cand = Open(candidate);
  if (!cand.ok()) return cand.status();
  std::vector<char> a(kChunk), b(kChunk);
  int64_t offset = 0, line = 1, line_start = 0;
  for (;;) {
    const size_t na = fread(a.data(), 1, kChunk, ref->get());
    if (ferror(ref->get())) return ReadError(reference);
    const size_t nb = fread(b.data(), 1, kChunk, cand->get());
    if (ferror(cand->get())) return ReadError(candidate);
    const size_t common = std::min(na, nb);
    const size_t same =
        std::mismatch(a.begin(), a.begin() + common, b.begin()).first -
        a.begin();
    for (size_t i = 0; i < same; ++i) {
      if (a[i] == '\n') {
        ++line;
        line_start = offset + static_cast<int64_t>(i) + 1;
      }
    }
    if (same < common || na != nb) {
      absl::StatusOr<std::string> detail = DescribeByteDifference(
          reference, candidate, offset + static_cast<int64_t>(same), line,
          line_start);
      if (!detail.ok()) return detail.status();
      return std::optional<std::string>(*std::move(detail));
    }
    if (na == 0) return std::optional<std::string>();
    offset += static_cast<int64_t>(na);
  }
}

// Whitespace-separated tokens of a file, streamed, with their line numbers.
class TokenReader {
 public:
  explicit TokenReader(const Output& output) : output_(output) {}
  absl::Status Open() {
    absl::StatusOr<File> file = correctness::Open(output_);
    if (!file.ok()) return file.status();
    file_ = *std::move(file);
    buffer_.resize(kChunk);
    return absl::OkStatus();
  }
  // The next token, or false at the end of the file.
  absl::StatusOr<bool> Next(std::string* token, int64_t* line) {
    token->clear();
    for (;;) {
      if (at_ == size_) {
        absl::Status status = Fill();
        if (!status.ok()) return status;
        if (size_ == 0) return !token->empty();
      }
      const char c = buffer_[at_++];
      const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r' ||
                         c == '\v' || c == '\f';
      if (!space) {
        if (token->empty()) *line = line_;
        token->push_back(c);
      }
      if (c == '\n') ++line_;
      if (space && !token->empty()) return true;
    }
  }

 private:
  absl::Status Fill() {
    at_ = 0;
    size_ = fread(buffer_.data(), 1, buffer_.size(), file_.get());
    if (ferror(file_.get())) return ReadError(output_);
    return absl::OkStatus();
  }
  Output output_;
  File file_;
  std::vector<char> buffer_;
  size_t at_ = 0, size_ = 0;
  int64_t line_ = 1;
};

// Decimal literals: [+-]digits[.digits][e[+-]digits] or [+-].digits[...],
// never hex (0x1F), inf or nan. Read by hand, not by strtod, which also
// takes those. `DecimalAt` gives the literal's length at `i` (0 when there
// is none) and whether it has a fraction or an exponent; an integer of
// more than 17 significant digits (a long ID) is refused: two of them can
// read as the same double.
struct Decimal {
  size_t length = 0;
  bool fraction_or_exponent = false;
};
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
Decimal DecimalAt(const std::string& token, size_t i) {
  Decimal d;
  size_t j = i;
  if (j < token.size() && (token[j] == '+' || token[j] == '-')) ++j;
  const size_t start = j;
  std::string digits;  // every mantissa digit, for the significant count
  while (j < token.size() && IsDigit(token[j])) digits.push_back(token[j++]);
  size_t fraction_digits = 0;
  if (j < token.size() && token[j] == '.' && j + 1 < token.size() &&
      IsDigit(token[j + 1])) {
    ++j;
    while (j < token.size() && IsDigit(token[j])) {
      digits.push_back(token[j++]);
      ++fraction_digits;
    }
    d.fraction_or_exponent = true;
  }
  if (digits.empty() || j == start) return d;
  if (j < token.size() && (token[j] == 'e' || token[j] == 'E')) {
    size_t k = j + 1;
    if (k < token.size() && (token[k] == '+' || token[k] == '-')) ++k;
    const size_t exponent = k;
    while (k < token.size() && IsDigit(token[k])) ++k;
    if (k > exponent) {
      j = k;
      d.fraction_or_exponent = true;
    }
  }
  // Significant digits: without leading zeros, nor the fraction's trailing
  // ones (%.17e prints 18 digits of which the last may be a 0).
  size_t first = digits.find_first_not_of('0');
  size_t last = digits.size();
  while (fraction_digits > 0 && last > 0 && digits[last - 1] == '0') {
    --last;
    --fraction_digits;
  }
  const size_t significant =
      first == std::string::npos || first >= last ? 1 : last - first;
  // An integer beyond a double's 17 digits is an ID, not a quantity; a
  // float is compared by value anyway (%.17e prints 18 digits).
  if (significant > 17 && !d.fraction_or_exponent) return d;
  d.length = j - i;
  return d;
}

std::optional<double> ValueOf(const std::string& literal) {
  errno = 0;
  const double value = std::strtod(literal.c_str(), nullptr);
  if (errno == ERANGE || !std::isfinite(value)) return std::nullopt;
  return value;
}

// A whole token as a number: a decimal literal (integer or not) within
// double's range; nullopt otherwise, so that "inf", "nan", hex and
// literals a double cannot hold ("1e999", a 20-digit ID) are compared as
// text: a tolerance scaled by an infinite expected value would accept any
// number, and two different IDs read alike.
std::optional<double> Number(const std::string& token) {
  if (token.empty()) return std::nullopt;
  const Decimal d = DecimalAt(token, 0);
  if (d.length != token.size()) return std::nullopt;
  return ValueOf(token);
}

// Inside a token ("v0=67.21", "1.5,2.5", "12.5%", "0.5s", "x=2.5."), the
// float literals (a fraction or an exponent) are compared within the
// tolerance and everything else exactly: a literal starts where no letter,
// digit, '_' or '.' precedes it, and ends where no digit or letter but a
// unit's follows. Integers inside a token (counters, checksums, IDs), hex
// (0x1F), identifiers (user1000, ab12cd), dates and versions (1.2.3) are
// text: a tolerance read into them let a changed checksum pass.
bool IsWordChar(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
// The float literal at `i`, or 0.
size_t FloatLiteralAt(const std::string& token, size_t i) {
  if (i > 0) {
    const char before = token[i - 1];
    if (IsWordChar(before) || IsDigit(before) || before == '.') return 0;
  }
  const Decimal d = DecimalAt(token, i);
  if (d.length == 0 || !d.fraction_or_exponent) return 0;
  const size_t end = i + d.length;
  // Followed by a digit, or by '.' and a digit (1.2.3), it is not one.
  if (end < token.size() &&
      (IsDigit(token[end]) || (token[end] == '.' && end + 1 < token.size() &&
                               IsDigit(token[end + 1])))) {
    return 0;
  }
  return d.length;
}

// One segment of a token from `*at` on: a float literal (its value) or the
// text up to the next one; false at the end.
struct Segment {
  std::string_view text;
  std::optional<double> number;
};
bool NextSegment(const std::string& token, size_t* at, Segment* segment) {
  const size_t start = *at;
  if (start >= token.size()) return false;
  if (const size_t n = FloatLiteralAt(token, start); n > 0) {
    const std::optional<double> value = ValueOf(token.substr(start, n));
    if (value) {
      *segment = {std::string_view(token).substr(start, n), value};
      *at = start + n;
      return true;
    }
  }
  size_t end = start + 1;
  while (end < token.size() && FloatLiteralAt(token, end) == 0) ++end;
  *segment = {std::string_view(token).substr(start, end - start), std::nullopt};
  *at = end;
  return true;
}

// Whether tokens `a` (candidate) and `b` (reference) agree segment by
// segment, walked side by side (no copy of either: a 20 MB token once took
// 2.5 GB): the same text, and float literals within the tolerance; the
// difference and its tolerance when one is out of it.
bool SegmentsAgree(const std::string& a, const std::string& b,
                   const workloads::Check& check, double* difference,
                   double* tolerance) {
  size_t i = 0, j = 0;
  Segment x, y;
  for (;;) {
    const bool has_x = NextSegment(a, &i, &x);
    const bool has_y = NextSegment(b, &j, &y);
    if (!has_x || !has_y) return has_x == has_y;
    if (x.number.has_value() != y.number.has_value()) return false;
    if (!x.number) {
      if (x.text != y.text) return false;
      continue;
    }
    const double allowed =
        std::max(check.absolute_tolerance,
                 check.relative_tolerance * std::fabs(*y.number));
    const double off = std::fabs(*x.number - *y.number);
    if (*x.number != *y.number && off > allowed) {
      *difference = off;
      *tolerance = allowed;
      return false;
    }
  }
}

std::string ShownToken(const std::string& token) {
  std::string out = "'";
  for (size_t i = 0; i < token.size() && i < kTokenShown; ++i) {
    AppendShown(static_cast<unsigned char>(token[i]), &out);
  }
  if (token.size() > kTokenShown) out.append("...");
  return out + "'";
}

// Token by token with the check's tolerances; the first difference's
// description, or nullopt.
absl::StatusOr<std::optional<std::string>> CompareNumeric(
    const Output& reference, const Output& candidate,
    const workloads::Check& check) {
  TokenReader ref(reference), cand(candidate);
  absl::Status status = ref.Open();
  if (status.ok()) status = cand.Open();
  if (!status.ok()) return status;
  std::string a, b;
  int64_t line_a = 0, line_b = 0;
  for (int64_t index = 1;; ++index) {
    absl::StatusOr<bool> has_b = ref.Next(&b, &line_b);
    if (!has_b.ok()) return has_b.status();
    absl::StatusOr<bool> has_a = cand.Next(&a, &line_a);
    if (!has_a.ok()) return has_a.status();
    if (!*has_a && !*has_b) return std::optional<std::string>();
    const std::string where =
        !*has_a || !*has_b || line_a == line_b
            ? absl::StrCat("line ", *has_b ? line_b : line_a)
            : absl::StrCat("line ", line_b, " (candidate line ", line_a, ")");
    const std::string prefix = absl::StrCat(where, ", token ", index, ": ");
    if (!*has_a || !*has_b) {
      return std::optional<std::string>(absl::StrCat(
          prefix, "expected ",
          *has_b ? ShownToken(b) : std::string("the end of the output"),
          ", got ",
          *has_a ? ShownToken(a) : std::string("the end of the output")));
    }
    if (a == b) continue;
    const std::optional<double> x = Number(a), y = Number(b);
    if (!x || !y) {
      double difference = -1, tolerance = 0;
      if (SegmentsAgree(a, b, check, &difference, &tolerance)) continue;
      return std::optional<std::string>(absl::StrCat(
          prefix, "expected ", ShownToken(b), ", got ", ShownToken(a),
          difference >= 0
              ? absl::StrCat(" (a number in it differs by ",
                             absl::StrFormat("%.6g", difference),
                             " > tolerance ",
                             absl::StrFormat("%.6g", tolerance), ")")
              : std::string()));
    }
    {
      const double tolerance = std::max(
          check.absolute_tolerance, check.relative_tolerance * std::fabs(*y));
      const double difference = std::fabs(*x - *y);
      if (*x == *y || difference <= tolerance) continue;
      return std::optional<std::string>(absl::StrCat(
          prefix, "expected ", ShownToken(b), ", got ", ShownToken(a),
          " (difference ", absl::StrFormat("%.6g", difference), " > tolerance ",
          absl::StrFormat("%.6g", tolerance), ")"));
    }
  }
}

std::string ExitText(int status) {
  if (status > 128 && status < 128 + 65) {
    return absl::StrCat(status, " (128 + signal ", status - 128, ")");
  }
  return absl::StrCat(status);
}

// Compares one declared output (stdout or a file) of the two runs.
absl::StatusOr<std::optional<Mismatch>> CompareOne(
    const std::string& what, const std::string& noun,
    const std::string& reference_path, const std::string& candidate_path,
    const workloads::Check& check, const RunNames& names) {
  if (reference_path.empty() || candidate_path.empty()) {
    const std::string detail =
        reference_path.empty() && candidate_path.empty()
            ? std::string("neither run wrote it")
            : absl::StrCat(
                  "the ",
                  reference_path.empty() ? names.reference : names.candidate,
                  " run did not write it");
    return std::optional<Mismatch>(Mismatch{what, detail});
  }
  const Output reference{
      reference_path, absl::StrCat("the ", names.reference, " run's ", noun)};
  const Output candidate{
      candidate_path, absl::StrCat("the ", names.candidate, " run's ", noun)};
  absl::StatusOr<std::optional<std::string>> detail =
      check.compare == workloads::Compare::kNumeric
          ? CompareNumeric(reference, candidate, check)
          : CompareExact(reference, candidate);
  if (!detail.ok()) return detail.status();
  if (!detail->has_value()) return std::optional<Mismatch>();
  return std::optional<Mismatch>(Mismatch{what, **detail});
}

}  // namespace

absl::StatusOr<std::optional<Mismatch>> CompareOutputs(
    const RunOutputs& reference, const RunOutputs& candidate,
    const workloads::Check& check, const RunNames& names) {
  const std::pair<const RunOutputs*, const std::string*> runs[] = {
      {&reference, &names.reference}, {&candidate, &names.candidate}};
  for (const auto& [run, name] : runs) {
    if (run->timed_out) {
      return std::optional<Mismatch>(
          Mismatch{"timed_out", absl::StrCat("the ", *name, " run timed out")});
    }
  }
  for (const auto& [run, name] : runs) {
    // A crash is never the exit a check expects (exit_status: 139 accepted
    // a segfault, 128 + SIGSEGV).
    if (run->term_signal != 0) {
      return std::optional<Mismatch>(
          Mismatch{"exit_status",
                   absl::StrCat("the ", *name, " run was killed by signal ",
                                run->term_signal, ", expected exit status ",
                                ExitText(check.exit_status))});
    }
    if (run->exit_status != check.exit_status) {
      return std::optional<Mismatch>(Mismatch{
          "exit_status", absl::StrCat("the ", *name, " run exited with ",
                                      ExitText(run->exit_status), ", expected ",
                                      ExitText(check.exit_status))});
    }
  }
  if (check.compare_stdout) {
    for (const auto& [run, name] : runs) {
      if (run->stdout_path.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the ", *name,
            " run has no stdout_path but the check compares standard output; "
            "capture each run's stdout to a file"));
      }
    }
    absl::StatusOr<std::optional<Mismatch>> mismatch =
        CompareOne("stdout", "stdout", reference.stdout_path,
                   candidate.stdout_path, check, names);
    if (!mismatch.ok() || mismatch->has_value()) return mismatch;
  }
  for (const std::string& name : check.files) {
    auto path = [&name](const RunOutputs& run) {
      auto it = run.files.find(name);
      return it == run.files.end() ? std::string() : it->second;
    };
    absl::StatusOr<std::optional<Mismatch>> mismatch = CompareOne(
        absl::StrCat("file:", name), absl::StrCat("output file '", name, "'"),
        path(reference), path(candidate), check, names);
    if (!mismatch.ok() || mismatch->has_value()) return mismatch;
  }
  return std::optional<Mismatch>();
}

}  // namespace phaseloop::correctness
