package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A record (or a lease-only key) as {@code GET /v1/records/{ns}/{key}} answers it.
 *
 * @param key the key
 * @param version the record's version
 * @param body the body, or null
 * @param state the state ({@code free}, {@code checked_out}, ...)
 * @param lockedBy the owner of its lease, or null
 * @param lockExpiresAt when the lease runs out, or null
 * @param fence the lease's fence (0: none)
 * @param writeFence the newest fence that wrote it (0: none)
 */
public record RecordValue(String key, long version, String body, String state, String lockedBy, String lockExpiresAt,
    long fence, long writeFence) {
  static RecordValue of(JsonNode d) {
    return new RecordValue(d.path("key").asText(""), d.path("version").asLong(0), Json.text(d, "body"),
        d.path("state").asText(""), Json.text(d, "locked_by"), Json.text(d, "lock_expires_at"),
        d.path("fence").asLong(0), d.path("write_fence").asLong(0));
  }
}
