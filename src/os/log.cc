#include "os/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <mutex>

#include "core/text.h"
#include "core/time_format.h"

namespace cgov {
namespace {

std::mutex g_log_mu;
LogOptions g_options;

// sd-daemon(3)'s prefixes: the syslog priorities.
std::string_view JournalPrefix(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "<7>";
    case LogLevel::kInfo:
      return "<6>";
    case LogLevel::kWarning:
      return "<4>";
    case LogLevel::kError:
      return "<3>";
  }
  return "<6>";
}

std::string_view TextLevel(LogLevel level) {
  return level == LogLevel::kWarning ? "warning" : LogLevelName(level);
}

// A logfmt or JSON string body: quotes, backslashes and control characters escaped.
std::string Escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

// The message made display-safe (core/text.h's SafeText: no escape sequence, bell, carriage
// return or invalid UTF-8 reaches a terminal or a journal), keeping its line breaks and tabs
// for each format's own rule. Every line in every format goes through here: a message may carry
// a path, a name or a label from outside.
std::string DisplaySafe(std::string_view message) {
  if (IsSafeText(message)) return std::string(message);
  std::string out;
  size_t start = 0;
  for (size_t at = 0; at <= message.size(); ++at) {
    if (at < message.size() && message[at] != '\n' && message[at] != '\t') continue;
    out += SafeText(message.substr(start, at - start));
    if (at < message.size()) out += message[at];
    start = at + 1;
  }
  return out;
}

}  // namespace

Result<LogLevel> ParseLogLevel(std::string_view text) {
  if (text == "debug") return LogLevel::kDebug;
  if (text == "info") return LogLevel::kInfo;
  if (text == "warn" || text == "warning") return LogLevel::kWarning;
  if (text == "error") return LogLevel::kError;
  return InvalidArgument(fmt::format("--log.level {}: expected debug, info, warn or error", text));
}

Result<LogFormat> ParseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "logfmt") return LogFormat::kLogfmt;
  if (text == "json") return LogFormat::kJson;
  return InvalidArgument(fmt::format("--log.format {}: expected text, logfmt or json", text));
}

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

bool StderrIsJournal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) return false;
  return fmt::format("{}:{}", static_cast<unsigned long long>(st.st_dev),
                     static_cast<unsigned long long>(st.st_ino)) == stream;
}

std::string FormatLogLine(const LogOptions& options, LogLevel level, std::string_view raw,
                          int64_t wall_ns) {
  const std::string safe = DisplaySafe(raw);
  const std::string_view message = safe;
  std::string line(options.journald_prefix ? JournalPrefix(level) : "");
  switch (options.format) {
    case LogFormat::kText: {
      line += fmt::format("{}: {}: ", options.program, TextLevel(level));
      // A line break and the indentation after it: "; ", or a space after a colon (a list
      // that followed "...:").
      for (size_t at = 0; at < message.size(); ++at) {
        if (message[at] != '\n') {
          line += message[at];
          continue;
        }
        while (at + 1 < message.size() && (message[at + 1] == ' ' || message[at + 1] == '\t')) {
          ++at;
        }
        if (at + 1 < message.size()) line += line.ends_with(':') ? " " : "; ";
      }
      break;
    }
    case LogFormat::kLogfmt:
      line += fmt::format("ts={} level={} msg=\"{}\"", FormatRfc3339Utc(wall_ns),
                          LogLevelName(level), Escaped(message));
      break;
    case LogFormat::kJson:
      line += fmt::format("{{\"ts\":\"{}\",\"level\":\"{}\",\"msg\":\"{}\"}}",
                          FormatRfc3339Utc(wall_ns), LogLevelName(level), Escaped(message));
      break;
  }
  line += '\n';
  return line;
}

void SetLogOptions(LogOptions options) {
  std::lock_guard lock(g_log_mu);
  g_options = std::move(options);
}

const LogOptions& CurrentLogOptions() { return g_options; }

bool LogEnabled(LogLevel level) { return level >= g_options.level; }

void Log(LogLevel level, std::string_view message) {
  if (!LogEnabled(level)) return;
  const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  std::lock_guard lock(g_log_mu);
  const std::string line = FormatLogLine(g_options, level, message, now_ns);
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(g_options.fd, line.data() + done, line.size() - done);
    if (n <= 0) break;  // stderr gone: nothing else to tell
    done += static_cast<size_t>(n);
  }
}

}  // namespace cgov
