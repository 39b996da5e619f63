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
    if (unreserved(name)) {
      return name; // what URLEncoder leaves as it is
    }
    return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private static boolean unreserved(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
          || c == '.' || c == '-' || c == '_' || c == '*')) {
        return false;
      }
    }
    return true;
  }

  /**
   * A flat JSON object written straight to UTF-8 bytes (the hot lock bodies): name/value
   * pairs, each value a String (null: JSON null) or a Number; the same bytes as Jackson's.
   */
  static byte[] flat(Object... pairs) {
    StringBuilder sb = new StringBuilder(160).append('{');
    for (int i = 0; i < pairs.length; i += 2) {
      if (i > 0) {
        sb.append(',');
      }
      Object v = pairs[i + 1];
      if (!quote(sb, (String) pairs[i])) {
        return viaTree(pairs);
      }
      sb.append(':');
      if (v == null) {
        sb.append("null");
      } else if (v instanceof String) {
        if (!quote(sb, (String) v)) {
          return viaTree(pairs);
        }
      } else {
        sb.append(((Number) v).longValue());
      }
    }
    return sb.append('}').toString().getBytes(StandardCharsets.UTF_8);
  }

  /** {@link #flat(Object...)} through Jackson (strings with surrogates). */
  private static byte[] viaTree(Object... pairs) {
    ObjectNode doc = object();
    for (int i = 0; i < pairs.length; i += 2) {
      Object v = pairs[i + 1];
      if (v == null) {
        doc.putNull((String) pairs[i]);
      } else if (v instanceof String) {
        doc.put((String) pairs[i], (String) v);
      } else {
        doc.put((String) pairs[i], ((Number) v).longValue());
      }
    }
    return bytes(doc);
  }

  private static final String HEX = "0123456789ABCDEF";

  /** Appends {@code s} as a JSON string escaped as Jackson does; false on a surrogate. */
  private static boolean quote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20) {
        String esc = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : c == '\b' ? "\\b"
            : c == '\f' ? "\\f" : null;
        if (esc != null) {
          sb.append(esc);
        } else {
          sb.append("\\u00").append(HEX.charAt(c >> 4)).append(HEX.charAt(c & 0xF));
        }
      } else if (Character.isSurrogate(c)) {
        return false;
      } else {
        sb.append(c);
      }
    }
    sb.append('"');
    return true;
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
