package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One write a commit applied, in the order staged.
 *
 * @param op {@code insert}, {@code save}, {@code delete}, {@code complete} or {@code enqueue}
 * @param ns the namespace
 * @param key the record's key, the operation's id, or the message's key
 * @param version the record's new version (insert and save; else 0)
 * @param topic the message's topic (enqueue; else null)
 * @param id the message's id (enqueue; else 0)
 * @param duplicate whether the message's key was enqueued before (enqueue)
 */
public record Applied(String op, String ns, String key, long version, String topic, long id, boolean duplicate) {
  static Applied of(JsonNode d) {
    return new Applied(d.path("op").asText(""), d.path("ns").asText(""), d.path("key").asText(""),
        d.path("version").asLong(0), Json.text(d, "topic"), d.path("id").asLong(0),
        d.path("duplicate").asBoolean(false));
  }
}
