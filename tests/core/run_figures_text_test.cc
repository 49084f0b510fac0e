#include "core/run_figures_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

namespace fabtrack {
namespace {

// The oracle: a general JSON parser, nulls as NaN.
std::map<std::string, std::vector<double>> ByJsonParser(const std::string& text) {
  std::map<std::string, std::vector<double>> out;
  const nlohmann::json parsed = nlohmann::json::parse(text);
  for (const auto& [key, numbers] : parsed.items()) {
    std::vector<double>& v = out[key];
    for (const auto& n : numbers) v.push_back(n.is_null() ? std::nan("") : n.get<double>());
  }
  return out;
}

void ExpectSame(const std::map<std::string, std::vector<double>>& a,
                const std::map<std::string, std::vector<double>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [key, numbers] : a) {
    ASSERT_TRUE(b.contains(key)) << key;
    const std::vector<double>& other = b.at(key);
    ASSERT_EQ(numbers.size(), other.size()) << key;
    for (size_t i = 0; i < numbers.size(); ++i) {
      if (std::isnan(numbers[i])) {
        EXPECT_TRUE(std::isnan(other[i])) << key << "[" << i << "]";
      } else {
        EXPECT_EQ(numbers[i], other[i]) << key << "[" << i << "]";  // bit for bit
      }
    }
  }
}

TEST(RunFiguresText, ReadsWhatPostgresPrintsForAStoredSummary) {
  // As `SELECT summary::text` prints a row StoreRunSummaries wrote: jsonb
  // orders keys by length, numbers as numeric text (no exponent).
  const std::string text =
      R"({"latency_jitter/6fd13702f2e1": [0.03, 1.090909090909091], )"
      R"("busbw_regression/203e50664025": [0.9984814292063076, 0.0], )"
      R"("scaling_drop.efficiency/bf5ea3f42203": [2.0, null], )"
      R"("busbw_regression.reference/203e50664025": [8.0, 0.0006292131853825603, 14.0, )"
      R"(16.0, 0.00000000000000000001234, -14.5]})";
  auto figures = ParseRunFiguresText(text);
  ASSERT_TRUE(figures);
  ExpectSame(*figures, ByJsonParser(text));
  EXPECT_TRUE(std::isnan(figures->at("scaling_drop.efficiency/bf5ea3f42203")[1]));
  EXPECT_EQ(figures->at("latency_jitter/6fd13702f2e1")[1], 1.090909090909091);
}

TEST(RunFiguresText, AgreesWithAJsonParserOnRandomFigures) {
  std::mt19937_64 rng(18);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::uniform_int_distribution<int> exponent(-300, 300), count(0, 6), keys(0, 5);
  for (int round = 0; round < 300; ++round) {
    nlohmann::json object = nlohmann::json::object();
    const int n = keys(rng);
    for (int k = 0; k < n; ++k) {
      nlohmann::json list = nlohmann::json::array();
      const int m = count(rng);
      for (int i = 0; i < m; ++i) {
        if (rng() % 7 == 0) {
          list.push_back(nullptr);
        } else {
          list.push_back(unit(rng) * std::pow(10.0, exponent(rng)));
        }
      }
      object["figure." + std::to_string(k) + "/" + std::to_string(rng() % 100000)] = list;
    }
    // Both spellings: compact (nlohmann) and spaced (PostgreSQL), exponents included.
    for (const std::string& text : {object.dump(), object.dump(1)}) {
      auto figures = ParseRunFiguresText(text);
      ASSERT_TRUE(figures) << text;
      ExpectSame(*figures, ByJsonParser(text));
    }
  }
}

TEST(RunFiguresText, AnythingElseIsNoSummary) {
  for (const char* text :
       {"", "[]", "null", R"({"a": 1})", R"({"a": [1, "x"]})", R"({"a": [1, [2]]})",
        R"({"a": [1,]})", R"({"a": [1})", R"({"a": [1]} x)", R"({"a\"b": [1]})", R"({"a": [+1]})",
        R"({"a": [inf]})", R"({"a": [nan]})", R"({"a": [1] "b": [2]})", R"({"a": {"b": [1]}})", "{",
        R"({"a": [1], })"}) {
    EXPECT_FALSE(ParseRunFiguresText(text)) << text;
  }
  auto empty = ParseRunFiguresText(" { } ");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  auto empty_list = ParseRunFiguresText(R"({"a": []})");
  ASSERT_TRUE(empty_list);
  EXPECT_TRUE(empty_list->at("a").empty());
}

}  // namespace
}  // namespace fabtrack
