#include "collector/counters/web_config.h"

#include <yaml.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace fabtrack {
namespace {

// Thrown inside the parser only; ParseWebConfig turns it into the error.
struct ConfigError {
  size_t line;  // 1-based
  std::string why;
};

// libyaml's document, freed however the parse ends.
class YamlDocument {
 public:
  explicit YamlDocument(std::string_view text) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
    loaded_ = yaml_parser_load(&parser_, &document_) != 0;
  }
  ~YamlDocument() {
    if (loaded_) yaml_document_delete(&document_);
    yaml_parser_delete(&parser_);
  }
  YamlDocument(const YamlDocument&) = delete;
  YamlDocument& operator=(const YamlDocument&) = delete;

  bool loaded() const { return loaded_; }
  ConfigError LoadError() const {
    std::string why = parser_.problem != nullptr ? parser_.problem : "not YAML";
    if (parser_.context != nullptr) why = std::string(parser_.context) + ": " + why;
    return {parser_.problem_mark.line + 1, "not valid YAML: " + why};
  }
  yaml_node_t* root() { return yaml_document_get_root_node(&document_); }
  yaml_node_t* node(int index) { return yaml_document_get_node(&document_, index); }

 private:
  yaml_parser_t parser_;
  yaml_document_t document_;
  bool loaded_ = false;
};

size_t LineOf(const yaml_node_t* n) { return n->start_mark.line + 1; }

std::string_view ScalarText(const yaml_node_t* n) {
  return {reinterpret_cast<const char*>(n->data.scalar.value), n->data.scalar.length};
}

// libyaml leaves plain scalars unresolved; these are YAML's nulls (an empty
// value included), as yaml.v2 reads them.
bool IsNull(const yaml_node_t* n) {
  if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return false;
  const std::string_view s = ScalarText(n);
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

class Parser {
 public:
  explicit Parser(YamlDocument& doc) : doc_(doc) {}

  // One mapping's keys, each handled by `on_key` (which returns false for a
  // key it does not know); keys given twice are refused.
  void ForEachKey(yaml_node_t* mapping, std::string_view where,
                  const std::function<bool(std::string_view, yaml_node_t*, size_t)>& on_key) {
    if (mapping->type != YAML_MAPPING_NODE) {
      throw ConfigError{LineOf(mapping), std::string(where) + " must be a mapping of keys"};
    }
    std::vector<std::pair<std::string, size_t>> seen;
    for (yaml_node_pair_t* p = mapping->data.mapping.pairs.start;
         p < mapping->data.mapping.pairs.top; ++p) {
      yaml_node_t* key = doc_.node(p->key);
      yaml_node_t* value = doc_.node(p->value);
      if (key->type != YAML_SCALAR_NODE) {
        throw ConfigError{LineOf(key), "a key of " + std::string(where) + " must be a name"};
      }
      const std::string name(ScalarText(key));
      auto twice =
          std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == name; });
      if (twice != seen.end()) {
        throw ConfigError{LineOf(key), "\"" + name + "\" is given twice in " + std::string(where) +
                                           " (first on line " + std::to_string(twice->second) +
                                           ")"};
      }
      seen.emplace_back(name, LineOf(key));
      if (!on_key(name, value, LineOf(key))) {
        throw ConfigError{LineOf(key), "unknown key \"" + name + "\" in " + std::string(where)};
      }
    }
  }

  std::string Text(yaml_node_t* value, std::string_view key) {
    if (IsNull(value)) return "";
    if (value->type != YAML_SCALAR_NODE) {
      throw ConfigError{LineOf(value), std::string(key) + " must be a single value"};
    }
    return std::string(ScalarText(value));
  }

  // YAML 1.1's booleans, as yaml.v2 reads them.
  bool Bool(yaml_node_t* value, std::string_view key) {
    const std::string s = Text(value, key);
    for (const char* yes : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}) {
      if (s == yes) return true;
    }
    for (const char* no : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}) {
      if (s == no) return false;
    }
    throw ConfigError{LineOf(value), std::string(key) + " must be true or false"};
  }

  TlsVersion Version(yaml_node_t* value, std::string_view key) {
    const std::string s = Text(value, key);
    for (TlsVersion v :
         {TlsVersion::kTls10, TlsVersion::kTls11, TlsVersion::kTls12, TlsVersion::kTls13}) {
      if (s == TlsVersionName(v)) return v;
    }
    throw ConfigError{LineOf(value), std::string(key) + " \"" + s +
                                         "\" is not a TLS version (TLS10, TLS11, TLS12, TLS13)"};
  }

 private:
  YamlDocument& doc_;
};

