// Weekly digests (docs/notifications.md, "Weekly digests"): when each week's digest is due, and
// what it says, to each user (their dollars, idle-held hours and their cost, their top habit and
// its fix, the trend against the week before, their rank in their team) and to each team's leads
// (the team's table, its three biggest wastes with their owners). Every figure is read from the
// week's HistorySummary, the ledger `cgov report` reads; none is computed here but sums of a
// person's rows. Pure, but for the local time the schedule is kept in (localtime_r, mktime).
#ifndef CGOV_NOTIFY_DIGEST_H_
#define CGOV_NOTIFY_DIGEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/history_summary.h"
#include "notify/notify_file.h"
#include "notify/recipients.h"

namespace cgov {

// One week's digest: when it is sent, and the week it covers.
struct DigestWeek {
  int64_t send_ms = 0;         // the config's day and time
  int64_t since_ms = 0;        // local midnight, seven days before the send day
  int64_t until_ms = 0;        // local midnight that begins the send day
  int64_t prior_since_ms = 0;  // the week before (the trend): [prior_since_ms, since_ms)
  std::string key;             // "digest/YYYY-MM-DD", the local date `since_ms` begins
};

// The latest digest due at or before `now_ms`, in the host's local time (TZ).
DigestWeek LatestDigestWeek(const DigestConfig& config, int64_t now_ms);
// The digest a week after `week`.
DigestWeek NextDigestWeek(const DigestConfig& config, const DigestWeek& week);

// One message to a person: a digest, or a job's report (notify/job_mail.h).
struct DigestMail {
  std::string id;   // "HOST/digest/YYYY-MM-DD/user/ADDRESS" or ".../team/NAME"
  std::string who;  // for the log: "alice", "team vision"
  std::vector<std::string> to;
  std::string subject, text, html;
  // The figures it states (a user's, or a team's summed over its members): dollars to the cent.
  MicroUsd cost = 0, idle_held_cost = 0;
  int64_t idle_held_ms = 0;
  int rank = 0, members = 0;  // a user: their rank in their team (0 without one); a team: its size
};

struct DigestInput {
  const HistorySummary* week = nullptr;   // --by user, over [since_ms, until_ms)
  const HistorySummary* prior = nullptr;  // --by user, over the week before
  const Recipients* people = nullptr;
  DigestConfig config;
  DigestWeek window;
  std::string host;
};

// A habit's advice is written for whoever reads the report ("ask bob to shut kernels down");
// said to its owner it loses the "ask USER to " ("shut kernels down").
std::string SaidToItsOwner(const std::string& advice, const std::string& user);

// Each person's digest (a [[person]] row's users together; a user the domain rule names alone)
// whose week cost at least min_usd, and each team's digest to its leads. Nobody's digest goes to
// the fallback address, nor to a person who opted out (their leads still see them).
std::vector<DigestMail> ComposeDigests(const DigestInput& in);

}  // namespace cgov

#endif  // CGOV_NOTIFY_DIGEST_H_
