// The daemon's log: one line an event, each with its level, on stderr (where systemd and
// container runtimes collect it). Three formats, as Prometheus' exporters offer them
// (--log.format): text ("cgov daemon: warning: ..."), logfmt (ts=... level=warn msg="...") and
// json; --log.level drops what is below it. When stderr is the systemd journal's stream
// (JOURNAL_STREAM names it), each line starts with the journal's priority prefix (<3> error,
// <4> warning, <6> info, <7> debug: sd-daemon(3)), so `journalctl -p warning` finds warnings.
// Library code logs through here; only the command line's own usage errors print directly.
#ifndef CGOV_OS_LOG_H_
#define CGOV_OS_LOG_H_

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/status.h"

namespace cgov {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };
enum class LogFormat { kText, kLogfmt, kJson };

struct LogOptions {
  LogLevel level = LogLevel::kInfo;
  LogFormat format = LogFormat::kText;
  bool journald_prefix = false;         // <N> before each line (StderrIsJournal())
  std::string program = "cgov daemon";  // the text format's prefix
  int fd = 2;  // where lines go: stderr (cgov top's recorder sends them elsewhere: its screen)
};

// "debug", "info", "warn" (or "warning"), "error"; "text", "logfmt", "json". Errors name the
// accepted values.
Result<LogLevel> ParseLogLevel(std::string_view text);
Result<LogFormat> ParseLogFormat(std::string_view text);
std::string_view LogLevelName(LogLevel level);  // "debug", "info", "warn", "error"

// Whether fd 2 is the stream systemd's journal gave this process ($JOURNAL_STREAM = "dev:inode"
// of it, systemd.exec(5)).
bool StderrIsJournal();

// One event as its line (with the newline): `message`'s own line breaks become "; " in text
// and are escaped in logfmt and json, so that an event is always one line.
std::string FormatLogLine(const LogOptions& options, LogLevel level, std::string_view message,
                          int64_t wall_ns);

// The process's log options (default: LogOptions{}); set once at start.
void SetLogOptions(LogOptions options);
const LogOptions& CurrentLogOptions();
bool LogEnabled(LogLevel level);

// Writes one line to stderr, whole (a mutex and one write), if `level` is enabled.
void Log(LogLevel level, std::string_view message);

template <typename... Args>
void LogDebug(fmt::format_string<Args...> f, Args&&... args) {
  if (LogEnabled(LogLevel::kDebug)) {
    Log(LogLevel::kDebug, fmt::format(f, std::forward<Args>(args)...));
  }
}
template <typename... Args>
void LogInfo(fmt::format_string<Args...> f, Args&&... args) {
  if (LogEnabled(LogLevel::kInfo)) {
    Log(LogLevel::kInfo, fmt::format(f, std::forward<Args>(args)...));
  }
}
template <typename... Args>
void LogWarning(fmt::format_string<Args...> f, Args&&... args) {
  if (LogEnabled(LogLevel::kWarning)) {
    Log(LogLevel::kWarning, fmt::format(f, std::forward<Args>(args)...));
  }
}
template <typename... Args>
void LogError(fmt::format_string<Args...> f, Args&&... args) {
  Log(LogLevel::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace cgov

#endif  // CGOV_OS_LOG_H_
