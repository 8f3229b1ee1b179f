// The notifications state database (docs/notifications.md, "State"): the open incidents and the
// notices not yet delivered, per sink, in the order they were made. A SQLite file of its own
// (not the history database: the notifier commits after every delivery, from its own thread,
// and must never wait on the sampler's batch or hold it up). Not thread-safe: the notifier's
// thread owns it once started.
#ifndef CGOV_NOTIFY_NOTIFY_STATE_H_
#define CGOV_NOTIFY_NOTIFY_STATE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "notify/notice.h"
#include "store/sqlite_db.h"

namespace cgov {

// One notice on its way to one sink.
struct Delivery {
  int64_t seq = 0;  // the order notices were made in (all sinks)
  std::string sink;
  std::string notice_id;
  std::string body;  // as the sink's receiver takes it
  int64_t created_ms = 0;
  int64_t attempts = 0;
  int64_t next_ms = 0;  // not before
  // An e-mail's envelope recipients, resolved when it was queued (its To: says the same);
  // empty: the sink's own `to`.
  std::vector<std::string> rcpt{};
};

class NotifyState {
 public:
  // Creates the file if missing. A file that is not a notifications state database (a history
  // database given by mistake) is refused, never written.
  static Result<std::unique_ptr<NotifyState>> Open(const std::string& path);

  Result<std::vector<Incident>> Incidents() const;
  // In one transaction: the open incidents become `incidents`, and `queued` join the queue (their
  // seq is given here). When the queue would pass `queue_max`, its oldest deliveries are dropped
  // to make room: how many, in *dropped.
  Status Save(const std::vector<Incident>& incidents, std::vector<Delivery>* queued,
              int64_t queue_max, int64_t* dropped);
  // Mail made whole (the weekly digests) joins the queue in one transaction with `key` in the
  // mail log: a key logged before queues nothing (false), so a digest is queued once however
  // often the daemon restarts, and a restart mid-send loses none (the queue keeps what is not
  // delivered). True: queued. `person`: whom it is about ("" for a week's digests), counted by
  // MailCount.
  Result<bool> QueueMail(const std::string& key, const std::string& person, int64_t now_ms,
                         std::vector<Delivery>* queued, int64_t queue_max, int64_t* dropped);
  Result<bool> MailLogged(const std::string& key) const;
  // The mail logged for `person` since `since_ms` whose key begins with `key_prefix`.
  Result<int64_t> MailCount(const std::string& key_prefix, const std::string& person,
                            int64_t since_ms) const;
  // The oldest delivery of each sink that is neither delivered nor given up.
  Result<std::vector<Delivery>> Heads() const;
  Status Delivered(int64_t seq);
  // Tried and failed: tried again at next_ms.
  Status Retry(int64_t seq, int64_t attempts, int64_t next_ms, const std::string& error);
  // Refused for what it is (a receiver answering 400): kept, marked, never sent again.
  Status GiveUp(int64_t seq, const std::string& error);
  Result<int64_t> Queued() const;  // deliveries waiting, all sinks
  const std::string& path() const { return db_->path(); }

 private:
  explicit NotifyState(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  // Inside a transaction: `queued` join the queue (seq given here), the oldest dropped past
  // queue_max.
  Status Enqueue(std::vector<Delivery>* queued, int64_t queue_max, int64_t* dropped);
  std::unique_ptr<SqliteDb> db_;
};

}  // namespace cgov

#endif  // CGOV_NOTIFY_NOTIFY_STATE_H_
