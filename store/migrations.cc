#include "store/migrations.h"

#include <pqxx/pqxx>

#include "core/content_hash.h"

namespace fabtrack::store {
namespace {

// Arbitrary constant shared by every fabtrack binary: the advisory lock key.
constexpr long long kMigrationLockKey = 0x66616274726b;  // "fabtrk"

void EnsureLedger(pqxx::connection_base& connection) {
  pqxx::work txn(connection);
  txn.exec0(
      "CREATE TABLE IF NOT EXISTS fabtrack_schema_migrations ("
      "  version integer PRIMARY KEY,"
      "  name text NOT NULL,"
      "  checksum text NOT NULL,"
      "  applied_at timestamptz NOT NULL DEFAULT now())");
  txn.commit();
}

int LatestKnown(const std::vector<Migration>& migrations) {
  return migrations.empty() ? 0 : migrations.back().version;
}

std::string Label(const Migration& m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%03d_", m.version);
  return buf + std::string(m.name);
}

}  // namespace

int SchemaVersion(pqxx::connection_base& connection) {
  pqxx::nontransaction txn(connection);
  auto exists = txn.exec1("SELECT to_regclass('fabtrack_schema_migrations') IS NOT NULL");
  if (!exists[0].as<bool>()) return 0;
  auto row = txn.exec1("SELECT coalesce(max(version), 0) FROM fabtrack_schema_migrations");
  return row[0].as<int>();
}

MigrateResult Migrate(pqxx::connection_base& connection, const std::vector<Migration>& migrations) {
  EnsureLedger(connection);
  MigrateResult result;
  // Session-level lock held across the per-migration transactions.
  {
    pqxx::nontransaction lock(connection);
    lock.exec_params("SELECT pg_advisory_lock($1)", kMigrationLockKey);
  }
  struct Unlock {
    pqxx::connection_base& c;
    ~Unlock() {
      try {
        pqxx::nontransaction txn(c);
        txn.exec_params("SELECT pg_advisory_unlock($1)", kMigrationLockKey);
      } catch (...) {
        // The lock dies with the session anyway.
      }
    }
  } unlock{connection};

  std::map<int, std::string> applied;
  {
    pqxx::nontransaction txn(connection);
    for (const auto& row : txn.exec("SELECT version, checksum FROM fabtrack_schema_migrations")) {
      applied[row[0].as<int>()] = row[1].as<std::string>();
    }
  }
  result.from_version = applied.empty() ? 0 : applied.rbegin()->first;
  if (result.from_version > LatestKnown(migrations)) {
    throw SchemaMismatch("database schema is at version " + std::to_string(result.from_version) +
                         " but this fabtrack knows versions up to " +
                         std::to_string(LatestKnown(migrations)) +
                         "; upgrade fabtrack before using this database");
  }
  for (const Migration& m : migrations) {
    std::string checksum = Sha256Hex(m.sql);
    auto it = applied.find(m.version);
    if (it != applied.end()) {
      if (it->second != checksum) {
        throw SchemaMismatch("migration " + Label(m) +
                             " was applied with different contents (checksum " +
                             it->second.substr(0, 12) + " vs " + checksum.substr(0, 12) +
                             "); migrations are append-only, add a new one instead");
      }
      continue;
    }
    pqxx::work txn(connection);
    txn.exec0(m.sql);
    txn.exec_params0(
        "INSERT INTO fabtrack_schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
        m.version, std::string(m.name), checksum);
    txn.commit();
    result.applied.push_back(Label(m));
  }
  result.to_version = LatestKnown(migrations);
  return result;
}

void RequireCurrentSchema(pqxx::connection_base& connection,
                          const std::vector<Migration>& migrations) {
  int have = SchemaVersion(connection);
  int want = LatestKnown(migrations);
  if (have > want) {
    throw SchemaMismatch("database schema is at version " + std::to_string(have) +
                         " but this fabtrack knows versions up to " + std::to_string(want) +
                         "; upgrade fabtrack before using this database");
  }
  if (have < want) {
    throw SchemaMismatch("database schema is at version " + std::to_string(have) +
                         ", this fabtrack needs " + std::to_string(want) +
                         "; run `fabtrack db migrate` (as the schema owner) first");
  }
}

}  // namespace fabtrack::store
