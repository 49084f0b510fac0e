#include "core/decimal_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace fabtrack {
namespace {

// 10^0 .. 10^22: every one is exactly a double (5^22 < 2^53).
constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// Below 10^15 a mantissa is exact in a double (2^53 is about 9.007e15), and
// so is the quotient's one rounding: m / 10^k is the double nearest to the
// decimal m * 10^-k, which is what a correctly rounding reader returns.
constexpr uint64_t kExactMantissa = 1'000'000'000'000'000ULL;
constexpr int kMaxDigits = 15;

std::optional<double> ParseGeneral(std::string_view text) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

int DecimalDigits(uint64_t v) {
  int n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

// "00" .. "99": two digits per lookup when writing a number.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

constexpr uint64_t kIntPowersOfTen[] = {1,
                                        10,
                                        100,
                                        1000,
                                        10000,
                                        100000,
                                        1000000,
                                        10000000,
                                        100000000,
                                        1000000000,
                                        10000000000,
                                        100000000000,
                                        1000000000000,
                                        10000000000000,
                                        100000000000000,
                                        1000000000000000};

// Writes `n` (below 10^16) in decimal at `p`; returns the end. Two digits per
// division, written from the last back once their count is known.
char* WriteWhole(uint64_t n, char* p) {
  if (n < 10) {
    *p = static_cast<char>('0' + n);
    return p + 1;
  }
  if (n < 100) {
    std::memcpy(p, kDigitPairs + 2 * n, 2);
    return p + 2;
  }
  int digits = 3;
  while (digits < 16 && n >= kIntPowersOfTen[digits]) ++digits;
  char* const end = p + digits;
  char* q = end;
  while (n >= 100) {
    const uint64_t rest = n / 100;
    q -= 2;
    std::memcpy(q, kDigitPairs + 2 * (n - 100 * rest), 2);
    n = rest;
  }
  if (n >= 10) {
    std::memcpy(q - 2, kDigitPairs + 2 * n, 2);
  } else {
    q[-1] = static_cast<char>('0' + n);
  }
  return end;
}

// mantissa * 10^-fraction_digits in %f form: a '-' when negative, the whole
// part (at least "0"), then the point and exactly `fraction_digits` digits
// (zeros after the point kept); fraction_digits <= 15. One and two fraction
// digits, most of a table, divide by constants.
char* WriteFixed(bool negative, uint64_t mantissa, int fraction_digits, char* out) {
  char* p = out;
  if (negative) *p++ = '-';
  switch (fraction_digits) {
    case 0:
      return WriteWhole(mantissa, p);
    case 1: {
      const uint64_t whole = mantissa / 10;
      p = WriteWhole(whole, p);
      p[0] = '.';
      p[1] = static_cast<char>('0' + (mantissa - 10 * whole));
      return p + 2;
    }
    case 2: {
      const uint64_t whole = mantissa / 100;
      p = WriteWhole(whole, p);
      p[0] = '.';
      std::memcpy(p + 1, kDigitPairs + 2 * (mantissa - 100 * whole), 2);
      return p + 3;
    }
    default: {
      const uint64_t scale = kIntPowersOfTen[fraction_digits];
      const uint64_t whole = mantissa / scale;
      p = WriteWhole(whole, p);
      *p++ = '.';
      uint64_t fraction = mantissa - whole * scale;
      for (int i = fraction_digits - 1; i >= 0; --i) {
        p[i] = static_cast<char>('0' + fraction % 10);
        fraction /= 10;
      }
      return p + fraction_digits;
    }
  }
}

}  // namespace

std::optional<double> ParseDecimal(std::string_view text) {
  const char* p = text.data();
  const char* const end = p + text.size();
  const bool negative = p != end && *p == '-';
  if (negative) ++p;
  uint64_t mantissa = 0;
  int digits = 0, fraction_digits = 0;
  const char* const int_start = p;
  while (p != end && *p >= '0' && *p <= '9' && digits <= kMaxDigits) {
    mantissa = mantissa * 10 + static_cast<uint64_t>(*p++ - '0');
    ++digits;
  }
  // No integer digit (".5", "-"): the general reader decides.
  if (p == int_start) return ParseGeneral(text);
  if (p != end && *p == '.') {
    ++p;
    const char* const fraction_start = p;
    while (p != end && *p >= '0' && *p <= '9' && digits <= kMaxDigits) {
      mantissa = mantissa * 10 + static_cast<uint64_t>(*p++ - '0');
      ++digits;
      ++fraction_digits;
    }
    if (p == fraction_start) return ParseGeneral(text);  // "5." and the like
  }
  // An exponent, a long mantissa, trailing text: not this path's to judge.
  if (p != end || digits > kMaxDigits || mantissa >= kExactMantissa) return ParseGeneral(text);
  const double v = static_cast<double>(mantissa) / kPowersOfTen[fraction_digits];
  return negative ? -v : v;
}

char* FormatShortest(double value, char* out) {
  const double magnitude = std::fabs(value);
  // Zero (and its sign), non-finite, huge and tiny values: the general path.
  if (!(magnitude >= 1e-6 && magnitude < 1e15)) {
    return std::to_chars(out, out + 32, value).ptr;
  }
  // The fewest fraction digits whose decimal reads back as this value. With
  // at most 15 significant digits no other decimal of as many digits reads
  // back as the same double, so it is the shortest round trip's digits.
  constexpr int kMaxFractionDigits = 8;
  // Whether the value reads back from `k` fraction digits, and their mantissa.
  // Through int64_t, not uint64_t: below kExactMantissa both hold the same
  // values, and x86-64 converts signed integers in one instruction each way.
  auto reads_back = [magnitude](int k, uint64_t* m) {
    const double scaled = magnitude * kPowersOfTen[k];
    if (scaled >= static_cast<double>(kExactMantissa)) return false;
    // Round half up: a decimal that reads back lies far from a half.
    const int64_t rounded = static_cast<int64_t>(scaled + 0.5);
    *m = static_cast<uint64_t>(rounded);
    return static_cast<double>(rounded) / kPowersOfTen[k] == magnitude;
  };
  uint64_t mantissa = 0;
  int fraction_digits = -1;
  uint64_t two = 0;
  if (reads_back(2, &two)) {
    // nccl-tests prints two decimals, so most values read back at k = 2
    // (one division instead of three). A value that reads back with k < 2
    // digits also does with two, its mantissa times 10^(2-k) (the products
    // stay within 0.25 of it below kExactMantissa), so only a mantissa ending
    // in zeros needs the shorter tries, in the same order as below.
    uint64_t m = 0;
    if (two % 100 == 0 && reads_back(0, &m)) {
      mantissa = m;
      fraction_digits = 0;
    } else if (two % 10 == 0 && reads_back(1, &m)) {
      mantissa = m;
      fraction_digits = 1;
    } else {
      mantissa = two;
      fraction_digits = 2;
    }
  } else {
    for (int k = 0; k <= kMaxFractionDigits; ++k) {
      uint64_t m = 0;
      if (reads_back(k, &m)) {
        mantissa = m;
        fraction_digits = k;
        break;
      }
    }
  }
  if (fraction_digits < 0 || mantissa == 0) return std::to_chars(out, out + 32, value).ptr;

  // to_chars writes the shorter of %f and %e (%f on a tie). With at most two
  // fraction digits and a last digit that is not 0, %f always is: its length
  // is the digits, plus the point and at most two zeros before them for a
  // value under 1, where %e takes the digits, a point when there are two or
  // more, and four for "e-02"-like exponents. Most table values are these:
  // they skip the lengths' arithmetic below.
  if (fraction_digits <= 2 && mantissa % 10 != 0) {
    return WriteFixed(value < 0, mantissa, fraction_digits, out);
  }

  // Otherwise, when scientific notation is shorter (0.0001 is "1e-04",
  // 100000 is "1e+05"), let to_chars write it.
  const int mantissa_digits = DecimalDigits(mantissa);
  const int int_digits = std::max(1, mantissa_digits - fraction_digits);
  const int fixed_length = int_digits + (fraction_digits > 0 ? 1 + fraction_digits : 0);
  uint64_t significant = mantissa;
  int significant_digits = mantissa_digits;
  while (significant % 10 == 0) {
    significant /= 10;
    --significant_digits;
  }
  const int exponent = mantissa_digits - fraction_digits - 1;  // of the leading digit
  const int exponent_digits = std::max(2, DecimalDigits(static_cast<uint64_t>(std::abs(exponent))));
  const int scientific_length =
      significant_digits + (significant_digits > 1 ? 1 : 0) + 2 + exponent_digits;
  if (scientific_length < fixed_length) return std::to_chars(out, out + 32, value).ptr;
  return WriteFixed(value < 0, mantissa, fraction_digits, out);
}

}  // namespace fabtrack
