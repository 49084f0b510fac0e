// Drives the embedded server itself: init, start, connect, stop, restart.
#include "store/embedded_postgres.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <pqxx/pqxx>

namespace fabtrack::store {
namespace {

EmbeddedOptions OptionsIn(const std::string& root) {
  EmbeddedOptions o =
      DefaultEmbeddedOptions([](const char* name) -> const char* { return std::getenv(name); });
  o.root = root;
  return o;
}

TEST(EmbeddedPostgresTest, InitStartConnectStopRestart) {
  std::string root = "/tmp/fabtrack-embedded-test-" + std::to_string(getpid());
  std::filesystem::remove_all(root);
  EmbeddedPostgres server(OptionsIn(root));
  EXPECT_FALSE(server.Initialized());
  EXPECT_FALSE(server.Running());

  EmbeddedPostgres::StartResult first = server.Start();
  EXPECT_TRUE(first.initialized);
  EXPECT_TRUE(first.started);
  EXPECT_TRUE(server.Running());
  {
    pqxx::connection c(server.ConnInfo());
    pqxx::nontransaction txn(c);
    EXPECT_EQ(txn.exec1("SELECT current_database()")[0].as<std::string>(), "fabtrack");
    // No TCP listener: unix socket only.
    EXPECT_EQ(txn.exec1("SHOW listen_addresses")[0].as<std::string>(), "");
  }
  // The socket directory is private to the server's owner.
  auto perms = std::filesystem::status(server.SocketDir()).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::others_all, std::filesystem::perms::none);

  EmbeddedPostgres::StartResult again = server.Start();
  EXPECT_FALSE(again.initialized);
  EXPECT_FALSE(again.started);

  EXPECT_TRUE(server.Stop());
  EXPECT_FALSE(server.Running());
  EXPECT_FALSE(server.Stop());

  EmbeddedPostgres::StartResult restart = server.Start();
  EXPECT_FALSE(restart.initialized);
  EXPECT_TRUE(restart.started);
  EXPECT_TRUE(server.Stop());
  std::filesystem::remove_all(root);
}

TEST(EmbeddedPostgresTest, LongPathsGetAShortSocketDirectory) {
  std::string root = "/tmp/" + std::string(120, 'x');
  EmbeddedPostgres server(OptionsIn(root));
  EXPECT_LT(server.SocketDir().size(), 100u);
  EXPECT_EQ(server.SocketDir().rfind("/tmp/fabtrack-", 0), 0u);
  // Deterministic: another process computes the same socket.
  EXPECT_EQ(EmbeddedPostgres(OptionsIn(root)).SocketDir(), server.SocketDir());
}

TEST(EmbeddedPostgresTest, MissingBinariesGiveAClearError) {
  EmbeddedOptions o = OptionsIn("/tmp/fabtrack-embedded-nobin-" + std::to_string(getpid()));
  o.bin_dir = "/nonexistent/bin";
  EmbeddedPostgres server(o);
  try {
    server.Start();
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("FABTRACK_PG_BINDIR"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(o.root);
}

}  // namespace
}  // namespace fabtrack::store
