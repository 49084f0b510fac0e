#include "store/connection.h"

#include <gtest/gtest.h>

#include <map>

namespace fabtrack::store {
namespace {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  const char* operator()(const char* name) const {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  }
};

TEST(ResolveConnectionTest, FlagWinsOverEverything) {
  FakeEnv env{{{"FABTRACK_DB", "dbname=env"}, {"PGHOST", "pg"}}};
  ConnectionTarget t = ResolveConnection(std::string("dbname=flag"), env);
  EXPECT_EQ(t.origin, ConnectionOrigin::kFlag);
  EXPECT_EQ(t.conninfo, "dbname=flag");
}

TEST(ResolveConnectionTest, FabtrackEnvBeforeLibpqEnv) {
  FakeEnv env{{{"FABTRACK_DB", "postgresql://h/db"}, {"PGHOST", "pg"}}};
  ConnectionTarget t = ResolveConnection(std::nullopt, env);
  EXPECT_EQ(t.origin, ConnectionOrigin::kFabtrackEnv);
  EXPECT_EQ(t.conninfo, "postgresql://h/db");
}

TEST(ResolveConnectionTest, LibpqVariablesThenEmbedded) {
  for (const char* var : {"PGHOST", "PGDATABASE", "PGSERVICE", "PGPORT", "PGUSER"}) {
    FakeEnv env{{{var, "x"}}};
    EXPECT_EQ(ResolveConnection(std::nullopt, env).origin, ConnectionOrigin::kLibpqEnv) << var;
  }
  // PGPASSWORD alone names no server: still the embedded default.
  FakeEnv env{{{"PGPASSWORD", "x"}, {"FABTRACK_DB", ""}}};
  EXPECT_EQ(ResolveConnection(std::nullopt, env).origin, ConnectionOrigin::kEmbedded);
}

TEST(RedactConninfoTest, RemovesPasswordsInEveryForm) {
  struct Case {
    std::string in, out;
  } cases[] = {
      {"host=db user=w password=s3cret dbname=f", "host=db user=w password=*** dbname=f"},
      {"host=db password = 'a b\\' c' dbname=f", "host=db password = *** dbname=f"},
      {"postgresql://writer:s3cret@db:5432/fabtrack", "postgresql://writer:***@db:5432/fabtrack"},
      {"postgres://db/fabtrack?user=w&password=s3cret&sslmode=require",
       "postgres://db/fabtrack?user=w&password=***&sslmode=require"},
      {"host=/tmp/x dbname=fabtrack", "host=/tmp/x dbname=fabtrack"},
      {"postgresql://writer@db/fabtrack", "postgresql://writer@db/fabtrack"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(RedactConninfo(c.in), c.out) << c.in;
    EXPECT_EQ(ConninfoHasPassword(c.in), c.in != c.out) << c.in;
  }
}

// A misspelt keyword may be a misspelt password: its value is never shown.
TEST(RedactConninfoTest, MasksEveryValueOfAnUnknownKeyword) {
  struct Case {
    std::string in, out;
  } cases[] = {
      {"host=/run/x passwrd=hunter2 dbname=fabtrack", "host=/run/x passwrd=*** dbname=fabtrack"},
      {"hostt=/run/x dbname=fabtrack", "hostt=*** dbname=fabtrack"},
      {"host=db pasword = 'hunter 2' user=w", "host=db pasword = *** user=w"},
      {"host=db sslpassword=k3y", "host=db sslpassword=***"},
      // A value typed apart from its keyword (libpq refuses it) is not shown either.
      {"host=db password hunter2", "host=db *** ***"},
      {"postgresql://w@db/fabtrack?passwrd=hunter2&sslmode=require",
       "postgresql://w@db/fabtrack?passwrd=***&sslmode=require"},
      {"postgresql://w@db/fabtrack?ssl=true&application_name=x",
       "postgresql://w@db/fabtrack?ssl=true&application_name=x"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(RedactConninfo(c.in), c.out) << c.in;
    EXPECT_EQ(RedactConninfo(c.in).find("hunter"), std::string::npos) << c.in;
  }
  EXPECT_FALSE(ConninfoHasPassword("host=/run/x passwrd=hunter2"));
  EXPECT_TRUE(ConninfoHasPassword("host=db password=x"));
}

TEST(ConninfoParseErrorTest, LibpqsOwnParserJudges) {
  EXPECT_EQ(ConninfoParseError("host=/run/x dbname=fabtrack"), std::nullopt);
  EXPECT_EQ(ConninfoParseError("postgresql://w@db:5432/fabtrack?sslmode=require"), std::nullopt);
  EXPECT_EQ(ConninfoParseError(""), std::nullopt);
  std::optional<std::string> why = ConninfoParseError("hostt=/run/x dbname=fabtrack");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("invalid connection option \"hostt\""), std::string::npos) << *why;
  why = ConninfoParseError("host=db passwrd=hunter2");
  ASSERT_TRUE(why);
  EXPECT_EQ(why->find("hunter2"), std::string::npos) << *why;
  EXPECT_TRUE(ConninfoParseError("host=db dbname"));
  EXPECT_TRUE(ConninfoParseError("postgresql://db/fabtrack?hostt=x"));
}

}  // namespace
}  // namespace fabtrack::store
