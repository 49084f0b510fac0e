// How a collecting command stores what it collected (ingest, sweep, counters
// snapshot and watch): batches go to its database in one transaction when the
// database takes them, else durably into the spool bound to that database,
// replayed by the next command that reaches it. The connection, the spool
// decision and the outage-vs-misconfiguration verdict live here, once.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/database_choice.h"
#include "store/spool.h"

namespace pqxx {
class transaction_base;
}

namespace fabtrack::app {

// The database is up and refused the data itself (a constraint, a value):
// spooling would not help. The caller says what was not stored; exit 3.
class BatchRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StoreOutcome {
  bool stored = false;                       // false: spooled
  std::vector<store::AppliedBatch> applied;  // one per batch, when stored
  std::string failure;                       // spooled after a write failed: why
};

class BatchStore {
 public:
  // Connects to `choice` (replaying what earlier commands spooled for it),
  // or notes why it cannot: the batches are then spooled. Notices go to `err`.
  BatchStore(DatabaseChoice choice, std::ostream& err);
  ~BatchStore();
  BatchStore(const BatchStore&) = delete;
  BatchStore& operator=(const BatchStore&) = delete;

  bool connected() const;
  // For a command that has collected nothing yet: not connected because of
  // a misconfiguration (credentials, database, privileges, schema) says why
  // and throws CommandExit{kExitDatabaseError}, instead of spooling what it
  // would collect. An outage returns: the command goes on and spools.
  void ExitIfMisconfigured() const;
  // Tries again after an outage (a long watch; the spool is replayed first).
  void Reconnect();

  // Stores `batches` in one transaction (all or none), or spools each of
  // them when the database is away or this role may not write. A write that
  // fails drops the connection: later batches go to the spool until
  // Reconnect. `before_commit` runs inside the transaction just before the
  // commit; what it throws rolls the transaction back and propagates.
  // Throws BatchRefused, or CommandExit{kExitDatabaseError} when even the
  // spool cannot take them.
  StoreOutcome Store(std::vector<store::SpoolBatch> batches,
                     const std::function<void()>& before_commit = {});

  int spooled() const { return spooled_; }

  // Runs `read` in a transaction of its own (statements bounded as
  // LimitReadTime says). False when not connected, or when the database went
  // away or refused this role during it: the connection is dropped and the
  // caller goes on without what it would have read. Other failures throw.
  bool Read(const std::function<void(pqxx::transaction_base&)>& read);

  // Ends the command: a misconfiguration exits kExitDatabaseError with the
  // cause and the fix, the data kept; an outage is one warning line.
  void Finish();

 private:
  struct Connection;
  DatabaseChoice choice_;
  std::ostream& err_;
  std::unique_ptr<Connection> connection_;
  int spooled_ = 0;
};

}  // namespace fabtrack::app
