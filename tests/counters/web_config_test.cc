// --web.config.file: the parser of node_exporter's web configuration (every
// key, relative paths, what exporter-toolkit refuses and what fabtrack
// refuses by name, each error with its file:line), the bcrypt verifier
// behind basic_auth_users, and loading a configuration whose files are
// missing.
#include "collector/counters/web_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "collector/counters/basic_auth.h"
#include "collector/counters/web_security.h"

namespace fabtrack {
namespace {

// bcrypt (cost 4: fast) of "correct horse" in the three variants libxcrypt
// and exporter-toolkit take, and of "pass:with:colons".
constexpr const char* kHash2y = "$2y$04$fabtrackTestSaltSalt1eXl4KBnDmylMnHEfGVzEZPLMVufIiggS";
constexpr const char* kHash2a = "$2a$04$fabtrackTestSaltSalt1eXl4KBnDmylMnHEfGVzEZPLMVufIiggS";
constexpr const char* kHash2b = "$2b$04$fabtrackTestSaltSalt1eXl4KBnDmylMnHEfGVzEZPLMVufIiggS";
constexpr const char* kColonsHash = "$2b$04$fabtrackTestSaltSalt2ebBuDj3OoT08oWrWRZiDbGMDBF33K0Q6";

WebConfig Parsed(const std::string& text, const std::string& path = "/etc/fabtrack/web.yml") {
  WebConfigParse p = ParseWebConfig(text, path);
  EXPECT_TRUE(p.config.has_value()) << p.error;
  EXPECT_EQ(p.error, "");
  return p.config.value_or(WebConfig{});
}

std::string ErrorOf(const std::string& text) {
  WebConfigParse p = ParseWebConfig(text, "/etc/fabtrack/web.yml");
  EXPECT_FALSE(p.config.has_value()) << text;
  return p.error;
}

TEST(ParseWebConfig, ReadsEveryKeyAndResolvesPathsAgainstTheFilesFolder) {
  const WebConfig c = Parsed(std::string(R"(# as node_exporter's documentation shows it
tls_server_config:
  cert_file: server.crt
  key_file: "keys/server.key"
  client_ca_file: /etc/pki/clients-ca.crt
  client_auth_type: 'RequireAndVerifyClientCert'
  min_version: TLS13
  max_version: TLS13
  prefer_server_cipher_suites: false
http_server_config:
  http2: true
basic_auth_users:
  prometheus: )") + kHash2y + R"(
  grafana: ")" + kHash2b + R"("
)");
  WebConfig expected;
  expected.tls = WebTlsConfig{.cert_file = "/etc/fabtrack/server.crt",
                              .key_file = "/etc/fabtrack/keys/server.key",
                              .client_ca_file = "/etc/pki/clients-ca.crt",
                              .client_auth = ClientAuthType::kRequireAndVerifyClientCert,
                              .min_version = TlsVersion::kTls13,
                              .max_version = TlsVersion::kTls13,
                              .prefer_server_cipher_suites = false};
  expected.basic_auth_users = {{"prometheus", kHash2y}, {"grafana", kHash2b}};
  EXPECT_EQ(c, expected);
}

TEST(ParseWebConfig, DefaultsAreExporterToolkits) {
  const WebConfig c =
      Parsed("tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n", "web.yml");
  ASSERT_TRUE(c.tls);
  // A file named without a folder: its folder is the working directory.
  EXPECT_EQ(c.tls->cert_file, "./a.crt");
  EXPECT_EQ(c.tls->key_file, "./a.key");
  EXPECT_EQ(c.tls->client_ca_file, "");
  EXPECT_EQ(c.tls->client_auth, ClientAuthType::kNoClientCert);
  EXPECT_EQ(c.tls->min_version, TlsVersion::kTls12);
  EXPECT_EQ(c.tls->max_version, TlsVersion::kTls13);
  EXPECT_TRUE(c.tls->prefer_server_cipher_suites);
  EXPECT_TRUE(c.basic_auth_users.empty());
}

TEST(ParseWebConfig, EveryClientAuthTypeByItsName) {
  for (ClientAuthType type :
       {ClientAuthType::kNoClientCert, ClientAuthType::kRequestClientCert,
        ClientAuthType::kRequireAnyClientCert, ClientAuthType::kVerifyClientCertIfGiven,
        ClientAuthType::kRequireAndVerifyClientCert}) {
    const std::string ca =
        type == ClientAuthType::kNoClientCert ? "" : "  client_ca_file: ca.crt\n";
    const WebConfig c =
        Parsed("tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n" + ca +
               "  client_auth_type: " + std::string(ClientAuthTypeName(type)) + "\n");
    ASSERT_TRUE(c.tls);
    EXPECT_EQ(c.tls->client_auth, type) << ClientAuthTypeName(type);
  }
  // exporter-toolkit keeps its old name for RequireAnyClientCert.
  const WebConfig old = Parsed(
      "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  client_auth_type: "
      "RequireClientCert\n");
  EXPECT_EQ(old.tls->client_auth, ClientAuthType::kRequireAnyClientCert);
}

TEST(ParseWebConfig, NoTlsServerConfigIsPlainHttpAndBasicAuthWorksWithout) {
  EXPECT_EQ(Parsed(""), WebConfig{});
  EXPECT_EQ(Parsed("# nothing yet\n"), WebConfig{});
  EXPECT_EQ(Parsed("---\n"), WebConfig{});
  EXPECT_EQ(Parsed("{}"), WebConfig{});
  EXPECT_EQ(Parsed("tls_server_config:\nbasic_auth_users: ~\nhttp_server_config: null\n"),
            WebConfig{});
  // Keys with empty values are not TLS (exporter-toolkit's IsEnabled).
  EXPECT_EQ(Parsed("tls_server_config:\n  cert_file: ''\n  client_auth_type: ''\n"), WebConfig{});
  const WebConfig c = Parsed(std::string("basic_auth_users:\n  alice: ") + kHash2a + "\n");
  EXPECT_FALSE(c.tls);
  EXPECT_EQ(c.basic_auth_users.at("alice"), kHash2a);
  // Flow style is YAML too.
  const WebConfig flow = Parsed(
      "{tls_server_config: {cert_file: /a.crt, key_file: /a.key}, http_server_config: {http2: "
      "no}}");
  ASSERT_TRUE(flow.tls);
  EXPECT_EQ(flow.tls->cert_file, "/a.crt");
}

TEST(ParseWebConfig, ErrorsNameFileAndLine) {
  const std::string tls = "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n";
  EXPECT_EQ(ErrorOf("tls_server_config:\n  cert_file: a.crt\n  keyfile: a.key\n"),
            "/etc/fabtrack/web.yml:3: unknown key \"keyfile\" in tls_server_config");
  EXPECT_EQ(ErrorOf("\n\nbasic_auth: {}\n"),
            "/etc/fabtrack/web.yml:3: unknown key \"basic_auth\" in the web configuration");
  EXPECT_EQ(ErrorOf("http_server_config:\n  http3: true\n"),
            "/etc/fabtrack/web.yml:2: unknown key \"http3\" in http_server_config");
  EXPECT_EQ(ErrorOf(tls + "  cert_file: b.crt\n"),
            "/etc/fabtrack/web.yml:4: \"cert_file\" is given twice in tls_server_config (first "
            "on line 2)");
  EXPECT_EQ(ErrorOf(tls + "  client_auth_type: RequireAndVerify\n"),
            "/etc/fabtrack/web.yml:4: client_auth_type \"RequireAndVerify\" is none of "
            "NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, "
            "RequireAndVerifyClientCert");
  EXPECT_EQ(ErrorOf(tls + "  min_version: TLS1.2\n"),
            "/etc/fabtrack/web.yml:4: min_version \"TLS1.2\" is not a TLS version (TLS10, TLS11, "
            "TLS12, TLS13)");
  EXPECT_EQ(ErrorOf(tls + "  min_version: TLS13\n  max_version: TLS12\n"),
            "/etc/fabtrack/web.yml:5: min_version TLS13 is above max_version TLS12");
  EXPECT_EQ(ErrorOf(tls + "  prefer_server_cipher_suites: maybe\n"),
            "/etc/fabtrack/web.yml:4: prefer_server_cipher_suites must be true or false");
  EXPECT_EQ(ErrorOf("http_server_config:\n  http2: [true]\n"),
            "/etc/fabtrack/web.yml:2: http2 must be a single value");
  EXPECT_EQ(ErrorOf("tls_server_config:\n  key_file: a.key\n"),
            "/etc/fabtrack/web.yml:1: tls_server_config has no cert_file");
  EXPECT_EQ(ErrorOf("x: 1\ntls_server_config:\n  cert_file: a.crt\n"),
            "/etc/fabtrack/web.yml:1: unknown key \"x\" in the web configuration");
  EXPECT_EQ(ErrorOf("\ntls_server_config:\n  cert_file: a.crt\n"),
            "/etc/fabtrack/web.yml:2: tls_server_config has no key_file");
  EXPECT_EQ(ErrorOf(tls + "  client_ca_file: ca.crt\n"),
            "/etc/fabtrack/web.yml:4: client_ca_file is given but client_auth_type is "
            "NoClientCert (no client certificate would be asked for)");
  EXPECT_EQ(ErrorOf(tls + "  client_auth_type: VerifyClientCertIfGiven\n"),
            "/etc/fabtrack/web.yml:4: client_auth_type VerifyClientCertIfGiven needs "
            "client_ca_file, the CA that client certificates are verified against");
  EXPECT_EQ(ErrorOf("tls_server_config: [cert_file]\n"),
            "/etc/fabtrack/web.yml:1: tls_server_config must be a mapping of keys");
  EXPECT_EQ(ErrorOf("just text\n"),
            "/etc/fabtrack/web.yml:1: the web configuration must be a mapping of keys");
  EXPECT_EQ(ErrorOf("basic_auth_users:\n  [a]: b\n"),
            "/etc/fabtrack/web.yml:2: a key of basic_auth_users must be a name");
  EXPECT_EQ(ErrorOf("basic_auth_users:\n  alice:\n"),
            "/etc/fabtrack/web.yml:2: basic_auth_users: \"alice\" needs a bcrypt hash of the "
            "password");
  // YAML itself: libyaml's reason and where it found the problem.
  const std::string bad_yaml = ErrorOf("tls_server_config:\n  cert_file: a.crt\n key_file: x\n");
  EXPECT_EQ(bad_yaml.rfind("/etc/fabtrack/web.yml:3: not valid YAML: ", 0), 0u) << bad_yaml;
  const std::string tab = ErrorOf("tls_server_config:\n\tcert_file: a.crt\n");
  EXPECT_EQ(tab.rfind("/etc/fabtrack/web.yml:2: not valid YAML: ", 0), 0u) << tab;
}

TEST(ParseWebConfig, WhatFabtrackDoesNotImplementIsRefusedByName) {
  const std::string tls = "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n";
  EXPECT_EQ(ErrorOf(tls + "  cipher_suites:\n    - TLS_AES_128_GCM_SHA256\n"),
            "/etc/fabtrack/web.yml:4: cipher_suites is not supported by fabtrack's exporter; "
            "OpenSSL's defaults for the TLS version are used");
  EXPECT_EQ(ErrorOf(tls + "  curve_preferences: [X25519]\n").substr(0, 48),
            "/etc/fabtrack/web.yml:4: curve_preferences is no");
  EXPECT_EQ(ErrorOf(tls + "  client_allowed_sans: [a]\n").substr(0, 50),
            "/etc/fabtrack/web.yml:4: client_allowed_sans is no");
  EXPECT_EQ(ErrorOf("tls_server_config:\n  cert: |\n    -----BEGIN CERTIFICATE-----\n"),
            "/etc/fabtrack/web.yml:2: inline cert is not supported by fabtrack's exporter; put "
            "the PEM in a file and name it with cert_file");
  EXPECT_EQ(ErrorOf("http_server_config:\n  headers:\n    X-Frame-Options: deny\n"),
            "/etc/fabtrack/web.yml:2: http_server_config.headers is not supported by fabtrack's "
            "exporter");
  EXPECT_EQ(ErrorOf("rate_limit:\n  burst: 10\n"),
            "/etc/fabtrack/web.yml:1: rate_limit is not supported by fabtrack's exporter");
}

TEST(ParseWebConfig, APasswordThatIsNoBcryptHashIsRefusedWithoutRepeatingIt) {
  const std::string e = ErrorOf("basic_auth_users:\n  alice: hunter2-in-clear\n");
  EXPECT_EQ(e,
            "/etc/fabtrack/web.yml:2: basic_auth_users: the password of \"alice\" is not a bcrypt "
            "hash ($2a$, $2b$ or $2y$, as `htpasswd -nBC 10 USER` makes)");
  EXPECT_EQ(e.find("hunter2"), std::string::npos);
  EXPECT_EQ(ErrorOf(std::string("basic_auth_users:\n  alice: ") + kHash2a +
                    "\n  alice: " + kHash2b + "\n"),
            "/etc/fabtrack/web.yml:3: \"alice\" is given twice in basic_auth_users (first on "
            "line 2)");
}

TEST(IsBcryptHash, TakesWhatLibxcryptVerifies) {
  for (const char* good : {kHash2y, kHash2a, kHash2b, kColonsHash}) {
    EXPECT_TRUE(IsBcryptHash(good)) << good;
  }
  const std::string h = kHash2b;
  for (const std::string& bad :
       {std::string(""), h.substr(0, 59), h + ".", "$2x" + h.substr(3), "$1b" + h.substr(3),
        "$2b$03" + h.substr(6), "$2b$32" + h.substr(6), "$2b$1a" + h.substr(6),
        h.substr(0, 20) + "!" + h.substr(21), "$2b$04-" + h.substr(7),
        std::string("$6$rounds=5000$salt$") + std::string(41, 'a')}) {
    EXPECT_FALSE(IsBcryptHash(bad)) << bad;
  }
}

TEST(BasicAuthVerifier, ChecksPasswordsAgainstEveryBcryptVariant) {
  BasicAuthVerifier v({{"y", kHash2y}, {"a", kHash2a}, {"b", kHash2b}, {"colons", kColonsHash}});
  EXPECT_EQ(v.users(), 4u);
  for (const char* user : {"y", "a", "b"}) {
    EXPECT_TRUE(v.Verify(user, "correct horse")) << user;
    EXPECT_FALSE(v.Verify(user, "correct horse ")) << user;
    EXPECT_FALSE(v.Verify(user, "")) << user;
  }
  EXPECT_TRUE(v.Verify("colons", "pass:with:colons"));
  EXPECT_FALSE(v.Verify("b", "pass:with:colons"));  // another user's password
  EXPECT_FALSE(v.Verify("nobody", "correct horse"));
  EXPECT_FALSE(v.Verify("", ""));
  // crypt(3) would stop at the NUL and check "correct horse".
  EXPECT_FALSE(v.Verify("b", std::string("correct horse\0tail", 18)));
}

TEST(BasicAuthVerifier, RemembersAnswersSoAScrapePaysBcryptOnce) {
  BasicAuthVerifier v(std::map<std::string, std::string>{{"prometheus", kHash2b}});
  EXPECT_TRUE(v.Verify("prometheus", "correct horse"));
  EXPECT_EQ(v.bcrypt_runs(), 1u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(v.Verify("prometheus", "correct horse"));
  EXPECT_EQ(v.bcrypt_runs(), 1u);
  EXPECT_FALSE(v.Verify("prometheus", "wrong"));
  EXPECT_FALSE(v.Verify("prometheus", "wrong"));
  EXPECT_EQ(v.bcrypt_runs(), 2u);
  // An unknown user costs a bcrypt as a known one does (no timing oracle).
  EXPECT_FALSE(v.Verify("grafana", "correct horse"));
  EXPECT_EQ(v.bcrypt_runs(), 3u);
  // Remembered answers are per pair: the same password for another user,
  // or "ab"+"c" against "a"+"bc", is a new question.
  BasicAuthVerifier two({{"ab", kHash2b}, {"a", kHash2a}});
  EXPECT_FALSE(two.Verify("a", "bcorrect horse"));
  EXPECT_FALSE(two.Verify("ab", "correct hors"));
  EXPECT_TRUE(two.Verify("ab", "correct horse"));
  EXPECT_TRUE(two.Verify("a", "correct horse"));
  EXPECT_EQ(two.bcrypt_runs(), 4u);
}

TEST(LoadWebSecurity, MissingFilesAreNamed) {
  const std::string dir = ::testing::TempDir() + "/web-config-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  EXPECT_THROW(
      {
        try {
          LoadWebSecurity(dir + "/absent.yml");
        } catch (const std::runtime_error& e) {
          EXPECT_EQ(std::string(e.what()),
                    "cannot read web config " + dir + "/absent.yml: No such file or directory");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_THROW(LoadWebSecurity(dir), std::runtime_error);  // a folder is not an empty file
  std::ofstream(dir + "/web.yml") << "tls_server_config:\n  cert_file: none.crt\n  key_file: "
                                     "none.key\n";
  try {
    LoadWebSecurity(dir + "/web.yml");
    ADD_FAILURE() << "a missing certificate was loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("web config " + dir + "/web.yml: cert_file " + dir +
                                              "/none.crt: No such file or directory",
                                          0),
              0u)
        << e.what();
  }
  std::ofstream(dir + "/auth.yml") << "basic_auth_users:\n  prometheus: " << kHash2y << "\n";
  const WebSecurity s = LoadWebSecurity(dir + "/auth.yml");
  EXPECT_EQ(s.tls, nullptr);
  ASSERT_NE(s.basic_auth, nullptr);
  EXPECT_TRUE(s.basic_auth->Verify("prometheus", "correct horse"));
  EXPECT_EQ(s.summary, "plain HTTP (no tls_server_config), basic auth for 1 user(s)");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fabtrack
