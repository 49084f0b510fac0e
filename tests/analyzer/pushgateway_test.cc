// The pure parts of the Pushgateway push: the group's URL (and the
// Pushgateway's base64 escape), what --pushgateway and the grouping labels
// accept, where credentials come from, and that no message repeats a
// password. The push against a real pushgateway daemon is
// tests/cli/pushgateway_test.sh.
#include "analyzer/report/pushgateway.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>

namespace fabtrack::analyzer {
namespace {

std::string GroupUrl(const std::vector<std::pair<std::string, std::string>>& labels,
                     const std::string& job = "fabtrack_analyze") {
  return PushgatewayGroupUrl({"http://gw:9091/", job, labels});
}

TEST(PushgatewayTest, GroupUrlSpellsPlainValuesAsIsAndEscapesTheRestInBase64Url) {
  EXPECT_EQ(GroupUrl({{"cluster", "lab"}, {"instance", "head-01.example"}}),
            "http://gw:9091/metrics/job/fabtrack_analyze/cluster/lab/instance/head-01.example");
  // A "/" would split the path; "+" and "/" of plain base64 would too.
  EXPECT_EQ(GroupUrl({{"site", "dc1/row2"}}),
            "http://gw:9091/metrics/job/fabtrack_analyze/site@base64/ZGMxL3JvdzI=");
  EXPECT_EQ(GroupUrl({{"v", "\xfb\xff"}}),
            "http://gw:9091/metrics/job/fabtrack_analyze/v@base64/-_8=");
  EXPECT_EQ(GroupUrl({{"v", "a b"}}), "http://gw:9091/metrics/job/fabtrack_analyze/v@base64/YSBi");
  // Empty is the Pushgateway's lone "="; dot segments would be collapsed.
  EXPECT_EQ(GroupUrl({{"v", ""}}), "http://gw:9091/metrics/job/fabtrack_analyze/v@base64/=");
  EXPECT_EQ(GroupUrl({{"v", ".."}}), "http://gw:9091/metrics/job/fabtrack_analyze/v@base64/Li4=");
  EXPECT_EQ(GroupUrl({}, "x"), "http://gw:9091/metrics/job/x");
  EXPECT_EQ(GroupUrl({}, "nightly/prod"), "http://gw:9091/metrics/job@base64/bmlnaHRseS9wcm9k");
  // A path prefix (a gateway behind a reverse proxy) is kept.
  EXPECT_EQ(PushgatewayGroupUrl({"https://proxy.example/pushgateway", "j", {}}),
            "https://proxy.example/pushgateway/metrics/job/j");
}

// The message of the exception `f` throws; "" when it throws none.
template <typename F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const PushgatewayError& e) {
    return e.what();
  }
  return "";
}

TEST(PushgatewayTest, UrlMustBeHttpWithAHostAndNoCredentials) {
  EXPECT_EQ(CheckPushgatewayUrl("http://127.0.0.1:9091").scheme, "http");
  EXPECT_TRUE(CheckPushgatewayUrl("http://127.0.0.1:9091").loopback);
  EXPECT_TRUE(CheckPushgatewayUrl("http://LocalHost:9091").loopback);
  EXPECT_TRUE(CheckPushgatewayUrl("http://[::1]:9091").loopback);
  EXPECT_FALSE(CheckPushgatewayUrl("https://gw.example:9091/prefix").loopback);
  EXPECT_EQ(CheckPushgatewayUrl("HTTPS://gw.example").scheme, "https");

  const std::string creds = ErrorOf([] { CheckPushgatewayUrl("https://alice:s3cr3t@gw:9091"); });
  EXPECT_NE(creds.find("carries credentials"), std::string::npos) << creds;
  EXPECT_NE(creds.find("FABTRACK_PUSHGATEWAY_PASSWORD"), std::string::npos) << creds;
  EXPECT_EQ(creds.find("s3cr3t"), std::string::npos) << creds;
  EXPECT_NE(ErrorOf([] { CheckPushgatewayUrl("https://alice@gw:9091"); }), "");

  for (const char* bad : {"gw:9091", "ftp://gw", "file:///tmp/x", "http://gw:9091/?a=b",
                          "http://gw:9091/#x", "", "not a url"}) {
    const std::string why = ErrorOf([&] { CheckPushgatewayUrl(bad); });
    EXPECT_NE(why, "") << bad;
  }
  // Even a malformed URL is never echoed: it may be "user:password@host".
  const std::string malformed = ErrorOf([] { CheckPushgatewayUrl("bob:hunter2@gw:9091"); });
  EXPECT_NE(malformed, "");
  EXPECT_EQ(malformed.find("hunter2"), std::string::npos) << malformed;
}

