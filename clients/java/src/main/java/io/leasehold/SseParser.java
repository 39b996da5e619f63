package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * text/event-stream parsing, one line at a time: lines come from a reader over the whole
 * stream, so a line split across two reads is joined before it gets here. Not thread-safe.
 */
final class SseParser {
  private String type = "";
  private final List<String> data = new ArrayList<>();

  /** Feeds one line (without its end); answers the event it completes, or null. */
  Event line(String raw) {
    String line = raw.endsWith("\r") ? raw.substring(0, raw.length() - 1) : raw;
    if (line.isEmpty()) {
      Event e = data.isEmpty() ? null : dispatch();
      type = "";
      return e;
    }
    if (line.startsWith(":")) {
      return null;
    }
    int colon = line.indexOf(':');
    String field = colon < 0 ? line : line.substring(0, colon);
    String value = colon < 0 ? "" : line.substring(colon + 1);
    if (value.startsWith(" ")) {
      value = value.substring(1);
    }
    if (field.equals("event")) {
      type = value;
    } else if (field.equals("data")) {
      data.add(value);
    }
    return null;
  }

  private Event dispatch() {
    String text = String.join("\n", data);
    data.clear();
    JsonNode node;
    try {
      node = Json.MAPPER.readTree(text);
    } catch (IOException e) {
      node = Json.object().put("text", text);
    }
    if (node == null || !node.isObject()) {
      node = Json.object().set("value", node);
    }
    return new Event(type.isEmpty() ? node.path("type").asText("message") : type, node);
  }
}
