package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Validates every answer the client receives in the tests against docs/openapi.yaml (the
 * contract, not written twice): the operation is found by method and path template, the
 * answer's schema by status, and the body validated with JSON Schema 2020-12 (OpenAPI 3.1).
 * Mismatches are collected; {@link #check()} fails a test that saw any.
 */
final class OpenApiValidator {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static volatile OpenApiValidator installed;
  private final JsonNode doc;
  private final JsonSchemaFactory factory = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012);
  private final Map<String, JsonSchema> schemas = new ConcurrentHashMap<>();
  private final List<String> mismatches = java.util.Collections.synchronizedList(new ArrayList<>());
  private int validated;

  private OpenApiValidator(Path yaml) throws IOException {
    this.doc = new ObjectMapper(new YAMLFactory()).readTree(yaml.toFile());
  }

  /** Installs the validator as the transport's observer, once per JVM. */
  static synchronized OpenApiValidator install() throws IOException {
    if (installed == null) {
      String p = System.getenv().getOrDefault("LEASEHOLD_OPENAPI", "../../docs/openapi.yaml");
      OpenApiValidator v = new OpenApiValidator(Path.of(p));
      Transport.observer = v::observe;
      installed = v;
    }
    return installed;
  }

  private static String escape(String s) {
    return s.replace("~", "~0").replace("/", "~1");
  }

  /** The JSON pointer of the answer's schema, or null when the document names none. */
  private String schemaPointer(String method, String path, int status) {
    String template = null;
    String[] parts = path.split("/", -1);
    for (Iterator<String> it = doc.path("paths").fieldNames(); it.hasNext();) {
      String t = it.next();
      String[] tp = t.split("/", -1);
      if (tp.length != parts.length) {
        continue;
      }
      boolean match = true;
      for (int i = 0; i < tp.length && match; i++) {
        match = tp[i].startsWith("{") || tp[i].equals(parts[i]);
      }
      if (match && (template == null || !t.contains("{"))) {
        template = t;
      }
    }
    if (template == null) {
      mismatches.add(method + " " + path + ": no such path in openapi.yaml");
      return null;
    }
    String op = "/paths/" + escape(template) + "/" + method.toLowerCase(java.util.Locale.ROOT);
    JsonNode responses = doc.at(op + "/responses");
    String code = String.valueOf(status);
    if (!responses.has(code)) {
      code = responses.has("default") ? "default" : null;
    }
    if (code == null) {
      mismatches.add(method + " " + path + ": status " + status + " not documented");
      return null;
    }
    String response = op + "/responses/" + code;
    JsonNode r = doc.at(response);
    if (r.has("$ref")) {
      response = r.get("$ref").asText().substring(1);
    }
    String schema = response + "/content/application~1json/schema";
    return doc.at(schema).isMissingNode() ? null : schema;
  }

  void observe(Transport.Observed o) {
    String path = o.path().split("\\?", 2)[0];
    if (path.equals("/healthz") || path.startsWith("/v1/events") || o.status() == 307) {
      return; // a 307 is a standby's (or a test's redirector's) answer to any path, not the call's
    }
    String pointer = schemaPointer(o.method(), path, o.status());
    if (pointer == null || o.body().length == 0) {
      return;
    }
    JsonSchema schema = schemas.computeIfAbsent(pointer, p -> {
      // The answer's schema as the root, beside the document's components its $refs name.
      ObjectNode root = JSON.createObjectNode();
      root.put("$schema", "https://json-schema.org/draft/2020-12/schema");
      root.setAll((ObjectNode) doc.at(p).deepCopy());
      root.set("components", doc.get("components"));
      return factory.getSchema(root);
    });
    try {
      Set<ValidationMessage> errors = schema.validate(JSON.readTree(o.body()));
      synchronized (this) {
        validated++;
      }
      if (!errors.isEmpty()) {
        mismatches.add(o.method() + " " + path + " " + o.status() + ": " + errors);
      }
    } catch (IOException e) {
      mismatches.add(o.method() + " " + path + " " + o.status() + ": not JSON");
    }
  }

  synchronized int validated() {
    return validated;
  }

  /** Throws when an answer did not match the document; answers how many were validated. */
  int check() {
    synchronized (mismatches) {
      if (!mismatches.isEmpty()) {
        String all = String.join("\n", mismatches);
        mismatches.clear();
        throw new AssertionError("answers not as docs/openapi.yaml says:\n" + all);
      }
    }
    return validated();
  }
}