[[noreturn]] void NotSupported(size_t line, std::string_view key, std::string_view instead) {
  throw ConfigError{line, std::string(key) + " is not supported by fabtrack's exporter" +
                              (instead.empty() ? "" : "; " + std::string(instead))};
}

// exporter-toolkit's config_util.JoinDir.
std::string JoinDir(const std::string& dir, const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  return dir + "/" + path;
}

std::string FolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

struct TlsKeys {
  WebTlsConfig tls;
  size_t line = 0;              // of tls_server_config
  bool any_set = false;         // a TLS key has a non-empty value
  size_t client_auth_line = 0;  // 0: not given
  size_t client_ca_line = 0;
};

TlsKeys ParseTls(Parser& p, yaml_node_t* mapping, size_t line) {
  TlsKeys t;
  t.line = line;
  if (IsNull(mapping)) return t;
  std::optional<size_t> max_line;
  p.ForEachKey(mapping, "tls_server_config", [&](std::string_view key, yaml_node_t* v, size_t at) {
    auto path = [&](std::string* field) {
      *field = p.Text(v, key);
      t.any_set = t.any_set || !field->empty();
    };
    if (key == "cert_file") {
      path(&t.tls.cert_file);
    } else if (key == "key_file") {
      path(&t.tls.key_file);
    } else if (key == "client_ca_file") {
      path(&t.tls.client_ca_file);
      t.client_ca_line = at;
    } else if (key == "client_auth_type") {
      const std::string name = p.Text(v, key);
      t.any_set = t.any_set || !name.empty();
      t.client_auth_line = at;
      if (name.empty() || name == "NoClientCert") {
        t.tls.client_auth = ClientAuthType::kNoClientCert;
      } else if (name == "RequireClientCert") {  // exporter-toolkit's old name
        t.tls.client_auth = ClientAuthType::kRequireAnyClientCert;
      } else {
        bool known = false;
        for (ClientAuthType type :
             {ClientAuthType::kRequestClientCert, ClientAuthType::kRequireAnyClientCert,
              ClientAuthType::kVerifyClientCertIfGiven,
              ClientAuthType::kRequireAndVerifyClientCert}) {
          if (name == ClientAuthTypeName(type)) {
            t.tls.client_auth = type;
            known = true;
          }
        }
        if (!known) {
          throw ConfigError{LineOf(v), "client_auth_type \"" + name +
                                           "\" is none of NoClientCert, RequestClientCert, "
                                           "RequireAnyClientCert, VerifyClientCertIfGiven, "
                                           "RequireAndVerifyClientCert"};
        }
      }
    } else if (key == "min_version") {
      t.tls.min_version = p.Version(v, key);
    } else if (key == "max_version") {
      t.tls.max_version = p.Version(v, key);
      max_line = at;
    } else if (key == "prefer_server_cipher_suites") {
      t.tls.prefer_server_cipher_suites = p.Bool(v, key);
    } else if (key == "cert" || key == "key" || key == "client_ca") {
      NotSupported(at, "inline " + std::string(key),
                   "put the PEM in a file and name it with " + std::string(key) + "_file");
    } else if (key == "cipher_suites" || key == "curve_preferences") {
      NotSupported(at, key, "OpenSSL's defaults for the TLS version are used");
    } else if (key == "client_allowed_sans") {
      NotSupported(at, key, "give the allowed clients certificates from their own CA");
    } else {
      return false;
    }
    return true;
  });
  if (t.tls.min_version > t.tls.max_version) {
    throw ConfigError{max_line.value_or(line), "min_version " +
                                                   std::string(TlsVersionName(t.tls.min_version)) +
                                                   " is above max_version " +
                                                   std::string(TlsVersionName(t.tls.max_version))};
  }
  return t;
}

void CheckTls(const TlsKeys& t) {
  // exporter-toolkit's validateTLSPaths and ConfigToTLSConfig.
  if (t.tls.cert_file.empty()) {
    throw ConfigError{t.line, "tls_server_config has no cert_file"};
  }
  if (t.tls.key_file.empty()) {
    throw ConfigError{t.line, "tls_server_config has no key_file"};
  }
  const ClientAuthType auth = t.tls.client_auth;
  if (!t.tls.client_ca_file.empty() && auth == ClientAuthType::kNoClientCert) {
    throw ConfigError{t.client_ca_line,
                      "client_ca_file is given but client_auth_type is NoClientCert "
                      "(no client certificate would be asked for)"};
  }
  // Stricter than exporter-toolkit, which verifies against the system's
  // CAs then: client certificates from any public CA are rarely meant.
  if (t.tls.client_ca_file.empty() && (auth == ClientAuthType::kVerifyClientCertIfGiven ||
                                       auth == ClientAuthType::kRequireAndVerifyClientCert)) {
    throw ConfigError{t.client_auth_line, "client_auth_type " +
                                              std::string(ClientAuthTypeName(auth)) +
                                              " needs client_ca_file, the CA that client "
                                              "certificates are verified against"};
  }
}

