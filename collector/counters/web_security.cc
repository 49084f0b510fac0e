#include "collector/counters/web_security.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fabtrack {
namespace {

// OpenSSL's reason for the last failure, its error queue emptied.
std::string OpenSslReason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown error";
  // A file that cannot be opened: errno's text ("No such file or directory").
  if (ERR_SYSTEM_ERROR(code)) return std::strerror(ERR_GET_REASON(code));
  const char* reason = ERR_reason_error_string(code);
  return reason != nullptr ? reason : "OpenSSL error " + std::to_string(code);
}

int Version(TlsVersion v) {
  switch (v) {
    case TlsVersion::kTls10:
      return TLS1_VERSION;
    case TlsVersion::kTls11:
      return TLS1_1_VERSION;
    case TlsVersion::kTls12:
      return TLS1_2_VERSION;
    case TlsVersion::kTls13:
      return TLS1_3_VERSION;
  }
  return TLS1_2_VERSION;
}

// RequestClientCert and RequireAnyClientCert take whatever certificate is
// sent, as crypto/tls does.
int AcceptAnyCertificate(int, X509_STORE_CTX*) { return 1; }

// An encrypted key must fail with a message, not prompt on a terminal.
int NoPassphrase(char*, int, int, void*) { return 0; }

std::shared_ptr<ssl_ctx_st> MakeContext(const WebTlsConfig& tls, const std::string& path) {
  ERR_clear_error();
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  auto fail = [&](const std::string& what) {
    return std::runtime_error("web config " + path + ": " + what + ": " + OpenSslReason());
  };
  if (!ctx) throw fail("cannot make a TLS context");
  SSL_CTX_set_default_passwd_cb(ctx.get(), NoPassphrase);
  if (SSL_CTX_set_min_proto_version(ctx.get(), Version(tls.min_version)) != 1 ||
      SSL_CTX_set_max_proto_version(ctx.get(), Version(tls.max_version)) != 1) {
    throw fail("TLS versions");
  }
  if (tls.prefer_server_cipher_suites)
    SSL_CTX_set_options(ctx.get(), SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.cert_file.c_str()) != 1) {
    throw fail("cert_file " + tls.cert_file);
  }
  const std::string not_its_key =
      "key_file " + tls.key_file + " is not the key of cert_file " + tls.cert_file;
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    // OpenSSL checks the pair as it loads the key.
    const unsigned long error = ERR_peek_error();
    const bool mismatch =
        ERR_GET_LIB(error) == ERR_LIB_X509 && ERR_GET_REASON(error) == X509_R_KEY_VALUES_MISMATCH;
    throw fail(mismatch ? not_its_key : "key_file " + tls.key_file);
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1) throw fail(not_its_key);
  // Sessions are resumed only by the context that made them, which a
  // reload replaces (and with it, any client certificate's verification).
  static const unsigned char kSessionContext[] = "fabtrack-exporter";
  SSL_CTX_set_session_id_context(ctx.get(), kSessionContext, sizeof kSessionContext - 1);
  if (!tls.client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx.get(), tls.client_ca_file.c_str(), nullptr) != 1) {
      throw fail("client_ca_file " + tls.client_ca_file);
    }
    // Named in the handshake, so that a client holding several
    // certificates sends one from this CA.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(tls.client_ca_file.c_str());
    if (names == nullptr) throw fail("client_ca_file " + tls.client_ca_file);
    SSL_CTX_set_client_CA_list(ctx.get(), names);
  }
  switch (tls.client_auth) {
    case ClientAuthType::kNoClientCert:
      SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
      break;
    case ClientAuthType::kRequestClientCert:
      SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, AcceptAnyCertificate);
      break;
    case ClientAuthType::kRequireAnyClientCert:
      SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                         AcceptAnyCertificate);
      break;
    case ClientAuthType::kVerifyClientCertIfGiven:
      SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
      break;
    case ClientAuthType::kRequireAndVerifyClientCert:
      SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  return ctx;
}

std::string VersionRange(const WebTlsConfig& tls) {
  auto number = [](TlsVersion v) { return "1." + std::string(TlsVersionName(v)).substr(4); };
  return tls.min_version == tls.max_version
             ? number(tls.min_version)
             : number(tls.min_version) + "-" + number(tls.max_version);
}

}  // namespace

WebSecurity MakeWebSecurity(const WebConfig& config, const std::string& path) {
  WebSecurity s;
  if (config.tls) {
    s.tls = MakeContext(*config.tls, path);
    s.summary = "TLS " + VersionRange(*config.tls) + ", client certificates " +
                std::string(ClientAuthTypeName(config.tls->client_auth));
  } else {
    s.summary = "plain HTTP (no tls_server_config)";
  }
  if (!config.basic_auth_users.empty()) {
    s.basic_auth = std::make_shared<BasicAuthVerifier>(config.basic_auth_users);
    s.summary += ", basic auth for " + std::to_string(config.basic_auth_users.size()) + " user(s)";
  } else {
    s.summary += ", no basic auth";
  }
  return s;
}

WebSecurity LoadWebSecurity(const std::string& path) {
  // A folder opens and reads as nothing: an empty configuration, plain HTTP.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw std::runtime_error("cannot read web config " + path + ": it is a folder");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read web config " + path + ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw std::runtime_error("cannot read web config " + path + ": " + std::strerror(errno));
  }
  WebConfigParse parsed = ParseWebConfig(text.str(), path);
  if (!parsed.config) throw std::runtime_error(parsed.error);
  return MakeWebSecurity(*parsed.config, path);
}

}  // namespace fabtrack
