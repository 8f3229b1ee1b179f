// Status and Result<T>: errors as values, never exceptions across layers.
//
// A Status carries a code and a message that names its context (file, line, field) so that the
// one place that reports it, main(), can print it as is. Only main() decides the exit status.
#ifndef CGOV_CORE_STATUS_H_
#define CGOV_CORE_STATUS_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace cgov {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // bad input from the user: a flag, a file's content
  kNotFound,          // a file, pid or symbol that is not there
  kPermissionDenied,  // EACCES/EPERM, hidepid, NVML_ERROR_NO_PERMISSION
  kUnavailable,       // a dependency that is absent or not working (no driver)
  kIoError,           // any other failure of the machine
  kInternal,          // a bug of ours
};

// Returns "ok", "invalid argument", ... for messages.
std::string_view StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "ok", or the message alone (it already says what went wrong and where).
  std::string ToString() const { return ok() ? "ok" : message_; }

  // Returns a copy whose message is "context: message". Ok stays ok.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}
inline Status NotFound(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
inline Status PermissionDenied(std::string message) {
  return Status(StatusCode::kPermissionDenied, std::move(message));
}
inline Status Unavailable(std::string message) {
  return Status(StatusCode::kUnavailable, std::move(message));
}
inline Status IoError(std::string message) {
  return Status(StatusCode::kIoError, std::move(message));
}
inline Status Internal(std::string message) {
  return Status(StatusCode::kInternal, std::move(message));
}

// A value or the Status that says why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = Internal("Result built from an ok Status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace cgov

#define CGOV_CONCAT_INNER_(a, b) a##b
#define CGOV_CONCAT_(a, b) CGOV_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function when `expr` is not ok.
#define CGOV_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::cgov::Status cgov_status_ = (expr);        \
    if (!cgov_status_.ok()) return cgov_status_; \
  } while (0)

// `CGOV_ASSIGN_OR_RETURN(auto x, F());` declares x from F()'s value or returns its Status.
#define CGOV_ASSIGN_OR_RETURN(lhs, expr) \
  CGOV_ASSIGN_OR_RETURN_IMPL_(CGOV_CONCAT_(cgov_result_, __LINE__), lhs, expr)
#define CGOV_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

#endif  // CGOV_CORE_STATUS_H_
