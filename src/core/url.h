// A URL as it may be shown: in an error, a note, a log line or a report's header. A user may put
// credentials in it (`--prometheus https://user:secret@host`); curl is given the URL whole, every
// view the form here.
#ifndef CGOV_CORE_URL_H_
#define CGOV_CORE_URL_H_

#include <string>
#include <string_view>

namespace cgov {

// `url` with the userinfo of its authority ("user:password@") replaced by "***@", display-safe
// (core/text.h's SafeText). A URL without userinfo comes back as it was.
std::string RedactedUrl(std::string_view url);

}  // namespace cgov

#endif  // CGOV_CORE_URL_H_
