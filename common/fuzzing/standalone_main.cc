// The fuzz targets' driver when they are not built with libFuzzer (any
// compiler; with --config=asan under ASan + UBSan). It runs every seed input
// once, then, with --mutations N, N inputs made from the seeds by a small
// deterministic mutator (bit flips, interesting bytes, inserts, deletes,
// duplicated and spliced ranges, tokens copied from another seed): a
// bounded amount of work, the same inputs for the same --seed on any
// machine, so a CI run is reproducible. libFuzzer (--config=fuzz) explores
// far more with coverage feedback; this keeps every target exercised in the
// plain build.
//
//   target [--mutations N] [--seed S] [--max-len BYTES] [--crash-file PATH]
//          CORPUS_DIR_OR_FILE...
//
// Before each input runs it is written to --crash-file (default
// $TEST_UNDECLARED_OUTPUTS_DIR/crash-input, else ./crash-input), so the
// input of a crash or failed invariant is there afterwards. Exit 0 when
// every input ran, 2 on bad usage.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/fuzzing/fuzz_target.h"

namespace {

struct Options {
  int64_t mutations = 0;
  uint64_t seed = 1;
  size_t max_len = 4096;
  std::string crash_file;
  std::vector<std::string> inputs;
};

// splitmix64: tiny, and the same sequence everywhere.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : Next() % n; }

 private:
  uint64_t state_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void Mutate(std::string& data, const std::vector<std::string>& seeds,
            size_t max_len, Random& random) {
  static const char kInteresting[] = {'\0', '\xff', '\x7f', '\x80', ' ',
                                      '\n', ':',    '-',    '"',    '\\',
                                      '{',  '[',    '@',    '0',    '9'};
  const int steps = 1 + static_cast<int>(random.Below(4));
  for (int s = 0; s < steps; ++s) {
    const size_t pos = random.Below(data.size() + 1);
    switch (random.Below(7)) {
      case 0:  // flip a bit
        if (!data.empty()) {
          data[random.Below(data.size())] ^=
              static_cast<char>(1u << random.Below(8));
        }
        break;
      case 1:  // an interesting byte
        if (!data.empty()) {
          data[random.Below(data.size())] =
              kInteresting[random.Below(sizeof(kInteresting))];
        }
        break;
      case 2:  // insert a byte
        data.insert(pos, 1, static_cast<char>(random.Below(256)));
        break;
      case 3: {  // delete a range
        if (data.empty()) break;
        const size_t start = random.Below(data.size());
        data.erase(start, 1 + random.Below(std::min<size_t>(
                                  16, data.size() - start)));
        break;
      }
      case 4: {  // duplicate a range
        if (data.empty()) break;
        const size_t start = random.Below(data.size());
        const size_t len =
            1 + random.Below(std::min<size_t>(32, data.size() - start));
        data.insert(pos, data.substr(start, len));
        break;
      }
      case 5: {  // splice: the tail of another seed
        const std::string& other = seeds[random.Below(seeds.size())];
        if (other.empty()) break;
        data = data.substr(0, pos) + other.substr(random.Below(other.size()));
        break;
      }
      default: {  // a token (up to the next space/newline) from another seed
        const std::string& other = seeds[random.Below(seeds.size())];
        if (other.empty()) break;
        const size_t start = random.Below(other.size());
        size_t end = other.find_first_of(" \n\t:", start);
        if (end == std::string::npos) end = other.size();
        data.insert(pos, other.substr(start, std::min<size_t>(end - start, 64)));
        break;
      }
    }
  }
  if (data.size() > max_len) data.resize(max_len);
}

void RecordInput(const std::string& path, const std::string& data) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
}

void Run(const Options& options, const std::string& data) {
  RecordInput(options.crash_file, data);
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()),
                         data.size());
}

bool ParseOptions(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    if (arg == "--mutations" || arg == "--seed" || arg == "--max-len" ||
        arg == "--crash-file") {
      const char* v = value();
      if (v == nullptr) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        return false;
      }
      if (arg == "--crash-file") {
        options.crash_file = v;
        continue;
      }
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v, &end, 10);
      if (end == v || *end != '\0') {
        std::fprintf(stderr, "%s: '%s' is not a whole number\n", arg.c_str(),
                     v);
        return false;
      }
      if (arg == "--mutations") options.mutations = static_cast<int64_t>(n);
      if (arg == "--seed") options.seed = n;
      if (arg == "--max-len") options.max_len = static_cast<size_t>(n);
    } else if (arg == "--help" || arg == "-h") {
      return false;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "unknown option '%s'\n", arg.c_str());
      return false;
    } else {
      options.inputs.push_back(arg);
    }
  }
  return !options.inputs.empty();
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: %s [--mutations N] [--seed S] [--max-len BYTES] "
                 "[--crash-file PATH] CORPUS_DIR_OR_FILE...\n",
                 argv[0]);
    return 2;
  }
  if (options.crash_file.empty()) {
    const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
    options.crash_file =
        std::string(outputs != nullptr ? outputs : ".") + "/crash-input";
  }
  std::vector<std::string> seeds;
  for (const std::string& input : options.inputs) {
    std::error_code error;
    if (std::filesystem::is_directory(input, error)) {
      std::vector<std::string> files;
      for (const auto& entry : std::filesystem::directory_iterator(input)) {
        if (entry.is_regular_file()) files.push_back(entry.path().string());
      }
      std::sort(files.begin(), files.end());
      for (const auto& file : files) seeds.push_back(ReadFile(file));
    } else if (std::filesystem::is_regular_file(input, error)) {
      seeds.push_back(ReadFile(input));
    } else {
      std::fprintf(stderr, "%s: no such file or directory\n", input.c_str());
      return 2;
    }
  }
  if (seeds.empty()) seeds.emplace_back();
  for (const std::string& seed : seeds) Run(options, seed);
  Random random(options.seed);
  for (int64_t i = 0; i < options.mutations; ++i) {
    std::string data = seeds[random.Below(seeds.size())];
    Mutate(data, seeds, options.max_len, random);
    Run(options, data);
  }
  std::printf("%zu seed inputs and %lld mutations ran; no invariant failed\n",
              seeds.size(), static_cast<long long>(options.mutations));
  return 0;
}
