package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * What {@link Transaction#beginOperation(String, String)} found in the committed state.
 *
 * @param state {@code "new"} or {@code "completed"}
 * @param outcome the stored outcome (any JSON) when completed, else null
 * @param completedAt when it was completed, else null
 */
public record Operation(String state, JsonNode outcome, String completedAt) {
  static Operation of(JsonNode d) {
    JsonNode outcome = d.get("outcome");
    return new Operation(d.path("state").asText(""), outcome, Json.text(d, "completed_at"));
  }

  /** True when the operation was completed before: do nothing again, answer {@link #outcome()}. */
  public boolean completed() {
    return "completed".equals(state);
  }
}