std::map<std::string, std::string> ParseUsers(Parser& p, yaml_node_t* mapping) {
  std::map<std::string, std::string> users;
  if (IsNull(mapping)) return users;
  p.ForEachKey(mapping, "basic_auth_users", [&](std::string_view user, yaml_node_t* v, size_t) {
    if (v->type != YAML_SCALAR_NODE || IsNull(v)) {
      throw ConfigError{LineOf(v), "basic_auth_users: \"" + std::string(user) +
                                       "\" needs a bcrypt hash of the password"};
    }
    const std::string hash(ScalarText(v));
    if (!IsBcryptHash(hash)) {
      // The value is not repeated: it may be a password written in clear.
      throw ConfigError{LineOf(v), "basic_auth_users: the password of \"" + std::string(user) +
                                       "\" is not a bcrypt hash ($2a$, $2b$ or $2y$, as "
                                       "`htpasswd -nBC 10 USER` makes)"};
    }
    users.emplace(user, hash);
    return true;
  });
  return users;
}

WebConfig Parse(std::string_view text, const std::string& path) {
  YamlDocument doc(text);
  if (!doc.loaded()) throw doc.LoadError();
  yaml_node_t* root = doc.root();
  WebConfig config;
  if (root == nullptr || IsNull(root)) return config;  // an empty file: plain HTTP, no auth
  Parser p(doc);
  std::optional<TlsKeys> tls;
  p.ForEachKey(root, "the web configuration", [&](std::string_view key, yaml_node_t* v, size_t at) {
    if (key == "tls_server_config") {
      tls = ParseTls(p, v, at);
    } else if (key == "basic_auth_users") {
      config.basic_auth_users = ParseUsers(p, v);
    } else if (key == "http_server_config") {
      if (IsNull(v)) return true;
      p.ForEachKey(v, "http_server_config", [&](std::string_view k, yaml_node_t* value, size_t l) {
        if (k == "http2") {
          p.Bool(value, k);  // checked, and without effect: HTTP/1.1 only
        } else if (k == "headers") {
          NotSupported(l, "http_server_config.headers", "");
        } else {
          return false;
        }
        return true;
      });
    } else if (key == "rate_limit") {
      NotSupported(at, key, "");
    } else {
      return false;
    }
    return true;
  });
  if (tls && tls->any_set) {
    CheckTls(*tls);
    const std::string folder = FolderOf(path);
    tls->tls.cert_file = JoinDir(folder, tls->tls.cert_file);
    tls->tls.key_file = JoinDir(folder, tls->tls.key_file);
    tls->tls.client_ca_file = JoinDir(folder, tls->tls.client_ca_file);
    config.tls = tls->tls;
  }
  return config;
}

constexpr std::string_view kBcryptAlphabet =
    "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

}  // namespace

std::string_view ClientAuthTypeName(ClientAuthType type) {
  switch (type) {
    case ClientAuthType::kNoClientCert:
      return "NoClientCert";
    case ClientAuthType::kRequestClientCert:
      return "RequestClientCert";
    case ClientAuthType::kRequireAnyClientCert:
      return "RequireAnyClientCert";
    case ClientAuthType::kVerifyClientCertIfGiven:
      return "VerifyClientCertIfGiven";
    case ClientAuthType::kRequireAndVerifyClientCert:
      return "RequireAndVerifyClientCert";
  }
  return "NoClientCert";
}

std::string_view TlsVersionName(TlsVersion version) {
  switch (version) {
    case TlsVersion::kTls10:
      return "TLS10";
    case TlsVersion::kTls11:
      return "TLS11";
    case TlsVersion::kTls12:
      return "TLS12";
    case TlsVersion::kTls13:
      return "TLS13";
  }
  return "TLS12";
}

bool IsBcryptHash(std::string_view hash) {
  if (hash.size() != 60 || hash.substr(0, 2) != "$2" || hash[3] != '$' || hash[6] != '$') {
    return false;
  }
  if (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') return false;
  if (hash[4] < '0' || hash[4] > '3' || hash[5] < '0' || hash[5] > '9') return false;
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4 || cost > 31) return false;
  return std::all_of(hash.begin() + 7, hash.end(),
                     [](char c) { return kBcryptAlphabet.find(c) != std::string_view::npos; });
}

WebConfigParse ParseWebConfig(std::string_view text, const std::string& path) {
  WebConfigParse result;
  try {
    result.config = Parse(text, path);
  } catch (const ConfigError& e) {
    result.error = path + ":" + std::to_string(e.line) + ": " + e.why;
  }
  return result;
}

}  // namespace fabtrack
