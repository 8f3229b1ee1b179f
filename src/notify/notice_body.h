// A notice as each sink's receiver takes it: cgov's own JSON for a generic webhook
// (docs/notice.schema.json), a Slack incoming-webhook message, a Microsoft Teams Workflows
// webhook message (an Adaptive Card); for a terminal sink, the user and the text to show. Pure.
#ifndef CGOV_NOTIFY_NOTICE_BODY_H_
#define CGOV_NOTIFY_NOTICE_BODY_H_

#include <string>

#include "notify/notice.h"

namespace cgov {

inline constexpr char kNoticeSchema[] = "cgov.notice/1";

std::string NoticeBody(SinkKind sink, const Notice& notice);
// What `sink` sends: the above for its kind; for an e-mail sink, the whole message to its
// addresses (NoticeMail), which the kind alone cannot make.
std::string NoticeBody(const NotifySink& sink, const Notice& notice);

}  // namespace cgov

#endif  // CGOV_NOTIFY_NOTICE_BODY_H_
