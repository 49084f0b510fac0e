// The analysis for Alertmanager where no node_exporter textfile collector
// runs: the exposition that PrometheusTextfile rendered, PUT to a Prometheus
// Pushgateway. PUT replaces the whole group, so a finding resolved since the
// last push disappears instead of lingering until someone deletes it.
// The only libcurl user; the pure parts (validating the URL and grouping
// labels, the group's URL, reading the credentials) are separate functions so
// that tests need no network.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fabtrack::analyzer {

// Every failure: bad URL or label, unreadable credentials, connection, HTTP
// status. Messages never contain a password.
class PushgatewayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One Pushgateway group: the job and further grouping labels, in order.
struct PushgatewayGroup {
  std::string base_url;  // http(s)://host:port[/prefix], checked by CheckPushgatewayUrl
  std::string job = "fabtrack_analyze";
  std::vector<std::pair<std::string, std::string>> labels;
};

struct BasicAuth {
  std::string user;
  std::string password;
};

struct PushgatewayEndpoint {
  std::string scheme;  // "http" or "https"
  std::string host;
  bool loopback = false;  // localhost, 127.0.0.0/8 or ::1: cleartext does not leave the machine
};

// Refuses (PushgatewayError) anything but an http(s) URL with a host, and in
// particular credentials in it (a command line is visible in the process
// list), a query or a fragment. The message never repeats the URL, which may
// hold a password.
PushgatewayEndpoint CheckPushgatewayUrl(const std::string& url);

// Refuses names Prometheus does not allow, `__` names, and `job` (the job is
// its own option). `reserved` lists further names the caller sets itself.
void CheckGroupingLabelName(const std::string& name, const std::vector<std::string>& reserved);

// "<base>/metrics/job/<job>/<name>/<value>...". A value that is empty, holds
// anything outside [A-Za-z0-9._~-] (a "/" would split it) or is only dots
// (clients and servers collapse those path segments) goes as
// "<name>@base64/<base64url(value)>", the Pushgateway's own escape.
std::string PushgatewayGroupUrl(const PushgatewayGroup& group);

// Basic-auth credentials: from `auth_file` when given (its first line is
// "user:password"; the password may hold ':'), else from the environment
// variables FABTRACK_PUSHGATEWAY_USER and FABTRACK_PUSHGATEWAY_PASSWORD (both
// or neither), read through `getenv` so tests can inject them. nullopt: none.
inline constexpr char kPushgatewayUserEnv[] = "FABTRACK_PUSHGATEWAY_USER";
inline constexpr char kPushgatewayPasswordEnv[] = "FABTRACK_PUSHGATEWAY_PASSWORD";
std::optional<BasicAuth> PushgatewayCredentials(
    const std::optional<std::string>& auth_file,
    const std::function<const char*(const char*)>& getenv);

struct PushTimeouts {
  long connect_ms = 10'000;  // a dead gateway must not hold the nightly job for long
  long total_ms = 30'000;
};

// PUTs `exposition` (text format 0.0.4) to the group. Redirects are not
// followed (they could carry the credentials elsewhere). Throws
// PushgatewayError naming the group's URL and what failed: the connection,
// or the HTTP status with the start of the gateway's answer.
void PushToGateway(const PushgatewayGroup& group, const std::optional<BasicAuth>& auth,
                   const std::string& exposition, const PushTimeouts& timeouts = {});

}  // namespace fabtrack::analyzer
