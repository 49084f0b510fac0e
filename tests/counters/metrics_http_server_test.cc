// The exporter's HTTP edge over real loopback sockets: address parsing, a
// body larger than the socket buffers to a reader that stalls (it must not
// hold up other scrapes, and must get every byte once it reads), deadlines
// for clients that say nothing, and the connection limit.
#include "collector/counters/metrics_http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

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
  ServerThread(MetricsHttpServer::Render render, MetricsHttpServer::Limits limits)
      : port_(FreePort()),
        server_("127.0.0.1:" + std::to_string(port_), std::move(render), limits),
        thread_([this] { server_.Serve([this] { return stop_.load(); }); }) {}
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

TEST(MetricsHttpServer, ClientsBeyondTheConnectionLimitWaitTheirTurnAndAreServed) {
  static const std::string kBody = "up 1\n";
  MetricsHttpServer::Limits limits;
  limits.max_connections = 1;
  limits.deadline = 300ms;
  ServerThread server([]() -> const std::string& { return kBody; }, limits);
  int holder = Connect(server.port());  // takes the only slot and says nothing
  ASSERT_GE(holder, 0);
  std::this_thread::sleep_for(50ms);
  int waiting = Connect(server.port());  // sits in the listen backlog
  ASSERT_GE(waiting, 0);
  SendAll(waiting, "GET /metrics HTTP/1.0\r\n\r\n");
  std::string answer = ReadAll(waiting);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
  EXPECT_EQ(BodyOf(answer), kBody);
  ::close(waiting);
  ::close(holder);
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
