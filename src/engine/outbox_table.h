// OutboxTable: outbox messages per (namespace, topic), deduplicated by key,
// delivered to consumers under claims with a lease (the checkout's lease
// rules), acknowledged with the claim token; a message claimed
// outbox_max_attempts times whose last claim ran out is a dead letter.
// States other than acknowledged are computed at read time from the
// attempts and the claim's expiry, like a lease's state: nothing is written
// when a claim runs out. See docs/outbox.md. Internal to the engine;
// single-threaded.
#ifndef LEASEHOLD_ENGINE_OUTBOX_TABLE_H_
#define LEASEHOLD_ENGINE_OUTBOX_TABLE_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/engine_types.h"
#include "engine/events.h"
#include "engine/journal.h"
#include "engine/outbox.h"
#include "engine/staged_writes.h"

namespace leasehold::engine {

class OutboxTable {
 public:
  OutboxTable(std::size_t max_payload_bytes, JournalBatch* journal,
              EventSink* events)
      : max_payload_bytes_(max_payload_bytes),
        journal_(journal),
        events_(events) {}

  void SetMaxAttempts(std::string_view ns, std::uint32_t max_attempts);

  // Names and payload size of an enqueue. Changes nothing.
  Status Validate(const EnqueueRequest& request) const;
  // The id of the committed message with this key, if any.
  std::optional<MessageId> FindKey(std::string_view ns, std::string_view topic,
                                   std::string_view key) const;
  // A new id, above every id handed out or restored. Ids of staged messages
  // that are rolled back are never used: ids increase, they are not dense.
  MessageId ReserveId() { return ++last_id_; }
  // Adds a validated message whose key is new, with an id from ReserveId.
  void Add(Time now, const EnqueueRequest& request, MessageId id);

  // Applies a staged message: added, or skipped as a duplicate when its key
  // was committed after it was staged. Never fails.
  AppliedWrite ApplyStaged(Time now, const StagedEnqueue& w);

  Result<std::vector<ClaimedMessage>> Claim(Time now,
                                            const ClaimRequest& request);
  Result<AckOutcome> Ack(Time now, std::string_view ns, std::string_view topic,
                         MessageId id, std::string_view claim_token);
  Result<OutboxSummary> Summary(Time now, std::string_view ns,
                                std::string_view topic) const;

  Status Restore(MessageRow&& row);

  // Adds each namespace's topic names to `out`. In namespace_listing.cc.
  void ListTopics(std::map<std::string, NamespaceInfo, std::less<>>& out) const;

 private:
  struct Message {
    std::string key;
    std::string payload;
    Time enqueued_at;
    std::uint32_t attempts = 0;
    bool acked = false;
    std::string consumer;
    std::string token;
    std::optional<Time> lease;
  };
  struct Topic {
    std::map<MessageId, Message> messages;  // acknowledged ones included
    std::set<MessageId> open;               // not acknowledged
    std::map<std::string, MessageId, std::less<>> by_key;
  };
  using TopicMap = std::map<std::string, Topic, std::less<>>;

  const Topic* FindTopic(std::string_view ns, std::string_view topic) const;
  Topic& FindOrCreateTopic(std::string_view ns, std::string_view topic,
                           const std::string** ns_name,
                           const std::string** topic_name);
  std::uint32_t MaxAttempts(std::string_view ns) const;
  MessageState StateOf(const Message& m, Time now,
                       std::uint32_t max_attempts) const;
  MessageView View(MessageId id, const Message& m, Time now,
                   std::uint32_t max_attempts) const;
  void Journal(const std::string& ns, const std::string& topic, MessageId id,
               const Message& m);
  void Emit(EventType type, Time now, const std::string& ns,
            const std::string& topic, MessageId id, const Message& m);
  static Status ValidateTopic(std::string_view ns, std::string_view topic);

  std::size_t max_payload_bytes_;
  JournalBatch* journal_;
  EventSink* events_;
  std::map<std::string, TopicMap, std::less<>> namespaces_;
  std::map<std::string, std::uint32_t, std::less<>> max_attempts_;
  MessageId last_id_ = 0;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_OUTBOX_TABLE_H_
