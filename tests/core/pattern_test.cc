#include "core/pattern.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace fabtrack {
namespace {

// core/pattern promises std::regex's semantics with its machinery compiled in
// one unit: every answer is checked against std::regex itself, on patterns of
// the shapes the parsers use (groups that take no part, lazy groups, case,
// anchors) and on texts that match, match in part, and do not match.
struct Case {
  std::string expression;
  Pattern::Case letter_case;
  std::vector<std::string> texts;
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {R"(Rank (\d+)(?: (.*?))? -- (.*))",
       Pattern::Case::kSensitive,
       {"Rank 3 gpu-07 -- stuck", "Rank 12 -- dead", "  Rank 4 x -- y z  ", "rank 3 -- x", ""}},
      {R"((Initialization|Asynchronous) errors? on (\d+) ranks?)",
       Pattern::Case::kSensitive,
       {"Asynchronous errors on 2 ranks", "Initialization error on 1 rank", "no errors"}},
      {R"(\b(?:hca|dev(?:ice)?) '?([A-Za-z][\w.-]*))",
       Pattern::Case::kInsensitive,
       {"Got completion from peer with error 12, opcode 0, HCA 'mlx5_3'", "device mlx5_0 down",
        "nothing here"}},
      {R"(^(postgres(?:ql)?://[^:/@?]*):[^@/?]*@)",
       Pattern::Case::kSensitive,
       {"postgresql://fab:secret@db/fabtrack", "postgres://u@h", "host=/run dbname=x"}},
      {R"(\((\d+(?:\.\d+)?)s\))",
       Pattern::Case::kSensitive,
       {"(61.5s)", "after (3s) and (4s)", "s"}},
  };
  return cases;
}

// std::regex itself with the case's expression and letter case: the oracle.
std::regex OracleFor(const Case& c) {
  return std::regex(c.expression, c.letter_case == Pattern::Case::kInsensitive
                                      ? std::regex::ECMAScript | std::regex::icase
                                      : std::regex::ECMAScript);
}

TEST(Pattern, MatchesAndSearchAnswerAsStdRegexWithTheSameGroups) {
  for (const Case& c : Cases()) {
    const Pattern pattern(c.expression, c.letter_case);
    const std::regex oracle = OracleFor(c);
    for (const std::string& text : c.texts) {
      SCOPED_TRACE(c.expression + " on '" + text + "'");
      for (bool whole : {true, false}) {
        std::smatch want;
        const bool want_hit =
            whole ? std::regex_match(text, want, oracle) : std::regex_search(text, want, oracle);
        PatternMatch got;
        const bool got_hit = whole ? pattern.Matches(text, &got) : pattern.Search(text, &got);
        ASSERT_EQ(got_hit, want_hit) << (whole ? "match" : "search");
        EXPECT_EQ(whole ? pattern.Matches(text) : pattern.Search(text), want_hit);
        if (!want_hit) continue;
        for (size_t i = 0; i < want.size() + 1; ++i) {
          const bool taken = i < want.size() && want[i].matched;
          EXPECT_EQ(got.matched(i), taken) << "group " << i;
          EXPECT_EQ(got.str(i), taken ? want[i].str() : std::string()) << "group " << i;
        }
      }
    }
  }
}

TEST(Pattern, ReplaceAllAnswersAsStdRegexReplace) {
  for (const Case& c : Cases()) {
    const Pattern pattern(c.expression, c.letter_case);
    const std::regex oracle = OracleFor(c);
    for (const std::string& text : c.texts) {
      for (const char* format : {"[$1]", "$&$&", "", "<$2>"}) {
        EXPECT_EQ(pattern.ReplaceAll(text, format), std::regex_replace(text, oracle, format))
            << c.expression << " on '" << text << "' with " << format;
      }
    }
  }
  // The redaction the conninfo code relies on, spelled out.
  EXPECT_EQ(Pattern(R"(^(postgres(?:ql)?://[^:/@?]*):[^@/?]*@)")
                .ReplaceAll("postgresql://fab:secret@db/fabtrack", "$1:***@"),
            "postgresql://fab:***@db/fabtrack");
}

TEST(Pattern, AnInvalidExpressionThrowsAsStdRegex) {
  EXPECT_THROW(Pattern("(unclosed"), std::regex_error);
}

}  // namespace
}  // namespace fabtrack
