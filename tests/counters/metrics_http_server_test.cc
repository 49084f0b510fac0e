// The exporter's HTTP edge: address parsing; the request decision without
// sockets; and over real loopback sockets a body larger than the socket
// buffers to a reader that stalls (it must not hold up other scrapes, and
// must get every byte once it reads), deadlines for clients that say nothing
// or dribble, partial and oversized requests, a connection flood, pipelined
// requests and HEAD. Every exposition received is checked by promtool.
// Over TLS (--web.config.file): a scrape, plain HTTP to the TLS port, a
// large body to a stalled TLS reader (OpenSSL's partial writes as the
// socket drains) and a handshake that stalls (closed at the deadline).
#include "collector/counters/metrics_http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "collector/counters/port_exposition.h"
#include "collector/counters/sysfs_ports.h"
#include "collector/counters/web_security.h"
#include "tests/support/run_command.h"

namespace fabtrack {
namespace {

using namespace std::chrono_literals;

TEST(ParseListenAddress, AcceptsTheFormsPrometheusExportersUse) {
  auto a = ParseListenAddress("0.0.0.0:9477");
  EXPECT_EQ(a.host, "0.0.0.0");
  EXPECT_EQ(a.port, "9477");
  a = ParseListenAddress(":9477");
  EXPECT_EQ(a.host, "");
  EXPECT_EQ(a.port, "9477");
  a = ParseListenAddress("9477");
  EXPECT_EQ(a.host, "");
  a = ParseListenAddress("[::1]:9477");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, "9477");
  a = ParseListenAddress("localhost:0");
  EXPECT_EQ(a.host, "localhost");
  EXPECT_EQ(a.port, "0");
}

TEST(ParseListenAddress, RefusesWhatIsNotAnAddress) {
  for (const char* bad : {"", "localhost", "::1:9477", "[::1]9477", "[::1]", "host:", "host:x",
                          "host:65536", "host:-1", "host:12ab"}) {
    EXPECT_THROW(ParseListenAddress(bad), std::invalid_argument) << bad;
  }
  try {
    ParseListenAddress("host:99999");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"host:99999\""), std::string::npos) << e.what();
  }
}

// What Prometheus 2.53 sends on every scrape.
constexpr std::string_view kPrometheusScrape =
    "GET /metrics HTTP/1.1\r\n"
    "Host: gpu-01:9862\r\n"
    "User-Agent: Prometheus/2.53.0\r\n"
    "Accept: application/openmetrics-text;version=1.0.0;q=0.5,"
    "application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2\r\n"
    "Accept-Encoding: gzip\r\n"
    "X-Prometheus-Scrape-Timeout-Seconds: 10\r\n"
    "\r\n";

using Action = HttpRequestDecision::Action;
using Route = HttpRequestDecision::Route;

