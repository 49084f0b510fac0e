// The exporter's request handling (`counters serve`): what the server does
// with the bytes a connection sent, without sockets. Invariants:
//  - the answer is one of the five the server knows, its views point into
//    static storage (never into the request: the buffer is reused), and an
//    error answer's Content-Length frames its body;
//  - it needs more only while no blank line has arrived and the limit is not
//    reached;
//  - the decision is the same however the bytes were split across reads and
//    whatever follows the request (a body, a pipelined request);
//  - a complete GET (or HEAD) /metrics with any header lines is a 200;
//  - with basic auth asked for, a request is answered as without it or 401
//    (WWW-Authenticate, same framing), the check is asked at most once and
//    only about a complete, well-formed request, and only its yes lets the
//    request through; a scrape whose first Authorization header carries
//    the good pair is a 200 whatever other headers follow.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "collector/counters/metrics_http_server.h"

namespace {

using fabtrack::DecideHttpRequest;
using fabtrack::HttpRequestDecision;
using Action = HttpRequestDecision::Action;
using Route = HttpRequestDecision::Route;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

bool Same(const HttpRequestDecision& a, const HttpRequestDecision& b) {
  return a.action == b.action && a.route == b.route && a.status == b.status &&
         a.head_only == b.head_only && a.error_response == b.error_response &&
         a.request_bytes == b.request_bytes;
}

bool HasBlankLine(std::string_view s) {
  return s.find("\n\n") != std::string_view::npos || s.find("\n\r\n") != std::string_view::npos;
}

// The checks on one decision about `received` (what the server stored).
HttpRequestDecision Decide(std::string_view received, size_t limit,
                           const fabtrack::CredentialCheck& check = {}) {
  HttpRequestDecision d = DecideHttpRequest(received, limit, check);
  if (d.action == Action::kNeedMore) {
    Check(received.size() < limit && !HasBlankLine(received));
    Check(d.route == Route::kNone && d.status == 0 && d.error_response.empty());
    return d;
  }
  Check(d.request_bytes <= received.size());
  switch (d.status) {
    case 200:
      Check(d.route == Route::kMetrics || d.route == Route::kLanding);
      Check(d.error_response.empty());
      break;
    case 400:
    case 401:
    case 404:
    case 405:
    case 431:
      Check(d.route == Route::kError);
      break;
    default:
      Check(false);
  }
  if (d.status == 431) {
    Check(received.size() >= limit && !HasBlankLine(received) && d.request_bytes == 0);
  } else {
    // The request ends at its first blank line.
    Check(d.request_bytes > 0 && HasBlankLine(received.substr(0, d.request_bytes)) &&
          !HasBlankLine(received.substr(0, d.request_bytes - 1)));
  }
  if (d.route == Route::kError) {
    std::string_view r = d.error_response;
    // Not a view into the request.
    Check(r.data() + r.size() <= received.data() || r.data() >= received.data() + received.size());
    Check(r.rfind("HTTP/1.1 " + std::to_string(d.status) + " ", 0) == 0);
    const size_t end = r.find("\r\n\r\n");
    const size_t at = r.find("\r\nContent-Length: ");
    Check(end != std::string_view::npos && at != std::string_view::npos && at < end);
    size_t length = 0;
    for (size_t i = at + 18; i < r.size() && r[i] >= '0' && r[i] <= '9'; ++i) {
      length = length * 10 + static_cast<size_t>(r[i] - '0');
    }
    Check(r.size() - end - 4 == (d.head_only ? 0 : length));
  }
  return d;
}

// What the server stores of `bytes` arriving in pieces of the given sizes,
// and its decision at the first piece that decides.
HttpRequestDecision AsTheServerReads(std::string_view bytes, std::string_view piece_sizes,
                                     size_t limit) {
  std::string stored;
  size_t at = 0;
  size_t i = 0;
  for (;;) {
    size_t n = piece_sizes.empty()
                   ? bytes.size()
                   : 1 + static_cast<uint8_t>(piece_sizes[i++ % piece_sizes.size()]);
    n = std::min(n, bytes.size() - at);
    stored.append(bytes.substr(at, std::min(n, limit - stored.size())));
    at += n;
    HttpRequestDecision d = Decide(stored, limit);
    if (d.action == Action::kRespond || at == bytes.size()) return d;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The first byte picks the limit: the server's default, or a small one
  // that the 431 path meets often. The next 8 are read sizes.
  if (size < 9) return 0;
  const size_t limit = data[0] < 128 ? 8192 : 16 + data[0];
  const std::string_view pieces(reinterpret_cast<const char*>(data + 1), 8);
  const std::string_view bytes(reinterpret_cast<const char*>(data + 9), size - 9);

  const std::string_view stored = bytes.substr(0, limit);
  const HttpRequestDecision whole = Decide(stored, limit);
  // However the bytes arrive, the same decision.
  Check(Same(AsTheServerReads(bytes, pieces, limit), whole));
  Check(Same(AsTheServerReads(bytes, {}, limit), whole));
  if (whole.action == Action::kRespond && whole.status != 431) {
    // Whatever follows the request changes nothing.
    Check(Same(Decide(stored.substr(0, whole.request_bytes), limit), whole));
  }

  // The input's lines, none empty (trailing CRs dropped), as the headers of
  // a valid scrape.
  std::string headers;
  size_t start = 0;
  while (start < bytes.size()) {
    size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    std::string_view line = bytes.substr(start, end - start);
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) headers.append(line).append("\r\n");
    start = end + 1;
  }
  for (std::string_view method : {"GET", "HEAD"}) {
    const std::string request = std::string(method) + " /metrics HTTP/1.1\r\n" + headers + "\r\n";
    if (request.size() > 8192) break;
    const HttpRequestDecision d = Decide(request, 8192);
    Check(d.status == 200 && d.route == Route::kMetrics && d.head_only == (method == "HEAD") &&
          d.request_bytes == request.size());
  }

  // Basic auth: the good pair is user "prometheus", password "pass:word".
  int asked = 0;
  bool said_yes = false;
  const fabtrack::CredentialCheck check = [&](std::string_view user, std::string_view password) {
    ++asked;
    said_yes = user == "prometheus" && password == "pass:word";
    return said_yes;
  };
  const HttpRequestDecision guarded = Decide(stored, limit, check);
  Check(asked <= 1);
  if (whole.action == Action::kNeedMore || whole.status == 400 || whole.status == 431) {
    Check(asked == 0 && Same(guarded, whole));
  } else if (said_yes) {
    Check(Same(guarded, whole));
  } else {
    Check(guarded.status == 401 && guarded.head_only == whole.head_only &&
          guarded.request_bytes == whole.request_bytes);
    Check(guarded.error_response.find("\r\nWWW-Authenticate: Basic\r\n") != std::string_view::npos);
  }
  const std::string authorized =
      "GET /metrics HTTP/1.1\r\nAuthorization: Basic "
      "cHJvbWV0aGV1czpwYXNzOndvcmQ=\r\n" +
      headers + "\r\n";
  if (authorized.size() <= 8192) {
    asked = 0;
    const HttpRequestDecision d = DecideHttpRequest(authorized, 8192, check);
    Check(asked == 1 && said_yes && d.status == 200 && d.route == Route::kMetrics);
  }
  return 0;
}