TEST(PushgatewayTest, GroupingLabelNamesFollowPrometheusAndLeaveJobAndClusterAlone) {
  EXPECT_EQ(ErrorOf([] { CheckGroupingLabelName("instance", {"cluster"}); }), "");
  EXPECT_EQ(ErrorOf([] { CheckGroupingLabelName("_site2", {"cluster"}); }), "");
  for (const char* bad : {"", "1x", "a-b", "a.b", "__name__", "job", "cluster"}) {
    EXPECT_NE(ErrorOf([&] { CheckGroupingLabelName(bad, {"cluster"}); }), "") << bad;
  }
}

struct FakeEnv {
  std::map<std::string, std::string> vars;
  std::function<const char*(const char*)> Getter() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

TEST(PushgatewayTest, CredentialsComeFromBothVariablesOrNeither) {
  FakeEnv env;
  EXPECT_FALSE(PushgatewayCredentials(std::nullopt, env.Getter()));
  env.vars = {{kPushgatewayUserEnv, "alice"}, {kPushgatewayPasswordEnv, "pa:ss"}};
  std::optional<BasicAuth> auth = PushgatewayCredentials(std::nullopt, env.Getter());
  ASSERT_TRUE(auth);
  EXPECT_EQ(auth->user, "alice");
  EXPECT_EQ(auth->password, "pa:ss");

  env.vars = {{kPushgatewayPasswordEnv, "s3cr3t"}};
  const std::string half = ErrorOf([&] { PushgatewayCredentials(std::nullopt, env.Getter()); });
  EXPECT_NE(half.find("FABTRACK_PUSHGATEWAY_USER is not set"), std::string::npos) << half;
  EXPECT_EQ(half.find("s3cr3t"), std::string::npos) << half;
}

TEST(PushgatewayTest, CredentialsFileIsUserColonPasswordAndWinsOverTheEnvironment) {
  const std::string path = testing::TempDir() + "/pushgateway_auth";
  std::ofstream(path) << "bob:pa:ss word\r\nignored second line\n";
  FakeEnv env;
  env.vars = {{kPushgatewayUserEnv, "alice"}, {kPushgatewayPasswordEnv, "other"}};
  std::optional<BasicAuth> auth = PushgatewayCredentials(path, env.Getter());
  ASSERT_TRUE(auth);
  EXPECT_EQ(auth->user, "bob");
  EXPECT_EQ(auth->password, "pa:ss word");

  std::ofstream(path) << "justapassword\n";
  const std::string bad = ErrorOf([&] { PushgatewayCredentials(path, env.Getter()); });
  EXPECT_NE(bad.find("must be USER:PASSWORD"), std::string::npos) << bad;
  EXPECT_EQ(bad.find("justapassword"), std::string::npos) << bad;
  std::remove(path.c_str());
  EXPECT_NE(ErrorOf([&] { PushgatewayCredentials(path, env.Getter()); }).find("cannot read"),
            std::string::npos);
}

TEST(PushgatewayTest, PushToADeadPortSaysWhereAndWhy) {
  // A port that was free a moment ago: bound, read back, closed.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  close(fd);

  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  const std::string why = ErrorOf([&] {
    PushToGateway({base, "fabtrack_analyze", {{"cluster", "lab"}}}, BasicAuth{"alice", "s3cr3t"},
                  "x 1\n");
  });
  EXPECT_NE(why.find("cannot push to " + base + "/metrics/job/fabtrack_analyze/cluster/lab"),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find("s3cr3t"), std::string::npos) << why;
}

}  // namespace
}  // namespace fabtrack::analyzer