TEST(DecideHttpRequest, RoutesWhatScrapersAndBrowsersSend) {
  struct Case {
    std::string_view request;
    int status;
    Route route;
    bool head_only;
  };
  for (const Case& c : std::vector<Case>{
           {kPrometheusScrape, 200, Route::kMetrics, false},
           {"GET /metrics HTTP/1.1\r\nHost: localhost:9862\r\nUser-Agent: curl/7.88.1\r\n"
            "Accept: */*\r\n\r\n",
            200, Route::kMetrics, false},
           {"GET /metrics HTTP/1.0\r\n\r\n", 200, Route::kMetrics, false},
           {"GET /metrics?collect%5B%5D=infiniband HTTP/1.1\r\n\r\n", 200, Route::kMetrics, false},
           {"HEAD /metrics HTTP/1.1\r\n\r\n", 200, Route::kMetrics, true},
           {"GET / HTTP/1.1\r\n\r\n", 200, Route::kLanding, false},
           {"GET /metrics HTTP/1.1\nHost: x\n\n", 200, Route::kMetrics, false},  // lone LF
           {"GET /metrics HTTP/1.1\r\nHost: x\n\r\n", 200, Route::kMetrics, false},
           {"GET /debug HTTP/1.1\r\n\r\n", 404, Route::kError, false},
           {"HEAD /debug HTTP/1.1\r\n\r\n", 404, Route::kError, true},
           {"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405, Route::kError, false},
           {"DELETE / HTTP/1.1\r\n\r\n", 405, Route::kError, false},
           {"GET /metrics\r\n\r\n", 400, Route::kError, false},
           {"GET /metrics HTTP/2\r\n\r\n", 400, Route::kError, false},
           {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, Route::kError, false},
           {"\r\n\r\n", 400, Route::kError, false},
       }) {
    HttpRequestDecision d = DecideHttpRequest(c.request, 8192);
    EXPECT_EQ(d.action, Action::kRespond) << c.request;
    EXPECT_EQ(d.status, c.status) << c.request;
    EXPECT_EQ(d.route, c.route) << c.request;
    EXPECT_EQ(d.head_only, c.head_only) << c.request;
    if (c.route == Route::kError) {
      EXPECT_EQ(d.error_response.substr(0, 13), "HTTP/1.1 " + std::to_string(c.status) + " ");
    }
  }
}

TEST(DecideHttpRequest, WaitsForTheBlankLineWhateverTheSplit) {
  // Every proper prefix of a request needs more; the whole request answers.
  for (size_t n = 0; n < kPrometheusScrape.size(); ++n) {
    ASSERT_EQ(DecideHttpRequest(kPrometheusScrape.substr(0, n), 8192).action, Action::kNeedMore)
        << n;
  }
  HttpRequestDecision d = DecideHttpRequest(kPrometheusScrape, 8192);
  EXPECT_EQ(d.status, 200);
  EXPECT_EQ(d.request_bytes, kPrometheusScrape.size());
}

TEST(DecideHttpRequest, LooksOnlyAtTheFirstRequest) {
  // Pipelined: the second request (or a body) changes nothing.
  std::string two = std::string(kPrometheusScrape) + "POST /debug HTTP/1.1\r\n\r\n";
  HttpRequestDecision d = DecideHttpRequest(two, 8192);
  EXPECT_EQ(d.status, 200);
  EXPECT_EQ(d.route, Route::kMetrics);
  EXPECT_EQ(d.request_bytes, kPrometheusScrape.size());
  // The earliest blank line ends the request, CRLF or not.
  d = DecideHttpRequest("GET /nothing HTTP/1.1\n\nGET /metrics HTTP/1.1\r\n\r\n", 8192);
  EXPECT_EQ(d.status, 404);
  EXPECT_EQ(d.request_bytes, 23u);
}

TEST(DecideHttpRequest, HeadersBeyondTheLimitAre431) {
  std::string big = "GET /metrics HTTP/1.1\r\nX-Padding: " + std::string(9000, 'a');
  big.resize(8192);  // the server stores no more than the limit
  HttpRequestDecision d = DecideHttpRequest(big, 8192);
  EXPECT_EQ(d.action, Action::kRespond);
  EXPECT_EQ(d.status, 431);
  EXPECT_EQ(DecideHttpRequest(std::string_view(big).substr(0, 8191), 8192).action,
            Action::kNeedMore);
  // A request that fits exactly is answered.
  std::string exact = "GET /metrics HTTP/1.1\r\nX: " + std::string(100, 'a') + "\r\n\r\n";
  EXPECT_EQ(DecideHttpRequest(exact, exact.size()).status, 200);
  EXPECT_EQ(DecideHttpRequest(exact.substr(0, exact.size() - 1), exact.size() - 1).status, 431);
}

TEST(DecideHttpRequest, ErrorAnswersFrameTheirBodies) {
  for (std::string_view request : {"GET x\r\n\r\n", "GET /x HTTP/1.1\r\n\r\n",
                                   "HEAD /x HTTP/1.1\r\n\r\n", "PUT /metrics HTTP/1.1\r\n\r\n"}) {
    std::string_view r = DecideHttpRequest(request, 8192).error_response;
    const size_t end = r.find("\r\n\r\n");
    ASSERT_NE(end, std::string_view::npos) << r;
    const size_t at = r.find("Content-Length: ");
    ASSERT_LT(at, end);
    const size_t length = std::stoul(std::string(r.substr(at + 16)));
    EXPECT_EQ(r.size() - end - 4, request.substr(0, 4) == "HEAD" ? 0 : length) << r;
  }
  std::string big(100, 'a');
  std::string_view r = DecideHttpRequest(big, big.size()).error_response;
  EXPECT_EQ(r.substr(r.find("\r\n\r\n") + 4), "request header fields too large");
}

// basic_auth_users: the credentials a request carries, as the check saw them.
struct SeenCredentials {
  std::vector<std::pair<std::string, std::string>> calls;
  CredentialCheck check() {
    return [this](std::string_view user, std::string_view password) {
      calls.emplace_back(user, password);
      return user == "prometheus" && password == "s3cret:with colon";
    };
  }
};

std::string WithAuthorization(std::string_view method_and_path, std::string_view value) {
  return std::string(method_and_path) +
         " HTTP/1.1\r\nHost: x\r\nAuthorization: " + std::string(value) + "\r\nAccept: */*\r\n\r\n";
}

// base64 of "prometheus:s3cret:with colon" and of other pairs.
constexpr std::string_view kGood = "cHJvbWV0aGV1czpzM2NyZXQ6d2l0aCBjb2xvbg==";
constexpr std::string_view kWrongPassword = "cHJvbWV0aGV1czpodW50ZXIy";  // prometheus:hunter2

TEST(DecideHttpRequest, BasicAuthLetsInOnlyTheCheckedPair) {
  SeenCredentials seen;
  HttpRequestDecision d = DecideHttpRequest(
      WithAuthorization("GET /metrics", std::string("Basic ") + std::string(kGood)), 8192,
      seen.check());
  EXPECT_EQ(d.status, 200);
  EXPECT_EQ(d.route, Route::kMetrics);
  // Split at the first colon, as Go's Request.BasicAuth: the password may hold colons.
  ASSERT_EQ(seen.calls.size(), 1u);
  EXPECT_EQ(seen.calls[0].first, "prometheus");
  EXPECT_EQ(seen.calls[0].second, "s3cret:with colon");
  // The scheme in any case, spaces around the value, the header name in any case.
  EXPECT_EQ(DecideHttpRequest(
                "GET / HTTP/1.1\r\nauthorization:   bASIC " + std::string(kGood) + " \r\n\r\n",
                8192, seen.check())
                .status,
            200);
  // Authenticated, then routed: an unknown path is still 404.
  EXPECT_EQ(DecideHttpRequest(WithAuthorization("GET /debug", "Basic " + std::string(kGood)), 8192,
                              seen.check())
                .status,
            404);
}

TEST(DecideHttpRequest, BasicAuthRefusesWith401AndWwwAuthenticate) {
  SeenCredentials seen;
  for (const std::string& request : {
           std::string(kPrometheusScrape),  // none
           WithAuthorization("GET /metrics", "Basic " + std::string(kWrongPassword)),
           WithAuthorization("GET /metrics", "Bearer " + std::string(kGood)),  // another scheme
           WithAuthorization("GET /metrics", "Basic"),                         // no credentials
           WithAuthorization("GET /metrics", "Basic cHJvbWV0aGV1cw=="),        // no colon
           WithAuthorization("GET /metrics",
                             "Basic " + std::string(kGood.substr(1))),  // not base64
           WithAuthorization("GET /metrics", "Basic " + std::string(kGood) + "=="),
           WithAuthorization("GET /metrics", "Basic cHJv*WV0aGV1czpzM2NyZXQ="),
           // Any path and method: authentication comes before routing.
           WithAuthorization("GET /debug", "Basic " + std::string(kWrongPassword)),
           WithAuthorization("POST /metrics", "Basic " + std::string(kWrongPassword)),
           WithAuthorization("GET /", "Basic " + std::string(kWrongPassword)),
           // The first Authorization header counts.
           "GET /metrics HTTP/1.1\r\nAuthorization: Basic " + std::string(kWrongPassword) +
               "\r\nAuthorization: Basic " + std::string(kGood) + "\r\n\r\n",
           // A header whose name only contains the word is not it.
           "GET /metrics HTTP/1.1\r\nX-Authorization: Basic " + std::string(kGood) + "\r\n\r\n",
       }) {
    HttpRequestDecision d = DecideHttpRequest(request, 8192, seen.check());
    EXPECT_EQ(d.status, 401) << request;
    EXPECT_EQ(d.route, Route::kError) << request;
    EXPECT_EQ(d.error_response.rfind("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic\r\n", 0),
              0u)
        << d.error_response;
    EXPECT_EQ(d.error_response.substr(d.error_response.find("\r\n\r\n") + 4), "Unauthorized\n");
  }
  // HEAD: the same answer without its body.
  HttpRequestDecision head =
      DecideHttpRequest("HEAD /metrics HTTP/1.1\r\n\r\n", 8192, seen.check());
  EXPECT_EQ(head.status, 401);
  EXPECT_TRUE(head.head_only);
  EXPECT_EQ(head.error_response.substr(head.error_response.size() - 4), "\r\n\r\n");
  // Malformed requests and incomplete ones never reach the check.
  seen.calls.clear();
  EXPECT_EQ(DecideHttpRequest("GET /metrics\r\n\r\n", 8192, seen.check()).status, 400);
  EXPECT_EQ(DecideHttpRequest(
                "GET /metrics HTTP/1.1\r\nAuthorization: Basic " + std::string(kGood) + "\r\n",
                8192, seen.check())
                .action,
            Action::kNeedMore);
  EXPECT_TRUE(seen.calls.empty());
  // Without a check nothing is asked for.
  EXPECT_EQ(DecideHttpRequest(kPrometheusScrape, 8192).status, 200);
}

TEST(WriteOkHead, AnnouncesTheTypeAndLength) {
  std::string head;
  WriteOkHead(DecideHttpRequest("GET /metrics HTTP/1.1\r\n\r\n", 8192), 1234, &head);
  EXPECT_EQ(head,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
            "Content-Length: 1234\r\nConnection: close\r\n\r\n");
  WriteOkHead(DecideHttpRequest("GET / HTTP/1.1\r\n\r\n", 8192), 5, &head);
  EXPECT_NE(head.find("Content-Type: text/html; charset=utf-8\r\n"), std::string::npos);
}

// A free loopback port: bind to 0, read it back, let it go.
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

int Connect(int port, int receive_buffer = 0) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (receive_buffer > 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

void SendAll(int fd, const std::string& text) {
  ASSERT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
}

// Everything until the server closes (or 5 s of silence).
std::string ReadAll(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string BodyOf(const std::string& response) {
  size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

class ServerThread {
 public:
  ServerThread(MetricsHttpServer::Render render, MetricsHttpServer::Limits limits,
               std::optional<WebSecurity> security = std::nullopt)
      : port_(FreePort()),
        server_("127.0.0.1:" + std::to_string(port_), std::move(render), limits) {
    if (security) server_.SetSecurity(std::move(*security));
    thread_ = std::thread([this] { server_.Serve([this] { return stop_.load(); }); });
  }
  ~ServerThread() {
    stop_ = true;
    thread_.join();
  }
  int port() const { return port_; }

 private:
  int port_;
  MetricsHttpServer server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A non-blocking connect that is not waited for (a flood's worth of them).
int ConnectWithoutWaiting(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);  // EINPROGRESS
  return fd;
}

// This process's open descriptors: the server's (it runs in a thread here)
// and the test's own.
int OpenFds() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)e;
    ++n;
  }
  return n - 1;  // the iterator's own
}

// Waits up to `limit` for the open descriptors to come down to `target`.
bool FdsComeDownTo(int target, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (OpenFds() > target) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// The real exposition of a fixture host, as `counters serve` renders it
// (a fixed scrape duration, so every scrape's body is the same).
class FixtureExposition {
 public:
  FixtureExposition() : sampler_(std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/ndr_8hca") {
    sampler_.Sample();  // opens the counter files it keeps open: not the server's descriptors
  }
  MetricsHttpServer::Render render() {
    return [this]() -> const std::string& {
      ++renders;
      return exposition_.Render(sampler_.Sample(), ScrapeOutcome{0.000125, true});
    };
  }
  std::string Expected() {
    PortExposition once;
    SysfsPortSampler sampler(std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/ndr_8hca");
    return once.Render(sampler.Sample(), ScrapeOutcome{0.000125, true});
  }
  std::atomic<int> renders{0};

 private:
  SysfsPortSampler sampler_;
  PortExposition exposition_;
};

// The independent oracle: promtool's own parser and linter.
std::string PromtoolVerdict(const std::string& body) {
  static int n = 0;
  const std::string path = ::testing::TempDir() + "/scrape-" + std::to_string(::getpid()) + "-" +
                           std::to_string(n++) + ".prom";
  std::ofstream(path, std::ios::binary) << body;
  auto out = fabtrack::testing::RunCommand("promtool check metrics < '" + path + "' 2>&1");
  std::filesystem::remove(path);
  return out.exit_code == 0 ? "ok"
                            : "exit " + std::to_string(out.exit_code) + ": " + out.out + out.err;
}

// A 200 whose Content-Length frames the exposition `expected`, which
// promtool accepts.
void ExpectExposition(const std::string& response, const std::string& expected) {
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response.substr(0, 200);
  const std::string head = response.substr(0, response.find("\r\n\r\n") + 4);
  EXPECT_NE(head.find("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos)
      << head;
  EXPECT_NE(head.find("\r\nContent-Length: " + std::to_string(expected.size()) + "\r\n"),
            std::string::npos)
      << head;
  const std::string body = BodyOf(response);
  EXPECT_EQ(body, expected);
  EXPECT_EQ(PromtoolVerdict(body), "ok");
}

std::string Scrape(int port, std::string_view request = kPrometheusScrape) {
  int fd = Connect(port);
  if (fd < 0) return "";
  SendAll(fd, std::string(request));
  std::string answer = ReadAll(fd);
  ::close(fd);
  return answer;
}

TEST(MetricsHttpServer, AStalledReaderOfALargeBodyHoldsNoOneUpAndGetsEveryByte) {
  // 8 MiB: far more than loopback's socket buffers, so the answer to the
  // stalled reader is sent in pieces as it drains.
  std::string body(8 << 20, 'x');
  for (size_t i = 0; i < body.size(); i += 4096) body[i] = static_cast<char>('a' + (i / 4096) % 26);
  std::atomic<int> renders{0};
  ServerThread server(
      [&]() -> const std::string& {
        ++renders;
        return body;
      },
      {});
  int stalled = Connect(server.port(), 4096);
  ASSERT_GE(stalled, 0);
  SendAll(stalled, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  std::this_thread::sleep_for(200ms);  // its answer is now stuck in the buffers

  int other = Connect(server.port());
  ASSERT_GE(other, 0);
  SendAll(other, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  auto started = std::chrono::steady_clock::now();
  std::string quick = ReadAll(other);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
  EXPECT_EQ(BodyOf(quick), body);
  ::close(other);

  std::string slow = ReadAll(stalled);
  ::close(stalled);
  EXPECT_NE(slow.find("Content-Length: " + std::to_string(body.size()) + "\r\n"),
            std::string::npos);
  EXPECT_EQ(BodyOf(slow), body);
  EXPECT_EQ(renders.load(), 2);
}

// A certificate for 127.0.0.1 signed by itself (EC P-256: quick to make),
// made once per test binary.
const std::string& CertificateFolder() {
  static const std::string folder = [] {
    const std::string dir = ::testing::TempDir() + "/https-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    auto made = fabtrack::testing::RunCommand(
        "cd '" + dir +
        "' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
        "-subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 -keyout server.key "
        "-out server.crt 2>&1");
    EXPECT_EQ(made.exit_code, 0) << made.out;
    return dir;
  }();
  return folder;
}

WebSecurity Tls() {
  WebConfig config;
  config.tls = WebTlsConfig{.cert_file = CertificateFolder() + "/server.crt",
                            .key_file = CertificateFolder() + "/server.key"};
  return MakeWebSecurity(config, CertificateFolder() + "/web.yml");
}

// A blocking TLS client that trusts the test certificate for 127.0.0.1.
class TlsClient {
 public:
  explicit TlsClient(int port, int receive_buffer = 0)
      : ctx_(SSL_CTX_new(TLS_client_method())), fd_(Connect(port, receive_buffer)) {
    SSL_CTX_load_verify_locations(ctx_, (CertificateFolder() + "/server.crt").c_str(), nullptr);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    ssl_ = SSL_new(ctx_);
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), "127.0.0.1");
    SSL_set_fd(ssl_, fd_);
    connected_ = fd_ >= 0 && SSL_connect(ssl_) == 1;
  }
  ~TlsClient() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return connected_; }
  bool Send(const std::string& text) {
    return SSL_write(ssl_, text.data(), static_cast<int>(text.size())) ==
           static_cast<int>(text.size());
  }
  // Everything until the server closes (or 5 s of silence).
  std::string ReadAll() {
    std::string out;
    char buf[65536];
    for (int n; (n = SSL_read(ssl_, buf, sizeof buf)) > 0;) out.append(buf, n);
    return out;
  }

 private:
  SSL_CTX* ctx_;
  SSL* ssl_ = nullptr;
  int fd_;
  bool connected_ = false;
};

TEST(MetricsHttpServer, ScrapesOverTlsAndTellsPlainHttpWhyNot) {
  FixtureExposition fixture;
  ServerThread server(fixture.render(), {}, Tls());
  TlsClient client(server.port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send(std::string(kPrometheusScrape)));
  ExpectExposition(client.ReadAll(), fixture.Expected());
  // Plain HTTP to the TLS port: a plain-text 400, no metrics.
  const std::string plain = Scrape(server.port());
  EXPECT_EQ(plain.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << plain;
  EXPECT_EQ(BodyOf(plain), "Client sent an HTTP request to an HTTPS server.\n");
  EXPECT_EQ(fixture.renders.load(), 1);
}

TEST(MetricsHttpServer, AStalledTlsReaderOfALargeBodyHoldsNoOneUpAndGetsEveryByte) {
  std::string body(8 << 20, 'x');
  for (size_t i = 0; i < body.size(); i += 4096) body[i] = static_cast<char>('a' + (i / 4096) % 26);
  ServerThread server([&]() -> const std::string& { return body; }, {}, Tls());
  TlsClient stalled(server.port(), 4096);
  ASSERT_TRUE(stalled.connected());
  ASSERT_TRUE(stalled.Send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::this_thread::sleep_for(200ms);  // its answer is now stuck in the buffers

  auto started = std::chrono::steady_clock::now();
  TlsClient other(server.port());
  ASSERT_TRUE(other.connected());
  ASSERT_TRUE(other.Send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(BodyOf(other.ReadAll()), body);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
  EXPECT_EQ(BodyOf(stalled.ReadAll()), body);
}

TEST(MetricsHttpServer, AHandshakeThatStallsIsClosedAtTheDeadlineAndHoldsNoOneUp) {
  static const std::string kBody = "up 1\n";
  MetricsHttpServer::Limits limits;
  limits.deadline = 300ms;
  ServerThread server([]() -> const std::string& { return kBody; }, limits, Tls());
  // The start of a ClientHello's record, and then nothing.
  int stalled = Connect(server.port());
  ASSERT_GE(stalled, 0);
  SendAll(stalled, std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11));
  TlsClient other(server.port());
  ASSERT_TRUE(other.connected());
  ASSERT_TRUE(other.Send("GET /metrics HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(BodyOf(other.ReadAll()), kBody);
  auto started = std::chrono::steady_clock::now();
  char c;
  EXPECT_LE(::recv(stalled, &c, 1, 0), 0);  // closed by the server, no answer
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
  ::close(stalled);
}

TEST(MetricsHttpServer, AClientThatSaysNothingIsClosedAtItsDeadline) {
  static const std::string kBody = "up 1\n";
  MetricsHttpServer::Limits limits;
  limits.deadline = 300ms;
  ServerThread server([]() -> const std::string& { return kBody; }, limits);
  int silent = Connect(server.port());
  ASSERT_GE(silent, 0);
  auto started = std::chrono::steady_clock::now();
  char c;
  EXPECT_EQ(::recv(silent, &c, 1, 0), 0);  // closed by the server, no answer
  auto waited = std::chrono::steady_clock::now() - started;
  EXPECT_GE(waited, 250ms);
  EXPECT_LT(waited, 3s);
  ::close(silent);
}

TEST(MetricsHttpServer, BeyondTheConnectionLimitAClientThatSaysNothingGivesWay) {
  static const std::string kBody = "up 1\n";
  MetricsHttpServer::Limits limits;
  limits.max_connections = 1;
  limits.deadline = 10s;
  ServerThread server([]() -> const std::string& { return kBody; }, limits);
  int holder = Connect(server.port());  // takes the only slot and says nothing
  ASSERT_GE(holder, 0);
  std::this_thread::sleep_for(50ms);
  auto started = std::chrono::steady_clock::now();
  int scraper = Connect(server.port());
  ASSERT_GE(scraper, 0);
  SendAll(scraper, "GET /metrics HTTP/1.0\r\n\r\n");
  std::string answer = ReadAll(scraper);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
  EXPECT_EQ(BodyOf(answer), kBody);
  EXPECT_EQ(ReadAll(holder), "");  // closed without an answer, long before its deadline
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  ::close(scraper);
  ::close(holder);
}

TEST(MetricsHttpServer, AConnectionBeingAnsweredIsNotDisplaced) {
  std::string body(8 << 20, 'x');
  MetricsHttpServer::Limits limits;
  limits.max_connections = 1;
  limits.deadline = 1s;
  ServerThread server([&]() -> const std::string& { return body; }, limits);
  int stalled = Connect(server.port(), 4096);  // asks, then reads nothing for now
  ASSERT_GE(stalled, 0);
  SendAll(stalled, "GET /metrics HTTP/1.1\r\n\r\n");
  std::this_thread::sleep_for(200ms);
  auto started = std::chrono::steady_clock::now();
  int waiting = Connect(server.port());  // sits in the listen backlog
  ASSERT_GE(waiting, 0);
  SendAll(waiting, "GET /metrics HTTP/1.1\r\n\r\n");
  std::string answer = ReadAll(waiting);
  // Served once the stalled reader's deadline closed it, not before.
  EXPECT_GE(std::chrono::steady_clock::now() - started, 600ms);
  EXPECT_EQ(BodyOf(answer), body);
  std::string partial = ReadAll(stalled);
  EXPECT_EQ(partial.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_LT(BodyOf(partial).size(), body.size());  // cut at its deadline
  ::close(waiting);
  ::close(stalled);
}

TEST(MetricsHttpServer, AnswersRealScrapersWithAnExpositionPromtoolAccepts) {
  FixtureExposition e;
  const std::string expected = e.Expected();
  ASSERT_EQ(PromtoolVerdict(expected), "ok");
  ServerThread server(e.render(), {});
  for (std::string_view request :
       {kPrometheusScrape,
        std::string_view("GET /metrics HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl/7.88.1\r\n"
                         "Accept: */*\r\n\r\n"),
        std::string_view("GET /metrics HTTP/1.0\r\n\r\n"),
        std::string_view("GET /metrics HTTP/1.1\nHost: x\n\n")}) {
    SCOPED_TRACE(std::string(request));
    ExpectExposition(Scrape(server.port(), request), expected);
  }
}

TEST(MetricsHttpServer, HeadAnnouncesWhatGetSendsAndSendsNoBody) {
  FixtureExposition e;
  ServerThread server(e.render(), {});
  const std::string get = Scrape(server.port());
  ExpectExposition(get, e.Expected());
  const std::string head = Scrape(server.port(), "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(head, get.substr(0, get.find("\r\n\r\n") + 4));
  const std::string missing = Scrape(server.port(), "HEAD /nothing HTTP/1.1\r\n\r\n");
  EXPECT_EQ(missing.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << missing;
  EXPECT_EQ(BodyOf(missing), "");
}

TEST(MetricsHttpServer, PipelinedRequestsGetOneAnswerAndTheConnectionCloses) {
  FixtureExposition e;
  ServerThread server(e.render(), {});
  const std::string answer =
      Scrape(server.port(), std::string(kPrometheusScrape) + std::string(kPrometheusScrape) +
                                "GET / HTTP/1.1\r\n\r\n");
  ExpectExposition(answer, e.Expected());  // the body is exactly one exposition
  EXPECT_EQ(e.renders.load(), 1);
}

TEST(MetricsHttpServer, ADribbledRequestIsServedWhileOthersAreAndAStalledOneIsClosed) {
  FixtureExposition e;
  const std::string expected = e.Expected();
  MetricsHttpServer::Limits limits;
  limits.deadline = 4s;
  ServerThread server(e.render(), limits);
  const int fds = OpenFds();

  const auto stalled_at = std::chrono::steady_clock::now();
  int stalled = Connect(server.port());
  ASSERT_GE(stalled, 0);
  SendAll(stalled, "GET /metrics HTTP/1.1\r\nHost: x\r\n");  // and never the blank line

  std::string dribbled;
  std::thread dribbler([&] {
    int fd = Connect(server.port());
    for (size_t i = 0; i < kPrometheusScrape.size(); i += 16) {
      std::string piece(kPrometheusScrape.substr(i, 16));
      ::send(fd, piece.data(), piece.size(), MSG_NOSIGNAL);
      std::this_thread::sleep_for(50ms);
    }
    dribbled = ReadAll(fd);
    ::close(fd);
  });
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(200ms);
    auto started = std::chrono::steady_clock::now();
    ExpectExposition(Scrape(server.port()), expected);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  }
  dribbler.join();
  ExpectExposition(dribbled, expected);

  EXPECT_EQ(ReadAll(stalled), "");  // closed at its deadline, no answer
  auto waited = std::chrono::steady_clock::now() - stalled_at;
  EXPECT_GE(waited, 3900ms);
  EXPECT_LT(waited, 5s);
  ::close(stalled);
  EXPECT_TRUE(FdsComeDownTo(fds, 1s));
}

TEST(MetricsHttpServer, APartialRequestThenCloseFreesItsConnectionAtOnce) {
  FixtureExposition e;
  MetricsHttpServer::Limits limits;
  limits.max_connections = 2;
  ServerThread server(e.render(), limits);
  const int fds = OpenFds();
  for (std::string_view partial : {"GET /metr", "GET /metrics HTTP/1.1\r\nHost: x\r\n", ""}) {
    int fd = Connect(server.port());
    ASSERT_GE(fd, 0);
    SendAll(fd, std::string(partial));
    ::close(fd);
  }
  EXPECT_TRUE(FdsComeDownTo(fds, 1s)) << OpenFds() - fds << " descriptor(s) still open";
  auto started = std::chrono::steady_clock::now();
  ExpectExposition(Scrape(server.port()), e.Expected());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  EXPECT_EQ(e.renders.load(), 1);
}

TEST(MetricsHttpServer, OversizedHeadersAre431AndReadingStaysBounded) {
  FixtureExposition e;
  ServerThread server(e.render(), {});
  const int fds = OpenFds();
  // Past the 8 KiB limit, within what the server drains before closing:
  // the client reads the whole 431.
  std::string answer =
      Scrape(server.port(),
             "GET /metrics HTTP/1.1\r\nX-Padding: " + std::string(16 << 10, 'a') + "\r\n\r\n");
  EXPECT_EQ(answer.rfind("HTTP/1.1 431 Request Header Fields Too Large\r\n", 0), 0u) << answer;
  EXPECT_EQ(BodyOf(answer), "request header fields too large");

  // A client that sends 256 MiB of header: the server stops reading at the
  // limit, answers 431 and closes (the client may see a reset instead, the
  // rest of its bytes unread); the kernel's buffers are all it ever takes.
  int fd = Connect(server.port());
  ASSERT_GE(fd, 0);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  size_t accepted = 0;
  std::thread sender([&] {
    std::string chunk = "GET /metrics HTTP/1.1\r\nX-Padding: " + std::string(1 << 20, 'a');
    for (int i = 0; i < 256; ++i) {
      ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
      if (n <= 0) break;
      accepted += static_cast<size_t>(n);
      chunk.assign(1 << 20, 'a');
    }
  });
  answer = ReadAll(fd);
  sender.join();
  ::close(fd);
  EXPECT_TRUE(answer.empty() ||
              answer.rfind("HTTP/1.1 431 Request Header Fields Too Large\r\n", 0) == 0)
      << answer.substr(0, 200);
  EXPECT_LT(accepted, size_t{64} << 20);
  EXPECT_TRUE(FdsComeDownTo(fds, 1s));
  ExpectExposition(Scrape(server.port()), e.Expected());
  EXPECT_EQ(e.renders.load(), 1);
}

TEST(MetricsHttpServer, AFloodOfIdleConnectionsDoesNotStarveAScrape) {
  FixtureExposition e;
  MetricsHttpServer::Limits limits;  // 16 connections, 10 s deadline
  ServerThread server(e.render(), limits);
  const int fds = OpenFds();
  constexpr int kFlood = 200;
  std::vector<int> flood;
  for (int i = 0; i < kFlood; ++i) flood.push_back(ConnectWithoutWaiting(server.port()));
  std::this_thread::sleep_for(300ms);
  for (int round = 0; round < 3; ++round) {
    auto started = std::chrono::steady_clock::now();
    ExpectExposition(Scrape(server.port()), e.Expected());
    EXPECT_LT(std::chrono::steady_clock::now() - started, 2s) << "round " << round;
    // The server's own descriptors stay within its connection limit.
    EXPECT_LE(OpenFds() - fds - kFlood, limits.max_connections);
  }
  for (int fd : flood) ::close(fd);
  EXPECT_TRUE(FdsComeDownTo(fds, 2s)) << OpenFds() - fds << " descriptor(s) still open";
  ExpectExposition(Scrape(server.port()), e.Expected());
}

TEST(MetricsHttpServer, MalformedRequestLinesAreBadRequests) {
  static const std::string kBody = "up 1\n";
  ServerThread server([]() -> const std::string& { return kBody; }, {});
  for (const char* request :
       {"GET\r\n\r\n", "GET /metrics\r\n\r\n", "GET /metrics SPDY/3\r\n\r\n", "\r\n\r\n"}) {
    int fd = Connect(server.port());
    ASSERT_GE(fd, 0);
    SendAll(fd, request);
    std::string answer = ReadAll(fd);
    EXPECT_EQ(answer.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << request << answer;
    ::close(fd);
  }
}

TEST(MetricsHttpServer, ABusyAddressIsAClearError) {
  static const std::string kBody = "up 1\n";
  ServerThread first([]() -> const std::string& { return kBody; }, {});
  const std::string address = "127.0.0.1:" + std::to_string(first.port());
  try {
    MetricsHttpServer second(address, []() -> const std::string& { return kBody; });
    FAIL() << "a second server listened on " << address;
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot listen on " + address + ": Address already in use");
  }
  EXPECT_THROW(MetricsHttpServer("nonsense", []() -> const std::string& { return kBody; }),
               std::runtime_error);
}

}  // namespace
}  // namespace fabtrack
