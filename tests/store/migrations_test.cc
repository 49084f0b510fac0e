#include "store/migrations.h"

#include <gtest/gtest.h>

#include "tests/support/test_database.h"

namespace fabtrack::store {
namespace {

using fabtrack::testing::TestDatabase;

TEST(MigrationsTest, AppliesAllOnceAndSecondRunChangesNothing) {
  TestDatabase db(/*migrate=*/false);
  EXPECT_EQ(SchemaVersion(db.connection()), 0);
  MigrateResult first = Migrate(db.connection());
  EXPECT_EQ(first.from_version, 0);
  EXPECT_EQ(first.to_version, EmbeddedMigrations().back().version);
  EXPECT_EQ(first.applied.size(), EmbeddedMigrations().size());
  EXPECT_EQ(first.applied.front(), "001_initial");

  std::string tables_before = db.Scalar(
      "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE "
      "schemaname='public'");
  MigrateResult second = Migrate(db.connection());
  EXPECT_TRUE(second.applied.empty());
  EXPECT_EQ(second.from_version, second.to_version);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM fabtrack_schema_migrations"),
            std::to_string(EmbeddedMigrations().size()));
  EXPECT_EQ(tables_before, db.Scalar("SELECT string_agg(tablename, ',' ORDER BY tablename) FROM "
                                     "pg_tables WHERE schemaname='public'"));
  EXPECT_NE(tables_before.find("runs"), std::string::npos);
  EXPECT_NE(tables_before.find("port_counter_samples"), std::string::npos);
}

TEST(MigrationsTest, NewerSchemaIsRefusedWithClearMessage) {
  TestDatabase db;
  {
    pqxx::work txn(db.connection());
    txn.exec0(
        "INSERT INTO fabtrack_schema_migrations (version, name, checksum) "
        "VALUES (999, 'from_the_future', 'x')");
    txn.commit();
  }
  try {
    Migrate(db.connection());
    FAIL() << "expected SchemaMismatch";
  } catch (const SchemaMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("version 999"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("upgrade fabtrack"), std::string::npos) << e.what();
  }
  EXPECT_THROW(RequireCurrentSchema(db.connection()), SchemaMismatch);
}

TEST(MigrationsTest, OldSchemaTellsToMigrate) {
  TestDatabase db(/*migrate=*/false);
  try {
    RequireCurrentSchema(db.connection());
    FAIL() << "expected SchemaMismatch";
  } catch (const SchemaMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("fabtrack db migrate"), std::string::npos) << e.what();
  }
  Migrate(db.connection());
  EXPECT_NO_THROW(RequireCurrentSchema(db.connection()));
}

TEST(MigrationsTest, EditedMigrationIsDetected) {
  TestDatabase db;
  {
    pqxx::work txn(db.connection());
    txn.exec0("UPDATE fabtrack_schema_migrations SET checksum = repeat('0', 64) WHERE version = 1");
    txn.commit();
  }
  EXPECT_THROW(Migrate(db.connection()), SchemaMismatch);
}

TEST(MigrationsTest, FailingMigrationRollsBackAndIsNotRecorded) {
  TestDatabase db(/*migrate=*/false);
  std::vector<Migration> migrations = EmbeddedMigrations();
  migrations.push_back({migrations.back().version + 1, "broken",
                        "CREATE TABLE half_done (x int); SELECT no_such_function();"});
  EXPECT_ANY_THROW(Migrate(db.connection(), migrations));
  EXPECT_EQ(SchemaVersion(db.connection()), EmbeddedMigrations().back().version);
  EXPECT_EQ(db.Scalar("SELECT to_regclass('half_done') IS NULL"), "t");
}

TEST(MigrationsTest, CounterSamplesArePartitionedByMonth) {
  TestDatabase db;
  EXPECT_EQ(db.Scalar("SELECT count(*) >= 3 FROM pg_inherits WHERE inhparent = "
                      "'port_counter_samples'::regclass"),
            "t");
  EXPECT_EQ(db.Scalar("SELECT fabtrack_ensure_counter_partitions('2030-01-01', '2030-03-01')"),
            "3");
  EXPECT_EQ(db.Scalar("SELECT fabtrack_ensure_counter_partitions('2030-01-01', '2030-03-01')"),
            "0");
}

TEST(MigrationsTest, PartitionsOnDemandNeverFailAWrite) {
  TestDatabase db;
  {
    pqxx::work txn(db.connection());
    txn.exec0("INSERT INTO clusters (name) VALUES ('c')");
    txn.exec0("INSERT INTO ports (cluster, host, device, port) VALUES ('c', 'h', 'mlx5_0', 1)");
    // A row for a month without its partition lands in the default one...
    txn.exec0(
        "INSERT INTO port_counter_samples (port_id, sampled_at) "
        "SELECT id, '2031-05-10' FROM ports");
    txn.commit();
  }
  // ...and asking for that month later keeps using the default instead of failing.
  EXPECT_EQ(db.Scalar("SELECT fabtrack_ensure_counter_partitions('2031-05-01', '2031-06-01')"),
            "1");  // June only
  EXPECT_EQ(db.Scalar("SELECT to_regclass('port_counter_samples_203105') IS NULL"), "t");
  EXPECT_EQ(db.Scalar("SELECT to_regclass('port_counter_samples_203106') IS NOT NULL"), "t");
}

}  // namespace
}  // namespace fabtrack::store
