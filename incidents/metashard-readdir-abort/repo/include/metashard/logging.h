// glog-style logging for metashard. Only the subset we use.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <sstream>

namespace metashard {
namespace log_internal {

enum Level { INFO, WARNING, ERROR, FATAL };

inline int& Verbosity() {
  static int v = 0;
  return v;
}

class Message {
 public:
  Message(const char* file, int line, Level level) : level_(level) {
    const char* slash = std::strrchr(file, '/');
    auto now = std::chrono::system_clock::now();
    std::time_t t = std::chrono::system_clock::to_time_t(now);
    long us = static_cast<long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                    now.time_since_epoch()).count() % 1000000);
    std::tm tm;
    localtime_r(&t, &tm);
    char head[48];
    std::snprintf(head, sizeof(head), "%c%02d%02d %02d:%02d:%02d.%06ld %7ld ", "IWEF"[level],
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us,
                  static_cast<long>(::syscall(SYS_gettid)));
    os_ << head << (slash ? slash + 1 : file) << ':' << line << "] ";
  }
  ~Message() {
    os_ << '\n';
    std::cerr << os_.str() << std::flush;
    if (level_ == FATAL) std::abort();
  }
  std::ostream& stream() { return os_; }

 private:
  Level level_;
  std::ostringstream os_;
};

struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace log_internal
}  // namespace metashard

#define LOG(level)                                                                 \
  ::metashard::log_internal::Message(__FILE__, __LINE__,                           \
                                     ::metashard::log_internal::level).stream()
#define VLOG(n)                                                \
  (::metashard::log_internal::Verbosity() < (n)) ? (void)0     \
      : ::metashard::log_internal::Voidify() & LOG(INFO)
#define CHECK(cond)                                            \
  (cond) ? (void)0                                             \
         : ::metashard::log_internal::Voidify() & LOG(FATAL) << "Check failed: " #cond " "
