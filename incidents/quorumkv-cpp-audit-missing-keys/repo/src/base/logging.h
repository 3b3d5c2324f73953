// Minimal glog-compatible logging used throughout quorumkv.
//
//   LOG(INFO) << "opened " << path;
//   VLOG(2) << "details";
//   CHECK(ptr != nullptr) << "must be set";
//
// Output format matches glog:  I0602 14:03:11.123456  4821 file.cc:123] message
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>

namespace qkv {
namespace logging {

enum Severity { INFO = 0, WARNING = 1, ERROR = 2, FATAL = 3 };

inline int& MinLogLevel() {
  static int level = 0;
  return level;
}

inline int& VerboseLevel() {
  static int level = 0;
  return level;
}

inline std::mutex& OutputMutex() {
  static std::mutex mu;
  return mu;
}

class LogMessage {
 public:
  LogMessage(const char* file, int line, Severity severity)
      : severity_(severity) {
    const char* base = std::strrchr(file, '/');
    base = base ? base + 1 : file;
    auto now = std::chrono::system_clock::now();
    std::time_t secs = std::chrono::system_clock::to_time_t(now);
    auto usec = std::chrono::duration_cast<std::chrono::microseconds>(
                    now.time_since_epoch()).count() % 1000000;
    std::tm tm_buf;
    localtime_r(&secs, &tm_buf);
    char prefix[64];
    std::snprintf(prefix, sizeof(prefix), "%c%02d%02d %02d:%02d:%02d.%06ld %5ld ",
                  "IWEF"[severity], tm_buf.tm_mon + 1, tm_buf.tm_mday, tm_buf.tm_hour,
                  tm_buf.tm_min, tm_buf.tm_sec, static_cast<long>(usec),
                  static_cast<long>(::syscall(SYS_gettid)));
    stream_ << prefix << base << ':' << line << "] ";
  }

  ~LogMessage() {
    if (severity_ >= MinLogLevel()) {
      std::lock_guard<std::mutex> lock(OutputMutex());
      std::cerr << stream_.str() << std::endl;
    }
    if (severity_ == FATAL) {
      std::abort();
    }
  }

  std::ostream& stream() { return stream_; }

 private:
  Severity severity_;
  std::ostringstream stream_;
};

// Swallows the stream expression when a log statement is disabled.
class LogVoidify {
 public:
  void operator&(std::ostream&) {}
};

}  // namespace logging
}  // namespace qkv

#define LOG(severity) \
  ::qkv::logging::LogMessage(__FILE__, __LINE__, ::qkv::logging::severity).stream()

#define VLOG_IS_ON(n) (::qkv::logging::VerboseLevel() >= (n))

#define VLOG(n)                  \
  !VLOG_IS_ON(n) ? (void)0       \
                 : ::qkv::logging::LogVoidify() & LOG(INFO)

#define LOG_IF(severity, cond) \
  !(cond) ? (void)0 : ::qkv::logging::LogVoidify() & LOG(severity)

#define CHECK(cond) \
  LOG_IF(FATAL, !(cond)) << "Check failed: " #cond " "

#define CHECK_EQ(a, b) CHECK((a) == (b))
#define CHECK_GE(a, b) CHECK((a) >= (b))
#define CHECK_LE(a, b) CHECK((a) <= (b))
