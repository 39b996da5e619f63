package io.leasehold;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;

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

  /** {@link #of(int, JsonNode)} on an answer; a plain 200 is read without building a tree. */
  static Grant of(Answer a) {
    if (a.status() == 200) {
      Grant g = streamed(a.body());
      if (g != null) {
        return g;
      }
    }
    return of(a.status(), a.json());
  }

  /** The grant of a 200 body of plain fields, or null (read it as a tree). */
  private static Grant streamed(byte[] body) {
    if (body == null || body.length == 0) {
      return null;
    }
    long fence = 0;
    String mode = "";
    long count = 0;
    long permits = 0;
    long result = 0;
    try (JsonParser p = Json.MAPPER.getFactory().createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      JsonToken t;
      while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken v = p.nextToken();
        boolean wanted = true;
        switch (field) {
          case "fence":
          case "count":
          case "permits":
          case "result":
            if (v != JsonToken.VALUE_NUMBER_INT || p.getNumberType() != JsonParser.NumberType.INT
                && p.getNumberType() != JsonParser.NumberType.LONG) {
              return null;
            }
            long n = p.getLongValue();
            if (field.equals("fence")) {
              fence = n;
            } else if (field.equals("count")) {
              count = n;
            } else if (field.equals("permits")) {
              permits = n;
            } else {
              result = n;
            }
            break;
          case "mode":
            if (v != JsonToken.VALUE_STRING) {
              return null;
            }
            mode = p.getText();
            break;
          default:
            wanted = false;
        }
        if (!wanted) {
          p.skipChildren();
        }
      }
      if (t != JsonToken.END_OBJECT || p.nextToken() != null) {
        return null;
      }
    } catch (IOException e) {
      return null;
    }
    if (count != (int) count || permits != (int) permits || result != (int) result) {
      return null;
    }
    return new Grant(fence, mode, (int) count, (int) permits, result == 1);
  }
}
