// ParseDecimal and FormatShortest against the standard library they stand in
// for: the same bytes and the same doubles, on the decimals tables are made
// of and on values chosen to leave the fast paths.
#include "core/decimal_text.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>

namespace fabtrack {
namespace {

std::string StdShortest(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, p);
}

std::string OursShortest(double v) {
  char buf[64];
  return std::string(buf, FormatShortest(v, buf));
}

std::optional<double> StdParse(const std::string& s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Same value and same sign of zero; NaN equals NaN.
void ExpectSameParse(const std::string& s) {
  const std::optional<double> want = StdParse(s), got = ParseDecimal(s);
  ASSERT_EQ(want.has_value(), got.has_value()) << s;
  if (!want) return;
  if (std::isnan(*want)) {
    EXPECT_TRUE(std::isnan(*got)) << s;
    return;
  }
  EXPECT_EQ(*want, *got) << s;
  EXPECT_EQ(std::signbit(*want), std::signbit(*got)) << s;
}

TEST(DecimalText, FormatsLikeToCharsOnTableDecimals) {
  // What nccl-tests prints: %.2f times and bandwidths, %.1f, %.3f, integers.
  for (int i = -200000; i <= 200000; ++i) {
    for (double scale : {1.0, 10.0, 100.0, 1000.0}) {
      const double v = i / scale;
      ASSERT_EQ(StdShortest(v), OursShortest(v)) << i << "/" << scale;
    }
  }
}

TEST(DecimalText, FormatsLikeToCharsOnRandomDoublesAndEdges) {
  std::mt19937_64 rng(20261205);
  std::uniform_real_distribution<double> exponent(-12, 18);
  std::uniform_int_distribution<uint64_t> bits;
  for (int i = 0; i < 300000; ++i) {
    const double v = std::pow(10.0, exponent(rng)) * (i % 2 ? -1 : 1);
    ASSERT_EQ(StdShortest(v), OursShortest(v)) << v;
    // Decimals of 1-8 fraction digits and up to 15 significant ones.
    const double d = static_cast<double>(bits(rng) % 1'000'000'000'000'000ULL) /
                     std::pow(10.0, static_cast<int>(bits(rng) % 9));
    ASSERT_EQ(StdShortest(d), OursShortest(d)) << d;
    double any;
    const uint64_t b = bits(rng);
    std::memcpy(&any, &b, sizeof any);
    ASSERT_EQ(StdShortest(any), OursShortest(any)) << b;
  }
  for (double v : {0.0, -0.0, 1e-6, 9.99e-7, 1e15, 999999999999999.0, 1e14 + 0.5, 0.1, 0.2, 0.3,
                   1.0 / 3, 2.0 / 3, 100000.0, 123456.0, 1200.0, 0.0001, 0.00012, 5e-5,
                   // One and two decimals (written without the lengths'
                   // arithmetic): every count of whole digits, zeros after
                   // the point, signs.
                   0.01, -0.01, 0.05, 0.1, -0.9, 9.99, 10.5, 99.01, 100.07, 12345678.9,
                   9999999999999.99, 99999999999999.9, -99999999999999.9, 123456789012345.0,
                   std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max()}) {
    EXPECT_EQ(StdShortest(v), OursShortest(v)) << v;
  }
}

TEST(DecimalText, ParsesLikeFromChars) {
  for (const char* s : {"0",
                        "-0",
                        "0.00",
                        "-0.00",
                        "12.34",
                        "1048576",
                        "0.05",
                        "999999999999999",
                        "9999999999999999",
                        "123456789012345.6",
                        "0.1234567890123456789",
                        "1e5",
                        "1.5e-3",
                        "nan",
                        "inf",
                        "-inf",
                        ".5",
                        "5.",
                        "-",
                        "",
                        "+1",
                        "1.2.3",
                        "12a",
                        " 1",
                        "1 ",
                        "00012.50",
                        "4294967296.25",
                        "-7.125"}) {
    ExpectSameParse(s);
  }
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint64_t> bits;
  char buf[64];
  for (int i = 0; i < 300000; ++i) {
    const int fraction = static_cast<int>(bits(rng) % 10);
    const uint64_t m = bits(rng) % 100'000'000'000'000'000ULL;  // up to 17 digits
    std::snprintf(buf, sizeof buf, "%s%.*f", i % 3 ? "" : "-", fraction,
                  static_cast<double>(m) / std::pow(10.0, fraction));
    ExpectSameParse(buf);
    std::snprintf(buf, sizeof buf, "%llu.%0*llu", static_cast<unsigned long long>(m % 100000),
                  fraction + 1, static_cast<unsigned long long>(bits(rng) % 1000));
    ExpectSameParse(buf);
  }
}

}  // namespace
}  // namespace fabtrack
