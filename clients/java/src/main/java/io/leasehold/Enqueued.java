package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * An outbox message enqueued or staged.
 *
 * @param id the message's id (the existing message's when a duplicate; 0 while staged)
 * @param duplicate whether its key was enqueued before (it is not enqueued again)
 * @param staged whether it is staged in a transaction (enqueued at commit)
 */
public record Enqueued(long id, boolean duplicate, boolean staged) {
  static Enqueued of(JsonNode d) {
    return new Enqueued(d.path("id").asLong(0), d.path("duplicate").asBoolean(false),
        d.path("staged").asBoolean(false));
  }
}
