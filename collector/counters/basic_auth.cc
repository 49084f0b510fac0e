#include "collector/counters/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstring>
#include <utility>

namespace fabtrack {
namespace {

// Remembered answers; beyond it the memory starts over (a client trying
// many passwords cannot grow it without bound).
constexpr size_t kMaxRememberedAnswers = 256;

// bcrypt (cost 10, as htpasswd and exporter-toolkit's own) of a password no
// one sends: what an unknown user's password is checked against.
constexpr const char* kNoSuchUserHash =
    "$2b$10$Ozfx4L37yoAZlQh7lQnhBONy9MF5g0jlc9t74GCOsGBSKZlNoV2f.";

// SHA-256 of the length-prefixed parts: no two different triples collide by
// shifting bytes from one part into the next.
std::string AnswerKey(std::string_view user, std::string_view hash, std::string_view password) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  for (std::string_view part : {user, hash, password}) {
    const uint64_t size = part.size();
    EVP_DigestUpdate(ctx, &size, sizeof size);
    EVP_DigestUpdate(ctx, part.data(), part.size());
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx, digest, &length);
  EVP_MD_CTX_free(ctx);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

}  // namespace

BasicAuthVerifier::BasicAuthVerifier(std::map<std::string, std::string> users)
    : users_(std::move(users)), crypt_area_(new char[sizeof(crypt_data)]()) {}

BasicAuthVerifier::~BasicAuthVerifier() = default;

bool BasicAuthVerifier::Bcrypt(std::string_view password, const std::string& hash) {
  ++bcrypt_runs_;
  // crypt(3) reads a C string: a password with a NUL in it would be checked
  // as its part before the NUL.
  if (password.find('\0') != std::string_view::npos) return false;
  std::string phrase(password);
  const char* out = crypt_rn(phrase.c_str(), hash.c_str(), crypt_area_.get(),
                             static_cast<int>(sizeof(crypt_data)));
  OPENSSL_cleanse(phrase.data(), phrase.size());
  return out != nullptr && std::strlen(out) == hash.size() &&
         CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
}

bool BasicAuthVerifier::Verify(std::string_view user, std::string_view password) {
  auto found = users_.find(std::string(user));
  const bool known = found != users_.end();
  const std::string hash = known ? found->second : kNoSuchUserHash;
  const std::string key = AnswerKey(user, hash, password);
  if (auto answer = answers_.find(key); answer != answers_.end()) return answer->second;
  const bool ok = Bcrypt(password, hash) && known;
  if (answers_.size() >= kMaxRememberedAnswers) answers_.clear();
  answers_.emplace(key, ok);
  return ok;
}

}  // namespace fabtrack
