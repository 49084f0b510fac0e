#include "app/batch_store.h"

#include <optional>
#include <pqxx/pqxx>

#include "app/database_access.h"
#include "core/exit_code.h"
#include "core/interrupt.h"
#include "store/spool_replay.h"

namespace fabtrack::app {

struct BatchStore::Connection {
  std::unique_ptr<pqxx::connection> db;
};

BatchStore::BatchStore(DatabaseChoice choice, std::ostream& err)
    : choice_(std::move(choice)), err_(err), connection_(std::make_unique<Connection>()) {
  Reconnect();
}

BatchStore::~BatchStore() = default;

bool BatchStore::connected() const { return connection_->db != nullptr; }

void BatchStore::ExitIfMisconfigured() const {
  if (connected()) return;
  if (std::optional<std::string> cause = MisconfigurationSeen()) {
    err_ << "fabtrack: " << *cause << "\n";
    throw CommandExit{kExitDatabaseError};
  }
}

void BatchStore::Reconnect() {
  if (connection_->db) return;
  connection_->db = OpenDatabaseOrSpool(choice_, SchemaPolicy::kRequireCurrent, err_);
}

StoreOutcome BatchStore::Store(std::vector<store::SpoolBatch> batches,
                               const std::function<void()>& before_commit) {
  StoreOutcome outcome;
  // A write that fails: spool (outage, or this role may not write) or
  // refuse (the data itself). The connection is dropped either way.
  auto failed = [&](const std::exception& e) {
    connection_->db.reset();
    if (!ShouldSpoolAfter(e)) throw BatchRefused(e.what());
    outcome.failure = e.what();
    outcome.applied.clear();
  };
  if (connection_->db) {
    std::optional<pqxx::work> txn;
    try {
      txn.emplace(*connection_->db);
      for (const store::SpoolBatch& batch : batches) {
        outcome.applied.push_back(store::ApplyBatch(*txn, batch));
      }
    } catch (const Interrupted&) {
      throw;  // the writers stop between rows on Ctrl-C: rolled back, the caller's
    } catch (const std::exception& e) {
      txn.reset();
      failed(e);
    }
    if (txn) {
      // Outside the handlers above: what the hook throws (an interrupt) is
      // the caller's, and leaving this scope rolls the transaction back.
      if (before_commit) before_commit();
      try {
        txn->commit();
        outcome.stored = true;
        return outcome;
      } catch (const std::exception& e) {
        txn.reset();
        failed(e);
      }
    }
  }
  for (store::SpoolBatch& batch : batches) {
    SpoolOrExit(std::move(batch), choice_, err_);
    ++spooled_;
  }
  return outcome;
}

bool BatchStore::Read(const std::function<void(pqxx::transaction_base&)>& read) {
  if (!connection_->db) return false;
  try {
    LimitReadTime(*connection_->db);
    pqxx::work txn(*connection_->db);
    read(txn);
    return true;
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    connection_->db.reset();
    if (!ShouldSpoolAfter(e)) throw;
    return false;
  }
}

void BatchStore::Finish() { FinishSpooling(choice_, err_); }

}  // namespace fabtrack::app
