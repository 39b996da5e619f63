#include "engine/outbox_table.h"

#include <algorithm>

namespace leasehold::engine {
namespace {

constexpr std::size_t kMaxClaim = 1000;

Status NotFound(std::string_view topic, MessageId id) {
  return Status(StatusCode::kNotFound, "no message " + std::to_string(id) +
                                           " in topic \"" + std::string(topic) +
                                           "\"");
}

AckOutcome RefusedAck(RefusalReason reason) {
  AckOutcome out;
  out.reason = reason;
  return out;
}

}  // namespace

void OutboxTable::SetMaxAttempts(std::string_view ns,
                                 std::uint32_t max_attempts) {
  max_attempts_.insert_or_assign(std::string(ns),
                                 std::max<std::uint32_t>(max_attempts, 1));
}

std::uint32_t OutboxTable::MaxAttempts(std::string_view ns) const {
  auto it = max_attempts_.find(ns);
  return it == max_attempts_.end() ? kDefaultOutboxMaxAttempts : it->second;
}

Status OutboxTable::ValidateTopic(std::string_view ns, std::string_view topic) {
  if (Status st = ValidateName(ns, "namespace"); !st.ok()) return st;
  return ValidateName(topic, "topic");
}

Status OutboxTable::Validate(const EnqueueRequest& r) const {
  if (Status st = ValidateTopic(r.ns, r.topic); !st.ok()) return st;
  if (Status st = ValidateName(r.key, "key"); !st.ok()) return st;
  if (r.payload.size() > max_payload_bytes_) {
    return Status(StatusCode::kBodyTooLarge,
                  "payload is " + std::to_string(r.payload.size()) +
                      " bytes; the limit is " +
                      std::to_string(max_payload_bytes_));
  }
  return Status::Ok();
}

const OutboxTable::Topic* OutboxTable::FindTopic(std::string_view ns,
                                                 std::string_view topic) const {
  auto space = namespaces_.find(ns);
  if (space == namespaces_.end()) return nullptr;
  auto it = space->second.find(topic);
  return it == space->second.end() ? nullptr : &it->second;
}

OutboxTable::Topic& OutboxTable::FindOrCreateTopic(
    std::string_view ns, std::string_view topic, const std::string** ns_name,
    const std::string** topic_name) {
  auto space = namespaces_.find(ns);
  if (space == namespaces_.end()) {
    space = namespaces_.emplace(std::string(ns), TopicMap{}).first;
  }
  auto it = space->second.find(topic);
  if (it == space->second.end()) {
    it = space->second.emplace(std::string(topic), Topic{}).first;
  }
  *ns_name = &space->first;
  *topic_name = &it->first;
  return it->second;
}

std::optional<MessageId> OutboxTable::FindKey(std::string_view ns,
                                              std::string_view topic,
                                              std::string_view key) const {
  const Topic* t = FindTopic(ns, topic);
  if (t == nullptr) return std::nullopt;
  auto it = t->by_key.find(key);
  if (it == t->by_key.end()) return std::nullopt;
  return it->second;
}

void OutboxTable::Add(Time now, const EnqueueRequest& r, MessageId id) {
  const std::string* ns = nullptr;
  const std::string* topic = nullptr;
  Topic& t = FindOrCreateTopic(r.ns, r.topic, &ns, &topic);
  Message& m = t.messages[id];
  m.key = r.key;
  m.payload = r.payload;
  m.enqueued_at = now;
  t.open.insert(id);
  t.by_key.emplace(m.key, id);
  last_id_ = std::max(last_id_, id);
  Journal(*ns, *topic, id, m);
  Emit(EventType::kOutboxEnqueued, now, *ns, *topic, id, m);
}

AppliedWrite OutboxTable::ApplyStaged(Time now, const StagedEnqueue& w) {
  AppliedWrite out;
  out.kind = StagedWriteKind::kEnqueue;
  out.ns = w.ns;
  out.key = w.key;
  out.topic = w.topic;
  if (auto existing = FindKey(w.ns, w.topic, w.key)) {
    out.message = *existing;
    out.duplicate = true;
    return out;
  }
  EnqueueRequest r;
  r.ns = w.ns;
  r.topic = w.topic;
  r.key = w.key;
  r.payload = w.payload;
  Add(now, r, w.id);
  out.message = w.id;
  return out;
}

MessageState OutboxTable::StateOf(const Message& m, Time now,
                                  std::uint32_t max_attempts) const {
  if (m.acked) return MessageState::kAcked;
  if (m.lease && now < *m.lease) return MessageState::kClaimed;
  if (m.attempts >= max_attempts) return MessageState::kDead;
  return MessageState::kPending;
}

Result<std::vector<ClaimedMessage>> OutboxTable::Claim(Time now,
                                                       const ClaimRequest& r) {
  if (Status st = ValidateTopic(r.ns, r.topic); !st.ok()) {
    return std::unexpected(st);
  }
  if (Status st = ValidateName(r.consumer, "consumer"); !st.ok()) {
    return std::unexpected(st);
  }
  if (Status st = ValidateName(r.token, "claim token"); !st.ok()) {
    return std::unexpected(st);
  }
  if (r.max == 0 || r.max > kMaxClaim) {
    return Error(StatusCode::kBadRequest, "max must be between 1 and 1000");
  }
  if (r.lease.count() <= 0) {
    return Error(StatusCode::kBadRequest, "lease_ms must be greater than 0");
  }
  std::vector<ClaimedMessage> out;
  auto space = namespaces_.find(r.ns);
  if (space == namespaces_.end()) return out;
  auto topic = space->second.find(r.topic);
  if (topic == space->second.end()) return out;
  Topic& t = topic->second;
  const std::uint32_t max_attempts = MaxAttempts(r.ns);
  for (MessageId id : t.open) {
    if (out.size() == r.max) break;
    Message& m = t.messages.at(id);
    if (StateOf(m, now, max_attempts) != MessageState::kPending) continue;
    ++m.attempts;
    m.consumer = r.consumer;
    m.token = r.token;
    m.lease = now + r.lease;
    Journal(space->first, topic->first, id, m);
    Emit(EventType::kOutboxClaimed, now, space->first, topic->first, id, m);
    out.push_back(
        ClaimedMessage{id, m.key, m.payload, m.attempts, m.token, *m.lease});
  }
  return out;
}

Result<AckOutcome> OutboxTable::Ack(Time now, std::string_view ns,
                                    std::string_view topic, MessageId id,
                                    std::string_view claim_token) {
  if (Status st = ValidateTopic(ns, topic); !st.ok()) {
    return std::unexpected(st);
  }
  if (Status st = ValidateName(claim_token, "claim_token"); !st.ok()) {
    return std::unexpected(st);
  }
  auto space = namespaces_.find(ns);
  if (space == namespaces_.end()) return std::unexpected(NotFound(topic, id));
  auto found = space->second.find(topic);
  if (found == space->second.end()) {
    return std::unexpected(NotFound(topic, id));
  }
  Topic& t = found->second;
  auto it = t.messages.find(id);
  if (it == t.messages.end()) return std::unexpected(NotFound(topic, id));
  Message& m = it->second;
  if (!m.lease || m.token != claim_token) {
    return RefusedAck(RefusalReason::kNotOwner);
  }
  AckOutcome out;
  out.acked = true;
  if (m.acked) {
    out.already = true;
    return out;
  }
  if (now >= *m.lease) return RefusedAck(RefusalReason::kExpired);
  m.acked = true;
  m.payload.clear();
  m.payload.shrink_to_fit();
  t.open.erase(id);
  Journal(space->first, found->first, id, m);
  Emit(EventType::kOutboxAcked, now, space->first, found->first, id, m);
  return out;
}

MessageView OutboxTable::View(MessageId id, const Message& m, Time now,
                              std::uint32_t max_attempts) const {
  MessageView v;
  v.id = id;
  v.key = m.key;
  v.payload = m.payload;
  v.attempts = m.attempts;
  v.state = StateOf(m, now, max_attempts);
  v.enqueued_at = m.enqueued_at;
  v.consumer = m.consumer;
  v.lease_expires_at = m.lease;
  return v;
}

Result<OutboxSummary> OutboxTable::Summary(Time now, std::string_view ns,
                                           std::string_view topic) const {
  if (Status st = ValidateTopic(ns, topic); !st.ok()) {
    return std::unexpected(st);
  }
  OutboxSummary out;
  const Topic* t = FindTopic(ns, topic);
  if (t == nullptr) return out;
  const std::uint32_t max_attempts = MaxAttempts(ns);
  for (MessageId id : t->open) {
    const Message& m = t->messages.at(id);
    switch (StateOf(m, now, max_attempts)) {
      case MessageState::kPending:
        ++out.pending;
        break;
      case MessageState::kClaimed:
        ++out.claimed;
        break;
      case MessageState::kDead:
        ++out.dead;
        out.dead_letters.push_back(View(id, m, now, max_attempts));
        break;
      case MessageState::kAcked:
        break;
    }
  }
  return out;
}

Status OutboxTable::Restore(MessageRow&& row) {
  if (Status st = ValidateTopic(row.ns, row.topic); !st.ok()) return st;
  if (Status st = ValidateName(row.key, "key"); !st.ok()) return st;
  if (row.id == 0) {
    return Status(StatusCode::kBadRequest, "stored message has id 0");
  }
  const std::string* ns = nullptr;
  const std::string* topic = nullptr;
  Topic& t = FindOrCreateTopic(row.ns, row.topic, &ns, &topic);
  if (t.messages.contains(row.id) || t.by_key.contains(row.key)) {
    return Status(StatusCode::kBadRequest,
                  "stored message " + std::to_string(row.id) + " (key \"" +
                      row.key + "\") appears twice");
  }
  Message& m = t.messages[row.id];
  m.key = std::move(row.key);
  m.payload = std::move(row.payload);
  m.enqueued_at = row.enqueued_at;
  m.attempts = row.attempts;
  m.acked = row.acked;
  m.consumer = std::move(row.consumer);
  m.token = std::move(row.claim_token);
  m.lease = row.lease_expires_at;
  if (!m.acked) t.open.insert(row.id);
  t.by_key.emplace(m.key, row.id);
  last_id_ = std::max(last_id_, row.id);
  return Status::Ok();
}

void OutboxTable::Journal(const std::string& ns, const std::string& topic,
                          MessageId id, const Message& m) {
  JournalEntry e;
  e.kind = JournalEntry::Kind::kPutMessage;
  MessageRow& row = e.message;
  row.ns = ns;
  row.topic = topic;
  row.id = id;
  row.key = m.key;
  row.payload = m.payload;
  row.enqueued_at = m.enqueued_at;
  row.attempts = m.attempts;
  row.acked = m.acked;
  row.consumer = m.consumer;
  row.claim_token = m.token;
  row.lease_expires_at = m.lease;
  journal_->push_back(std::move(e));
}

void OutboxTable::Emit(EventType type, Time now, const std::string& ns,
                       const std::string& topic, MessageId id,
                       const Message& m) {
  if (events_ == nullptr) return;
  Event e;
  e.type = type;
  e.at = now;
  e.ns = ns;
  e.resource = topic;
  e.key = m.key;
  e.message = id;
  e.holder = m.consumer;
  e.until = m.lease;
  e.count = m.attempts;
  events_->OnEvent(e);
}

}  // namespace leasehold::engine
