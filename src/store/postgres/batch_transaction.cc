#include "store/postgres/batch_transaction.h"

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pg/connection.h"
#include "store/postgres/batch_plan.h"
#include "store/postgres/statements.h"

namespace leasehold::postgres {
namespace {

std::string Trimmed(const char* message) {
  std::string out = message != nullptr ? message : "";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Sends statements in pipeline mode and reads their results in order,
// keeping the first failure.
class Pipeline {
 public:
  explicit Pipeline(PGconn* conn) : conn_(conn) {}

  bool Enter() {
    if (PQenterPipelineMode(conn_) == 1) return true;
    FailHere("pipeline mode");
    return false;
  }

  void Send(const BoundStatement& s) {
    if (PQsendQueryPrepared(conn_, s.name, s.params.count(), s.params.values(),
                            s.params.lengths(), s.params.formats(), 0) != 1) {
      return FailHere(s.name);
    }
    ++pending_;
    if (pending_ >= kPipelineChunk) {
      // Let the server send what it has, and read it before sending more.
      if (PQsendFlushRequest(conn_) != 1 || PQflush(conn_) != 0) {
        return FailHere("flush");
      }
      ReadPending();
    }
  }

  // Ends the pipeline (Sync), reads every result and leaves pipeline mode.
  Status Finish() {
    if (PQpipelineSync(conn_) != 1) {
      FailHere("sync");
      return failure_;
    }
    ReadPending();
    if (lost()) {
      FailHere("connection");
      return failure_;
    }
    pg::PgResult sync(PQgetResult(conn_));
    if (PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC) FailHere("sync");
    if (!lost() && PQexitPipelineMode(conn_) != 1) FailHere("pipeline mode");
    return failure_;
  }

  bool failed() const { return !failure_.ok(); }
  bool lost() const { return PQstatus(conn_) != CONNECTION_OK; }

 private:
  // Each statement's results end with a null result.
  void ReadPending() {
    for (; pending_ > 0 && !lost(); --pending_) {
      pg::PgResult r(PQgetResult(conn_));
      if (r == nullptr) return FailHere("result");
      const ExecStatusType st = PQresultStatus(r.get());
      if (st == PGRES_FATAL_ERROR) {
        FailFromServer(r.get());
      } else if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK &&
                 st != PGRES_PIPELINE_ABORTED) {
        FailHere("result");
      }
      pg::PgResult end(PQgetResult(conn_));
      if (end != nullptr) FailHere("result");
    }
  }

  // An error the server sent: a statement it refused (severity ERROR: the
  // transaction is aborted, the connection stays), or the end of the
  // connection (FATAL or PANIC: shutdown, pg_terminate_backend).
  void FailFromServer(const PGresult* r) {
    const char* severity = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
    const bool refused =
        !lost() && severity != nullptr && std::string_view(severity) == "ERROR";
    Fail(Status(StatusCode::kUnavailable,
                (refused ? "PostgreSQL refused the batch (rolled back): "
                         : "PostgreSQL ended the connection: ") +
                    Trimmed(PQresultErrorMessage(r))));
  }

  // A failure libpq saw: its connection's message says why.
  void FailHere(const char* what) { Fail(pg::Failure(conn_, what)); }

  void Fail(Status st) {
    if (!failed()) failure_ = std::move(st);  // the first is the cause
  }

  PGconn* conn_;
  int pending_ = 0;
  Status failure_;
};

}  // namespace

Status PrepareFence(PGconn* conn, const std::string& sql) {
  const pg::Statement fence{kFenceStatement, sql.c_str(), 1};
  return pg::Prepare(conn, std::span(&fence, 1));
}

Status CheckFence(PGconn* conn, std::uint64_t epoch) {
  return WriteBatch(conn, {}, epoch);
}

Status WriteBatch(PGconn* conn, const JournalBatch& batch,
                  std::uint64_t fence_epoch) {
  const BatchPlan plan = PlanBatch(batch);
  const std::vector<BoundStatement> statements = BindPlan(plan);
  Pipeline pipeline(conn);
  if (!pipeline.Enter()) return pg::Failure(conn, "pipeline mode");
  // No BEGIN or COMMIT: what a pipeline sends before its Sync is one
  // transaction, committed at the Sync, or rolled back whole when a
  // statement fails (the server then skips the rest up to the Sync).
  if (fence_epoch != 0) {
    BoundStatement fence{kFenceStatement, {}};
    fence.params.Uint(fence_epoch);
    pipeline.Send(fence);
  }
  for (const BoundStatement& s : statements) {
    if (pipeline.failed()) break;
    pipeline.Send(s);
  }
  Status st = pipeline.Finish();
  if (st.ok()) return st;
  if (pipeline.lost()) {
    return Status(StatusCode::kUnavailable,
                  "PostgreSQL connection lost during a batch (whether it "
                  "was committed is unknown): " +
                      st.message());
  }
  // The server skipped the rest up to the Sync, which ended the transaction;
  // leave nothing open behind should it not have.
  if (PQpipelineStatus(conn) != PQ_PIPELINE_OFF) {
    (void)PQexitPipelineMode(conn);
  }
  if (PQtransactionStatus(conn) != PQTRANS_IDLE) {
    (void)pg::Exec(conn, "ROLLBACK");
  }
  return st;
}

}  // namespace leasehold::postgres
