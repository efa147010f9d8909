#include "compiler_driver/cc_wrapper/new_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace phaseloop::cc_wrapper {

bool WriteNewFile(const std::string& path, const std::string& bytes,
                  std::string* error) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    *error = "cannot create " + path + ": " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 || done != bytes.size()) {
    unlink(path.c_str());
    *error = "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace phaseloop::cc_wrapper
