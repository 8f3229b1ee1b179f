// Who is who (docs/notifications.md, "Mail to each person"): the recipients file `--notify`'s
// `recipients` key names maps the users cgov sees (a process's login, a pod's user label, a
// Slurm job's user: the identity's `user`) to an address, by a [[person]] row or the `domain`
// rule, and teams to their leads. An e-mail sink whose `to` says "owner" or "lead" is resolved
// through it per notice. What no rule answers goes to `fallback`, and the user is logged once.
#ifndef CGOV_NOTIFY_RECIPIENTS_H_
#define CGOV_NOTIFY_RECIPIENTS_H_

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

struct RecipientsFile {
  std::string path;
  std::string domain{};    // "example.com": a user without a row is USER@example.com
  std::string fallback{};  // what no rule answers; "" none (such mail is not sent)
  std::set<std::string> domain_except{"root"};  // users the domain rule never names
  struct Person {
    std::vector<std::string> users;  // the names cgov sees for them
    std::string address;
    std::string team{};     // "" none
    std::string opt_out{};  // why they asked for no mail; "" they did not
    int line = 0;
  };
  std::vector<Person> people{};
  std::map<std::string, std::vector<std::string>> leads{};  // team -> its leads' addresses
  std::map<std::string, size_t> by_user{};                  // user -> index into people
};

inline constexpr size_t kMaxRecipientsPeople = 100'000;

// TOML in core/toml_subset.h's subset; errors "path:line:column: key: message". A user named by
// two rows, a team twice, a person's team without a [[team]] row are refused.
Result<RecipientsFile> ParseRecipientsFile(std::string_view text, const std::string& path);
// Reads the file (at most 16 MiB) and parses it.
Result<RecipientsFile> ReadRecipientsFile(const std::string& path);

// An address is a plain one (IsMailAddress); how it was found, for the log and dry runs.
struct Recipient {
  std::string address;
  enum class Via { kPerson, kDomain, kFallback } via = Via::kPerson;
};

// Resolves "owner" and "lead" for notices. Thread-safe: the first time a user has no rule of
// its own (fallback) it is logged once, naming the user and the file.
class Recipients {
 public:
  explicit Recipients(RecipientsFile file) : file_(std::move(file)) {}
  // The user's own address: their [[person]] row (none when it says opt_out, logged once with
  // the reason), else USER@domain where the name is a valid local part, else the fallback
  // (logged once), else none.
  std::vector<Recipient> Owner(std::string_view user) const;
  // The leads of the user's team (their row's `team`), else the fallback (logged once).
  std::vector<Recipient> Leads(std::string_view user) const;
  // USER@domain where the domain rule names the user (a valid local part, not a number, not in
  // domain_except); "" otherwise. Says nothing to the log.
  std::string DomainAddress(std::string_view user) const;
  const RecipientsFile& file() const { return file_; }

 private:
  std::vector<Recipient> Fallback(std::string_view user, std::string_view why) const;
  RecipientsFile file_;
  mutable std::mutex mu_;
  mutable std::set<std::string> logged_;  // "owner/USER", "lead/USER": said once
};

}  // namespace cgov

#endif  // CGOV_NOTIFY_RECIPIENTS_H_
