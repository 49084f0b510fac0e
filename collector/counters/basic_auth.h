// HTTP basic authentication of the exporter's scrapers: user names and bcrypt
// hashes from `basic_auth_users` (collector/counters/web_config.h), checked
// with libxcrypt.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace fabtrack {

class BasicAuthVerifier {
 public:
  // `users`: name -> bcrypt hash ($2a$, $2b$ or $2y$).
  explicit BasicAuthVerifier(std::map<std::string, std::string> users);
  ~BasicAuthVerifier();
  BasicAuthVerifier(const BasicAuthVerifier&) = delete;
  BasicAuthVerifier& operator=(const BasicAuthVerifier&) = delete;

  // Whether `password` is `user`'s. bcrypt is slow on purpose (tens of
  // milliseconds at cost 10), and Prometheus sends the same pair with every
  // scrape, so an answer is remembered under a SHA-256 of (user, hash,
  // password), as exporter-toolkit remembers it: a scrape pays bcrypt only
  // the first time its pair is seen. The password itself is not kept. An
  // unknown user costs one bcrypt too (against a fixed hash), so the time an
  // answer takes does not tell which users exist.
  bool Verify(std::string_view user, std::string_view password);

  size_t users() const { return users_.size(); }
  // bcrypt computations so far (what the cache saves; tests).
  size_t bcrypt_runs() const { return bcrypt_runs_; }

 private:
  bool Bcrypt(std::string_view password, const std::string& hash);

  std::map<std::string, std::string> users_;
  std::unordered_map<std::string, bool> answers_;  // digest -> verified
  std::unique_ptr<char[]> crypt_area_;             // libxcrypt's struct crypt_data
  size_t bcrypt_runs_ = 0;
};

}  // namespace fabtrack
