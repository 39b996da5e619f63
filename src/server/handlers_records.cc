// Records and checkouts (docs/api.md, "Records and checkouts").
#include "common/token.h"
#include "server/handlers.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

constexpr milliseconds kDefaultCheckoutTtl{300'000};

json::value NameOrNull(const std::string& s) {
  return s.empty() ? json::value(nullptr) : json::value(s);
}

json::object RecordJson(const RecordView& v, bool with_body) {
  json::object o{{wire::kKey, v.key},
                 {wire::kVersion, v.version},
                 {wire::kLockedBy, NameOrNull(v.locked_by)},
                 {wire::kLockExpiresAt, TimeJson(v.lock_expires_at)},
                 {wire::kState, LeaseStateName(v.state)},
                 {wire::kFence, v.fence},
                 {wire::kWriteFence, v.write_fence},
                 {wire::kHasRecord, v.has_record}};
  if (with_body) o[wire::kBody] = v.has_record ? json::value(v.body) : nullptr;
  return o;
}

// The owner/token pair that proves a lease; both optional, one required.
struct Proof {
  std::string owner;
  std::string token;
  LeaseProof view() const { return {owner, token}; }
};

Result<Proof> ProofFrom(const Fields& f) {
  Proof p;
  auto owner = f.OptionalString(wire::kOwner);
  if (!owner) return std::unexpected(owner.error());
  auto token = f.OptionalString(wire::kToken);
  if (!token) return std::unexpected(token.error());
  p.owner = owner->value_or("");
  p.token = token->value_or("");
  return p;
}

// A fenced write's "fence" (docs/api.md, "Fenced writes"); 0 when absent.
Result<Fence> WriteFence(const Fields& f) {
  auto fence = f.OptionalInt(wire::kFence);
  if (!fence) return std::unexpected(fence.error());
  if (!*fence) return Fence{0};
  if (**fence < 1) {
    return Error(StatusCode::kBadRequest,
                 "fence must be 1 or more: the fence of a lock or semaphore "
                 "grant you hold");
  }
  return static_cast<Fence>(**fence);
}

// 200 when done; 412 for a version mismatch; 423 for the other refusals.
ApiResponse WriteResponse(const Result<WriteOutcome>& r,
                          std::string_view done_field, bool with_version) {
  if (!r) return ErrorResponse(r.error());
  AnswerText o;
  o.Bool(done_field, r->done);
  if (r->done) {
    if (with_version) o.Uint(wire::kVersion, r->version);
    return JsonResponse(200, std::move(o));
  }
  const unsigned status =
      r->reason == RefusalReason::kVersionMismatch ? 412 : 423;
  return JsonResponse(
      status, std::move(o.String(wire::kReason, RefusalReasonName(r->reason))));
}

// The transaction a write is staged in: the body's "session", when present
// and not null. Without it the write is applied at once.
Result<std::optional<SessionId>> StagingSession(const Fields& f) {
  auto raw = f.Raw(wire::kSession);
  if (!raw || raw->is_null()) return std::nullopt;
  auto id = SessionField(f);
  if (!id) return std::unexpected(id.error());
  return std::optional<SessionId>(*id);
}

// A staged write: 202 {"staged":true,"staged_writes":n}, nothing applied
// yet (so no version). A refusal answers as the direct write would.
ApiResponse StagedResponse(const Result<StageOutcome>& r,
                           std::string_view done_field) {
  if (!r) return ErrorResponse(r.error());
  if (r->staged) {
    return JsonResponse(202,
                        json::object{{wire::kStaged, true},
                                     {wire::kStagedWrites, r->staged_writes}});
  }
  return JsonResponse(
      423, json::object{{done_field, false},
                        {wire::kReason, RefusalReasonName(r->reason)},
                        {wire::kStaged, false}});
}

}  // namespace

