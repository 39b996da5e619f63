package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.InputStream;

/**
 * A node's answer: its status, its Location (for a 307), and its body (or, for a stream
 * answered 200, the open body).
 */
record Answer(int status, String location, byte[] body, InputStream stream) {
  JsonNode json() {
    return Json.parse(body);
  }
}
