// The exporter's `--web.config.file`: node_exporter's web configuration
// (prometheus/exporter-toolkit's format), parsed into a plain struct without
// touching a file, a certificate or a socket (fuzz/web_config_fuzz.cc).
//
//   tls_server_config:
//     cert_file: server.crt            # relative paths: from the file's folder
//     key_file: server.key
//     client_ca_file: clients-ca.crt
//     client_auth_type: RequireAndVerifyClientCert
//     min_version: TLS12               # TLS10..TLS13; max_version likewise
//   basic_auth_users:
//     prometheus: $2y$10$...           # bcrypt (htpasswd -nBC 10 prometheus)
//
// As exporter-toolkit, an unknown key is an error (a typo must not silently
// turn security off), no tls_server_config means plain HTTP, and basic auth
// works with or without TLS. The keys exporter-toolkit has and fabtrack does
// not implement (inline `cert`/`key`/`client_ca`, `cipher_suites`,
// `curve_preferences`, `client_allowed_sans`, `http_server_config.headers`,
// `rate_limit`) are refused by name rather than ignored; `http2` is accepted
// and has no effect (the exporter speaks HTTP/1.1).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace fabtrack {

// crypto/tls's ClientAuthType, by the names the file uses.
enum class ClientAuthType {
  kNoClientCert,                // no certificate asked for
  kRequestClientCert,           // asked for, not required, not verified
  kRequireAnyClientCert,        // required, not verified
  kVerifyClientCertIfGiven,     // not required; verified against client_ca_file if sent
  kRequireAndVerifyClientCert,  // required and verified against client_ca_file
};
std::string_view ClientAuthTypeName(ClientAuthType type);

enum class TlsVersion { kTls10, kTls11, kTls12, kTls13 };
std::string_view TlsVersionName(TlsVersion version);

struct WebTlsConfig {
  // Absolute, or relative to the working directory when the configuration
  // file's own path was relative (resolved against the file's folder).
  std::string cert_file;       // PEM: the certificate, then any intermediates
  std::string key_file;        // PEM, unencrypted
  std::string client_ca_file;  // PEM; empty: none
  ClientAuthType client_auth = ClientAuthType::kNoClientCert;
  TlsVersion min_version = TlsVersion::kTls12;  // exporter-toolkit's defaults
  TlsVersion max_version = TlsVersion::kTls13;
  bool prefer_server_cipher_suites = true;
  bool operator==(const WebTlsConfig&) const = default;
};

struct WebConfig {
  std::optional<WebTlsConfig> tls;  // absent: plain HTTP
  // User name -> bcrypt hash ($2a$, $2b$ or $2y$); empty: no authentication.
  std::map<std::string, std::string> basic_auth_users;
  bool operator==(const WebConfig&) const = default;
};

// Either a configuration or the first error, "PATH:LINE: why" (PATH: where
// the text was read from, also the folder relative paths resolve against).
// No error repeats a password hash.
struct WebConfigParse {
  std::optional<WebConfig> config;
  std::string error;
};
WebConfigParse ParseWebConfig(std::string_view text, const std::string& path);

// Whether `hash` has the shape of a bcrypt hash that libxcrypt verifies:
// $2a$, $2b$ or $2y$, a cost from 04 to 31, then 53 characters of bcrypt's
// base64 alphabet (22 of salt, 31 of hash).
bool IsBcryptHash(std::string_view hash);

}  // namespace fabtrack