void InsertRecord(Call& c, const std::string& ns, const std::string& key) {
  const Fields f(c.body);
  auto body = f.RequiredString(wire::kBody);
  if (!body) return c.Fail(body.error());
  auto fence = WriteFence(f);
  if (!fence) return c.Fail(fence.error());
  auto session = StagingSession(f);
  if (!session) return c.Fail(session.error());
  if (*session) {
    return c.Run<Result<StageOutcome>>(
        [id = **session, ns, key, b = std::move(*body), w = *fence](Engine& e,
                                                                    Time now) {
          return e.StageInsert(now, id, {ns, key}, b, w);
        },
        [](Result<StageOutcome>& r) {
          return StagedResponse(r, wire::kInserted);
        });
  }
  c.Run<Result<std::uint64_t>>(
      [ns, key, b = std::move(*body), w = *fence](Engine& e, Time now) {
        return e.InsertRecord(now, {ns, key}, b, w);
      },
      [](Result<std::uint64_t>& r) {
        return r ? JsonResponse(201, json::object{{wire::kVersion, *r}})
                 : ErrorResponse(r.error());
      });
}

void GetRecord(Call& c, const std::string& ns, const std::string& key) {
  c.Run<Result<RecordView>>(
      [ns, key](Engine& e, Time now) {
        return e.GetRecord(now, {ns, key});
      },
      [](Result<RecordView>& r) {
        return r ? JsonResponse(200, RecordJson(*r, true))
                 : ErrorResponse(r.error());
      });
}

void ListRecords(Call& c, const std::string& ns) {
  std::optional<LeaseState> state;
  if (const std::string s = c.Query(wire::kState); s == "locked") {
    state = LeaseState::kLocked;
  } else if (s == "free") {
    state = LeaseState::kFree;
  } else if (!s.empty()) {
    return c.Fail(
        Status(StatusCode::kBadRequest, "state must be locked or free"));
  }
  std::size_t limit = 100;
  if (const std::string l = c.Query(wire::kLimit); !l.empty()) {
    char* end = nullptr;
    const long long v = std::strtoll(l.c_str(), &end, 10);
    if (end != l.c_str() + l.size() || v < 1 || v > 1000) {
      return c.Fail(
          Status(StatusCode::kBadRequest, "limit must be between 1 and 1000"));
    }
    limit = static_cast<std::size_t>(v);
  }
  c.Run<Result<RecordPage>>(
      [ns, state, limit, prefix = c.Query(wire::kPrefix),
       after = c.Query(wire::kAfter)](Engine& e, Time now) {
        return e.ListRecords(now, {ns, state, prefix, after, limit});
      },
      [](Result<RecordPage>& r) {
        if (!r) return ErrorResponse(r.error());
        json::array records;
        for (const auto& v : r->records)
          records.push_back(RecordJson(v, false));
        return JsonResponse(
            200, json::object{{wire::kRecords, records},
                              {wire::kNext, r->next ? json::value(*r->next)
                                                    : json::value(nullptr)}});
      });
}

void Checkout(Call& c, const std::string& ns, const std::string& key) {
  const Fields f(c.body);
  auto owner = f.RequiredString(wire::kOwner);
  if (!owner) return c.Fail(owner.error());
  auto ttl = f.OptionalInt(wire::kTtlMs);
  if (!ttl) return c.Fail(ttl.error());
  auto token = f.OptionalString(wire::kToken);
  if (!token) return c.Fail(token.error());
  const milliseconds ttl_ms =
      ttl->has_value() ? milliseconds(**ttl) : kDefaultCheckoutTtl;
  if (ttl_ms.count() <= 0 || ttl_ms > c.options.max_checkout_ttl) {
    return c.Fail(
        Status(StatusCode::kBadRequest,
               "ttl_ms must be between 1 and " +
                   std::to_string(c.options.max_checkout_ttl.count())));
  }
  const bool client_token = token->has_value();
  std::string tok = client_token ? std::move(**token) : NewLeaseToken();
  c.Run<Result<CheckoutOutcome>>(
      [ns, key, o = std::move(*owner), ttl_ms, tok, client_token](Engine& e,
                                                                  Time now) {
        return e.Checkout(now, {{ns, key}, o, ttl_ms, tok, client_token});
      },
      [](Result<CheckoutOutcome>& r) {
        if (!r) return ErrorResponse(r.error());
        AnswerText o;
        o.Bool(wire::kGranted, r->granted);
        if (!r->granted) {
          o.String(wire::kLockedBy, r->locked_by)
              .Instant(wire::kLockExpiresAt, r->lock_expires_at);
          return JsonResponse(423, std::move(o));
        }
        o.Bool(wire::kRenewed, r->renewed)
            .String(wire::kToken, r->token)
            .Uint(wire::kFence, r->fence)
            .String(wire::kLockedBy, r->locked_by)
            .Instant(wire::kExpiresAt, r->lock_expires_at);
        return JsonResponse(200, std::move(o));
      });
}

