#include "analyzer/report/pushgateway.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>

namespace fabtrack::analyzer {
namespace {

bool IsPlainSegment(const std::string& value) {
  if (value.empty()) return false;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c == '.'; })) return false;
  return std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '~' || c == '-';
  });
}

// RFC 4648 "URL and filename safe" alphabet, padded: what the Pushgateway
// decodes after "@base64".
std::string Base64Url(const std::string& in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v =
        (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint8_t(in[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string Segment(const std::string& name, const std::string& value) {
  if (IsPlainSegment(value)) return "/" + name + "/" + value;
  // The Pushgateway's spelling of an empty value is a lone "=".
  return "/" + name + "@base64/" + (value.empty() ? std::string("=") : Base64Url(value));
}

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlUrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

// nullopt when the URL has no such part.
std::optional<std::string> UrlPart(CURLU* url, CURLUPart part) {
  char* text = nullptr;
  if (curl_url_get(url, part, &text, 0) != CURLUE_OK || text == nullptr) return std::nullopt;
  std::string out(text);
  curl_free(text);
  return out;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The start of the gateway's answer, on one line: enough to say why it refused.
size_t CollectAnswer(char* data, size_t size, size_t count, void* user) {
  auto* answer = static_cast<std::string*>(user);
  const size_t n = size * count;
  if (answer->size() < 512) answer->append(data, std::min(n, 512 - answer->size()));
  return n;
}

std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

PushgatewayEndpoint CheckPushgatewayUrl(const std::string& url) {
  std::unique_ptr<CURLU, CurlUrlDeleter> parsed(curl_url());
  if (!parsed) throw PushgatewayError("cannot initialise libcurl's URL parser");
  // Without a scheme curl would guess one; a typo like "gw:9091" should be an
  // error, not a guess.
  if (curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) {
    throw PushgatewayError("not a URL; give the gateway as http://HOST:PORT or https://HOST:PORT");
  }
  PushgatewayEndpoint endpoint;
  endpoint.scheme = Lower(UrlPart(parsed.get(), CURLUPART_SCHEME).value_or(""));
  if (endpoint.scheme != "http" && endpoint.scheme != "https") {
    throw PushgatewayError("only http:// and https:// gateways are supported");
  }
  if (UrlPart(parsed.get(), CURLUPART_USER) || UrlPart(parsed.get(), CURLUPART_PASSWORD)) {
    throw PushgatewayError(std::string("the URL carries credentials, which the process list "
                                       "shows to every user; put them in ") +
                           kPushgatewayUserEnv + " and " + kPushgatewayPasswordEnv +
                           " or in a --pushgateway-auth-file");
  }
  if (UrlPart(parsed.get(), CURLUPART_QUERY) || UrlPart(parsed.get(), CURLUPART_FRAGMENT)) {
    throw PushgatewayError("the URL has a query or fragment; give only the gateway's base URL");
  }
  endpoint.host = Lower(UrlPart(parsed.get(), CURLUPART_HOST).value_or(""));
  if (endpoint.host.empty()) throw PushgatewayError("the URL has no host");
  endpoint.loopback = endpoint.host == "localhost" || endpoint.host.rfind("127.", 0) == 0 ||
                      endpoint.host == "[::1]";
  return endpoint;
}

void CheckGroupingLabelName(const std::string& name, const std::vector<std::string>& reserved) {
  const bool valid = !name.empty() && !(name[0] >= '0' && name[0] <= '9') &&
                     std::all_of(name.begin(), name.end(), [](char c) {
                       return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                              (c >= '0' && c <= '9') || c == '_';
                     });
  if (!valid) throw PushgatewayError("\"" + name + "\" is not a Prometheus label name");
  if (name.rfind("__", 0) == 0) {
    throw PushgatewayError("label names starting with __ are reserved to Prometheus");
  }
  if (name == "job") throw PushgatewayError("the job is set with --pushgateway-job");
  if (std::find(reserved.begin(), reserved.end(), name) != reserved.end()) {
    throw PushgatewayError("\"" + name + "\" is always set by fabtrack analyze");
  }
}

std::string PushgatewayGroupUrl(const PushgatewayGroup& group) {
  std::string url = group.base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += "/metrics" + Segment("job", group.job);
  for (const auto& [name, value] : group.labels) url += Segment(name, value);
  return url;
}

std::optional<BasicAuth> PushgatewayCredentials(
    const std::optional<std::string>& auth_file,
    const std::function<const char*(const char*)>& getenv) {
  if (auth_file) {
    std::ifstream in(*auth_file);
    std::string line;
    if (!in || !std::getline(in, line)) {
      throw PushgatewayError("cannot read the credentials file " + *auth_file);
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t colon = line.find(':');
    // Never quote the line: it is the password.
    if (colon == std::string::npos || colon == 0) {
      throw PushgatewayError("the first line of " + *auth_file + " must be USER:PASSWORD");
    }
    return BasicAuth{line.substr(0, colon), line.substr(colon + 1)};
  }
  const char* user = getenv(kPushgatewayUserEnv);
  const char* password = getenv(kPushgatewayPasswordEnv);
  const bool has_user = user != nullptr && *user != '\0';
  const bool has_password = password != nullptr && *password != '\0';
  if (!has_user && !has_password) return std::nullopt;
  if (!has_user || !has_password) {
    throw PushgatewayError(std::string(has_user ? kPushgatewayPasswordEnv : kPushgatewayUserEnv) +
                           " is not set (basic auth needs both " + kPushgatewayUserEnv + " and " +
                           kPushgatewayPasswordEnv + ")");
  }
  return BasicAuth{user, password};
}

void PushToGateway(const PushgatewayGroup& group, const std::optional<BasicAuth>& auth,
                   const std::string& exposition, const PushTimeouts& timeouts) {
  GlobalInitOnce();
  const std::string url = PushgatewayGroupUrl(group);
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) throw PushgatewayError("cannot initialise libcurl");
  std::unique_ptr<curl_slist, SlistDeleter> headers(
      curl_slist_append(nullptr, "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
  // No "Expect: 100-continue" round trip for a body of a few KiB.
  headers.reset(curl_slist_append(headers.release(), "Expect:"));
  if (!headers) throw PushgatewayError("out of memory building the request");

  CURL* c = curl.get();
  char error[CURL_ERROR_SIZE] = "";
  std::string answer;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, exposition.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(exposition.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_USERAGENT, "fabtrack-analyze");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeouts.connect_ms);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeouts.total_ms);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &CollectAnswer);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
  if (auth) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(c, CURLOPT_USERNAME, auth->user.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, auth->password.c_str());
  }

  const CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    throw PushgatewayError("cannot push to " + url + ": " +
                           (error[0] != '\0' ? std::string(error) : curl_easy_strerror(rc)));
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status > 299) {
    std::string why = "the Pushgateway at " + url + " answered HTTP " + std::to_string(status);
    if (status == 401 || status == 403) {
      why += auth ? " (check the credentials)" : " (it wants basic-auth credentials)";
    }
    answer = OneLine(answer);
    if (!answer.empty()) why += ": " + answer;
    throw PushgatewayError(why);
  }
}

}  // namespace fabtrack::analyzer
