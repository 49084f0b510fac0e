// The exporter's --web.config.file parser (collector/counters/web_config.h).
// Invariants:
//  - a configuration or an error, never both, never neither; the same text
//    gives the same answer;
//  - an error is "PATH:LINE: why" with LINE within the text;
//  - a configuration holds only what the server can use: bcrypt hashes,
//    TLS with both a certificate and a key, min_version <= max_version, a
//    client CA exactly when a client certificate is asked for and verified
//    (and never with NoClientCert);
//  - relative paths resolve against the file's folder: absolute from an
//    absolute path, and under "./" from a bare file name.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "collector/counters/web_config.h"

namespace {

using fabtrack::ClientAuthType;
using fabtrack::WebConfigParse;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

bool Same(const WebConfigParse& a, const WebConfigParse& b) {
  return a.config == b.config && a.error == b.error;
}

void CheckParse(const WebConfigParse& p, std::string_view text, const std::string& path) {
  Check(p.config.has_value() != !p.error.empty());
  if (!p.config) {
    Check(p.error.rfind(path + ":", 0) == 0);
    size_t at = path.size() + 1;
    size_t line = 0;
    while (at < p.error.size() && p.error[at] >= '0' && p.error[at] <= '9') {
      line = line * 10 + static_cast<size_t>(p.error[at++] - '0');
    }
    Check(at > path.size() + 1 && p.error.compare(at, 2, ": ") == 0);
    // An upper bound of libyaml's line breaks: CR, LF, and the first byte
    // of UTF-8's NEL, LS and PS.
    size_t lines = 1;
    for (char c : text) {
      lines += c == '\n' || c == '\r' || c == '\xc2' || c == '\xe2';
    }
    Check(line >= 1 && line <= lines + 1);
    return;
  }
  for (const auto& [user, hash] : p.config->basic_auth_users) Check(fabtrack::IsBcryptHash(hash));
  if (!p.config->tls) return;
  const fabtrack::WebTlsConfig& tls = *p.config->tls;
  Check(!tls.cert_file.empty() && !tls.key_file.empty());
  Check(tls.min_version <= tls.max_version);
  const bool verifies = tls.client_auth == ClientAuthType::kVerifyClientCertIfGiven ||
                        tls.client_auth == ClientAuthType::kRequireAndVerifyClientCert;
  if (verifies) Check(!tls.client_ca_file.empty());
  if (tls.client_auth == ClientAuthType::kNoClientCert) Check(tls.client_ca_file.empty());
  const std::string folder = path.substr(0, path.rfind('/'));
  for (const std::string& file : {tls.cert_file, tls.key_file, tls.client_ca_file}) {
    if (file.empty()) continue;
    Check(file.front() == '/' || path.front() != '/');
    Check(file.front() == '/' || file.rfind(path.front() == '/' ? folder + "/" : "./", 0) == 0);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const std::string path : {"/etc/fabtrack/web.yml", "web.yml"}) {
    const WebConfigParse p = fabtrack::ParseWebConfig(text, path);
    CheckParse(p, text, path);
    Check(Same(p, fabtrack::ParseWebConfig(text, path)));
  }
  return 0;
}