void SaveRecord(Call& c, const std::string& ns, const std::string& key) {
  const Fields f(c.body);
  auto proof = ProofFrom(f);
  if (!proof) return c.Fail(proof.error());
  auto body = f.RequiredString(wire::kBody);
  if (!body) return c.Fail(body.error());
  auto if_version = f.OptionalInt(wire::kIfVersion);
  if (!if_version) return c.Fail(if_version.error());
  std::optional<std::uint64_t> expected;
  if (*if_version) expected = static_cast<std::uint64_t>(**if_version);
  auto fence = WriteFence(f);
  if (!fence) return c.Fail(fence.error());
  auto session = StagingSession(f);
  if (!session) return c.Fail(session.error());
  if (*session) {
    return c.Run<Result<StageOutcome>>(
        [id = **session, ns, key, p = *proof, b = std::move(*body), expected,
         w = *fence](Engine& e, Time now) {
          return e.StageSave(now, id, {ns, key}, p.view(), b, expected, w);
        },
        [](Result<StageOutcome>& r) {
          return StagedResponse(r, wire::kSaved);
        });
  }
  c.Run<Result<WriteOutcome>>(
      [ns, key, p = *proof, b = std::move(*body), expected, w = *fence](
          Engine& e, Time now) {
        return e.Save(now, {ns, key}, p.view(), b, expected, w);
      },
      [](Result<WriteOutcome>& r) {
        return WriteResponse(r, wire::kSaved, true);
      });
}

void Checkin(Call& c, const std::string& ns, const std::string& key) {
  auto proof = ProofFrom(Fields(c.body));
  if (!proof) return c.Fail(proof.error());
  c.Run<Result<WriteOutcome>>(
      [ns, key, p = *proof](Engine& e, Time now) {
        return e.Checkin(now, {ns, key}, p.view());
      },
      [](Result<WriteOutcome>& r) {
        return WriteResponse(r, wire::kReleased, false);
      });
}

void DeleteRecord(Call& c, const std::string& ns, const std::string& key) {
  const Fields f(c.body);
  auto proof = ProofFrom(f);
  if (!proof) return c.Fail(proof.error());
  auto fence = WriteFence(f);
  if (!fence) return c.Fail(fence.error());
  auto session = StagingSession(f);
  if (!session) return c.Fail(session.error());
  if (*session) {
    return c.Run<Result<StageOutcome>>(
        [id = **session, ns, key, p = *proof, w = *fence](Engine& e, Time now) {
          return e.StageDelete(now, id, {ns, key}, p.view(), w);
        },
        [](Result<StageOutcome>& r) {
          return StagedResponse(r, wire::kDeleted);
        });
  }
  c.Run<Result<WriteOutcome>>(
      [ns, key, p = *proof, w = *fence](Engine& e, Time now) {
        return e.DeleteRecord(now, {ns, key}, p.view(), w);
      },
      [](Result<WriteOutcome>& r) {
        return WriteResponse(r, wire::kDeleted, false);
      });
}

void Purge(Call& c, const std::string& ns) {
  auto older = Fields(c.body).OptionalInt(wire::kOlderThanMs);
  if (!older) return c.Fail(older.error());
  c.Run<Result<std::size_t>>(
      [ns, ms = milliseconds(older->value_or(0))](Engine& e, Time now) {
        return e.PurgeExpired(now, ns, ms);
      },
      [](Result<std::size_t>& r) {
        return r ? JsonResponse(200, json::object{{wire::kPurged, *r}})
                 : ErrorResponse(r.error());
      });
}

void BreakCheckout(Call& c, const std::string& ns, const std::string& key) {
  c.Run<Result<bool>>(
      [ns, key](Engine& e, Time now) {
        return e.BreakCheckout(now, {ns, key});
      },
      [](Result<bool>& r) {
        return r ? JsonResponse(200, json::object{{wire::kBroken, *r}})
                 : ErrorResponse(r.error());
      });
}

}  // namespace leasehold::server
