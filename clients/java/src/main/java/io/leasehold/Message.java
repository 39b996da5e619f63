package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * An outbox message claimed by a consumer ({@link LeaseholdClient#claim}).
 *
 * @param id the message's id
 * @param key its key: perform its effect idempotently by it
 * @param payload the JSON enqueued
 * @param attempt 1 on the first claim
 * @param claimToken acks it until {@code leaseExpiresAt}
 * @param leaseExpiresAt when the claim runs out (the message comes back unless acked)
 */
public record Message(long id, String key, JsonNode payload, int attempt, String claimToken,
    String leaseExpiresAt) {
  static Message of(JsonNode d) {
    return new Message(d.path("id").asLong(0), d.path("key").asText(""), d.get("payload"),
        d.path("attempt").asInt(0), d.path("claim_token").asText(""), Json.text(d, "lease_expires_at"));
  }
}
