package io.leasehold;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The hot lock path's hand-written JSON and segments give what Jackson and URLEncoder give. */
class FastPathTest {
  private static final String[] STRINGS = {"", "bench", "r-0", "a\"b\\c", "tab\tnl\ncr\r\b\f\u0001\u001f",
    "é ü 日本", "emoji \uD83D\uDE00", "lone \uD800", "public"};

  @Test
  void flatBodiesAreJacksons() {
    for (String s : STRINGS) {
      byte[] jackson;
      try {
        jackson = Json.bytes(Json.object().put("session", s).put("resource", s).put("timeout_ms", -1L)
            .put("limit", 3).putNull("principal"));
      } catch (RuntimeException e) {
        assertThrows(e.getClass(), () -> Json.flat("session", s, "resource", s, "timeout_ms", -1L, "limit", 3,
            "principal", null), s);
        continue;
      }
      byte[] flat = Json.flat("session", s, "resource", s, "timeout_ms", -1L, "limit", 3, "principal", null);
      assertArrayEquals(jackson, flat, s);
    }
  }

  @Test
  void segmentsAreUrlEncoders() {
    for (String s : new String[] {"bench", "A-z_0.9*", "a b", "a/b", "ä", "a+b", "%"}) {
      assertEquals(URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20"), Json.seg(s), s);
    }
  }

  @Test
  void grantsReadAsTheTreeReadsThem() {
    String[] bodies = {
      "{\"result\":0,\"fence\":42,\"mode\":\"Exclusive\",\"count\":1}",
      "{\"result\":1,\"fence\":9007199254740993,\"mode\":\"Shared\",\"count\":2,\"extra\":{\"a\":[1,2]}}",
      "{\"result\":1,\"permits\":3,\"fence\":\"7\"}",
      "{\"fence\":1.5,\"mode\":5,\"count\":null}",
      "{}",
    };
    for (String b : bodies) {
      byte[] body = b.getBytes(StandardCharsets.UTF_8);
      assertEquals(Grant.of(200, Json.parse(body)), Grant.of(new Answer(200, null, body, null)), b);
    }
    byte[] refused = "{\"result\":-1}".getBytes(StandardCharsets.UTF_8);
    assertThrows(LockTimeoutException.class, () -> Grant.of(new Answer(409, null, refused, null)));
    byte[] bad = "[1]".getBytes(StandardCharsets.UTF_8);
    assertThrows(LeaseholdException.class, () -> Grant.of(new Answer(200, null, bad, null)));
  }
}
