package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;

/** A lock or semaphore grant: its fence, mode, count, permits, and whether it waited. */
record Grant(long fence, String mode, int count, int permits, boolean waited) {
  static Grant of(int status, JsonNode doc) {
    if (status != 200) {
      if (status == 409 && doc.has("result")) {
        throw Errors.lockRefusal(status, doc);
      }
      throw Errors.fromAnswer(status, doc);
    }
    return new Grant(doc.path("fence").asLong(0), doc.path("mode").asText(""), doc.path("count").asInt(0),
        doc.path("permits").asInt(0), doc.path("result").asInt(0) == 1);
  }
}
