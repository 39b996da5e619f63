package io.leasehold;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** JSON and path helpers: one shared, thread-safe mapper. */
final class Json {
  static final ObjectMapper MAPPER = new ObjectMapper();

  private Json() {}

  static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  static byte[] bytes(JsonNode node) {
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Any value Jackson encodes as a JSON tree (a {@link JsonNode} as it is). */
  static JsonNode value(Object v) {
    if (v instanceof JsonNode) {
      return (JsonNode) v;
    }
    try {
      return MAPPER.valueToTree(v);
    } catch (IllegalArgumentException e) {
      throw new LeaseholdException("bad_request", "not JSON: " + e.getMessage(), 0);
    }
  }

  /** The answer's body as a JSON object; an empty body is an empty object. */
  static JsonNode parse(byte[] body) {
    if (body == null || body.length == 0) {
      return object();
    }
    try {
      JsonNode node = MAPPER.readTree(body);
      if (node == null || !node.isObject()) {
        throw new LeaseholdException("bad_response", "not a JSON object", 0);
      }
      return node;
    } catch (IOException e) {
      throw new LeaseholdException("bad_response", "not JSON: " + e.getMessage(), 0);
    }
  }

  /** A path segment, percent-encoded. */
  static String seg(String name) {
    return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** A timeout as the API's ms: null or negative waits without limit (-1). */
  static long ms(Duration d) {
    return d == null || d.isNegative() ? -1 : d.toMillis();
  }

  static String text(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }
}
