// What `--web.config.file` turns into for the exporter's server: an OpenSSL
// server context (certificate, key, client CA and client_auth_type, TLS
// versions) and the basic-auth users. Reading the files is this edge's; the
// file's format is web_config.h's pure parser.
#pragma once

#include <memory>
#include <string>

#include "collector/counters/basic_auth.h"
#include "collector/counters/web_config.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace fabtrack {

struct WebSecurity {
  // Absent: plain HTTP. Shared: connections being served keep the context
  // they started with when a reload replaces it.
  std::shared_ptr<ssl_ctx_st> tls;
  // Absent: no authentication.
  std::shared_ptr<BasicAuthVerifier> basic_auth;
  // One line for the log, without secrets: "TLS 1.2-1.3, client certificates
  // RequireAndVerifyClientCert, basic auth for 2 user(s)".
  std::string summary;
};

// Reads and checks the configuration file and everything it names
// (certificate and key, which must match; the client CA). Throws
// std::runtime_error with a message naming the file and line, or the
// certificate file and OpenSSL's reason; never a password or a key.
WebSecurity LoadWebSecurity(const std::string& path);

// The same from a parsed configuration (tests; the files it names are read).
WebSecurity MakeWebSecurity(const WebConfig& config, const std::string& path);

}  // namespace fabtrack
