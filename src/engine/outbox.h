// Idempotent operations and the transactional outbox: the vocabulary of the
// durable guarantees beside the locks. The commands are Engine methods
// (engine.h, "Idempotent operations" and "Outbox"); the contract is
// docs/api.md, "Idempotent operations and the outbox"; the rules are in
// docs/outbox.md.
#ifndef LEASEHOLD_ENGINE_OUTBOX_H_
#define LEASEHOLD_ENGINE_OUTBOX_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "engine/lock_types.h"
#include "engine/records.h"

namespace leasehold {

using MessageId = std::uint64_t;  // 0 is never a valid message

struct OperationKey {
  std::string_view ns;
  std::string_view op_id;
};

enum class OperationState : std::uint8_t { kNew, kCompleted };
std::string_view OperationStateName(OperationState state);  // "new", ...

// What BeginOperation found in the committed state.
struct OperationStatus {
  OperationState state = OperationState::kNew;
  std::string outcome;  // JSON text, when completed
  std::optional<Time> completed_at;
};

struct EnqueueRequest {
  std::string_view ns{};
  std::string_view topic{};
  std::string_view key{};      // deduplication key, unique per (ns, topic)
  std::string_view payload{};  // JSON text; the engine does not parse it
  // When set, the message is staged in this session's open transaction.
  std::optional<SessionId> session{};
};

struct EnqueueOutcome {
  MessageId id = 0;
  // The key was enqueued before (committed, or staged earlier in the same
  // transaction): nothing new was enqueued and `id` is that message's.
  bool duplicate = false;
  bool staged = false;            // in a transaction, until commit
  std::size_t staged_writes = 0;  // the transaction's count when staged
};

struct ClaimRequest {
  std::string_view ns{};
  std::string_view topic{};
  std::string_view consumer{};         // 1..255 characters
  std::size_t max = 10;                // 1..1000
  std::chrono::milliseconds lease{0};  // > 0
  // The claim token every message of this batch gets (the server makes a
  // random one per claim). 1..255 characters.
  std::string_view token{};
};

struct ClaimedMessage {
  MessageId id = 0;
  std::string key;
  std::string payload;
  std::uint32_t attempt = 0;  // 1 on the first delivery
  std::string claim_token;
  Time lease_expires_at;
};

struct AckOutcome {
  bool acked = false;
  // The message had been acknowledged already with this same claim token (a
  // retried ack): acked is true and nothing changed.
  bool already = false;
  // When refused: kNotOwner (never claimed, or claimed with another token),
  // kExpired (the claim ran out; the message is free or claimed again).
  RefusalReason reason = RefusalReason::kNone;
};

enum class MessageState : std::uint8_t { kPending, kClaimed, kDead, kAcked };
// "pending", "claimed", "dead", "acked".
std::string_view MessageStateName(MessageState state);

struct MessageView {
  MessageId id = 0;
  std::string key;
  std::string payload;
  std::uint32_t attempts = 0;
  MessageState state = MessageState::kPending;
  Time enqueued_at;
  std::string consumer;  // of the latest claim
  std::optional<Time> lease_expires_at;
};

struct OutboxSummary {
  std::size_t pending = 0;
  std::size_t claimed = 0;
  std::size_t dead = 0;
  std::vector<MessageView> dead_letters;  // in id order
};

}  // namespace leasehold

#endif  // LEASEHOLD_ENGINE_OUTBOX_H_
