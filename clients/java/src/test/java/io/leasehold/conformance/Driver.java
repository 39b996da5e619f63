package io.leasehold.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.leasehold.CancelledException;
import io.leasehold.Checkout;
import io.leasehold.CycleEdge;
import io.leasehold.DeadlockException;
import io.leasehold.Event;
import io.leasehold.Held;
import io.leasehold.LeaseholdClient;
import io.leasehold.LeaseholdException;
import io.leasehold.Lock;
import io.leasehold.LockMode;
import io.leasehold.LockTimeoutException;
import io.leasehold.LockedException;
import io.leasehold.LostException;
import io.leasehold.RecordValue;
import io.leasehold.SemaphoreSlot;
import io.leasehold.Session;
import io.leasehold.SessionLostException;
import io.leasehold.StaleFenceException;
import io.leasehold.UnreachableException;
import io.leasehold.Watch;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The conformance driver of the Java client (clients/conformance/PROTOCOL.md): JSON lines on
 * stdin and stdout, each request on its own thread, handles named by {@code as}, loss reported
 * from the client's futures, errors mapped to {@code kind} by their class. It only translates.
 */
public final class Driver {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private final PrintStream out;
  private final Map<String, Object> handles = new ConcurrentHashMap<>();
  private final Map<String, CompletableFuture<Void>> watchDone = new ConcurrentHashMap<>();
  private volatile LeaseholdClient client;

  /** A request the driver cannot carry out (bad line, unknown handle). */
  static final class DriverError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    DriverError(String message) {
      super(message);
    }
  }

  /** An op the client does not offer. */
  static final class Unsupported extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Unsupported(String message) {
      super(message);
    }
  }

  private Driver(PrintStream out) {
    this.out = out;
  }

  /** Runs the driver on stdin and stdout until stdin closes. */
  public static void main(String[] args) throws IOException, InterruptedException {
    for (String a : args) {
      if (a.equals("--mutant")) {
        System.err.println("the Java driver has no mutants");
        System.exit(2);
      }
    }
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
        StandardCharsets.UTF_8);
    new Driver(out).run();
    System.exit(0);
  }

  private void run() throws IOException, InterruptedException {
    ExecutorService pool = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r);
      t.setDaemon(true);
      return t;
    });
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode request;
      try {
        request = MAPPER.readTree(line);
      } catch (IOException e) {
        write(MAPPER.createObjectNode().putNull("id").set("error", driverError("not JSON: " + e.getMessage())));
        continue;
      }
      pool.execute(() -> serve(request));
    }
    closeAll(pool);
  }

  private void closeAll(ExecutorService pool) throws InterruptedException {
    Thread closer = new Thread(() -> {
      for (Object h : handles.values()) {
        if (h instanceof Watch) {
          ((Watch) h).close();
        }
      }
      LeaseholdClient c = client;
      if (c != null) {
        c.close();
      }
    });
    closer.setDaemon(true);
    closer.start();
    closer.join(3000);
    pool.shutdownNow();
    pool.awaitTermination(1, TimeUnit.SECONDS);
  }

  private void write(ObjectNode message) {
    String text;
    try {
      text = MAPPER.writeValueAsString(message);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    synchronized (out) {
      out.println(text);
      out.flush();
    }
  }

  private void event(String kind, String of) {
    write(MAPPER.createObjectNode().put("event", kind).put("of", of));
  }

  private void serve(JsonNode request) {
    ObjectNode answer = MAPPER.createObjectNode();
    answer.set("id", request.get("id"));
    try {
      answer.set("ok", op(request));
    } catch (RuntimeException e) {
      answer.set("error", errorOf(e));
    }
    write(answer);
  }

  private static ObjectNode driverError(String message) {
    return MAPPER.createObjectNode().put("kind", "driver").put("message", message);
  }

  static ObjectNode errorOf(Throwable e) {
    if (e instanceof DriverError) {
      return driverError(e.getMessage());
    }
    if (e instanceof Unsupported) {
      return MAPPER.createObjectNode().put("kind", "unsupported").put("message", e.getMessage());
    }
    ObjectNode o = MAPPER.createObjectNode().put("kind", kindOf(e));
    if (e instanceof LeaseholdException) {
      LeaseholdException le = (LeaseholdException) e;
      o.put("code", le.code()).put("status", le.status());
    } else {
      o.put("code", "internal").put("status", 0);
    }
    o.put("message", String.valueOf(e.getMessage()));
    if (e instanceof DeadlockException) {
      ArrayNode cycle = o.putArray("cycle");
      for (CycleEdge edge : ((DeadlockException) e).getCycle()) {
        cycle.addObject().put("waiter", edge.waiter()).put("holder", edge.holder()).put("resource", edge.resource());
      }
    }
    return o;
  }

  private static String kindOf(Throwable e) {
    if (e instanceof LockTimeoutException) {
      return "timeout";
    } else if (e instanceof DeadlockException) {
      return "deadlock";
    } else if (e instanceof CancelledException) {
      return "cancelled";
    } else if (e instanceof LockedException) {
      return "locked";
    } else if (e instanceof SessionLostException) {
      return "session_lost";
    } else if (e instanceof LostException) {
      return "lost";
    } else if (e instanceof StaleFenceException) {
      return "stale_fence";
    } else if (e instanceof UnreachableException) {
      return "unreachable";
    }
    return "error";
  }

  private static String need(JsonNode r, String field) {
    JsonNode v = r.get(field);
    if (v == null || v.isNull()) {
      throw new DriverError("missing field " + field);
    }
    return v.asText();
  }

  private static Duration millis(JsonNode r, String field) {
    JsonNode v = r.get(field);
    if (v == null || v.isNull() || v.asLong() < 0) {
      return null;
    }
    return Duration.ofMillis(v.asLong());
  }

  private <T> T handle(JsonNode r, String field, Class<T> type) {
    String name = need(r, field);
    Object h = handles.get(name);
    if (h == null) {
      throw new DriverError("unknown handle " + name);
    }
    if (!type.isInstance(h)) {
      throw new DriverError(name + " is not a " + type.getSimpleName());
    }
    return type.cast(h);
  }

  private String name(JsonNode r) {
    String as = need(r, "as");
    if (handles.containsKey(as)) {
      throw new DriverError("handle " + as + " exists already");
    }
    return as;
  }

  private LeaseholdClient theClient() {
    LeaseholdClient c = client;
    if (c == null) {
      throw new DriverError("no client: send op client first");
    }
    return c;
  }

  /** Names a new handle and reports each completion of {@code lost} as event {@code kind}. */
  private void keep(String as, Object h, CompletableFuture<Void> lost, String kind) {
    handles.put(as, h);
    lost.thenRun(() -> event(kind, as));
  }

  private JsonNode op(JsonNode r) {
    String op = need(r, "op");
    ObjectNode ok = MAPPER.createObjectNode();
    switch (op) {
      case "client": {
        var b = LeaseholdClient.builder().url(need(r, "url"));
        Duration io = millis(r, "io_timeout_ms");
        if (io != null) {
          b.ioTimeout(io);
        }
        client = b.build();
        return ok;
      }
      case "session": {
        String as = name(r);
        Session s = theClient().session(need(r, "name"), millis(r, "ttl_ms"));
        keep(as, s, s.lost(), "lost");
        s.locksLost().thenRun(() -> event("locks_lost", as));
        return ok.put("session", s.id());
      }
      case "end_session":
        handle(r, "session", Session.class).end();
        return ok;
      case "lock": {
        String as = name(r);
        Lock lk = handle(r, "session", Session.class).lock(need(r, "ns"), need(r, "resource"),
            LockMode.of(r.path("mode").asText("Exclusive")), millis(r, "timeout_ms"));
        keep(as, lk, lk.lost(), "lost");
        return ok.put("fence", lk.fence()).put("mode", lk.mode().wire()).put("waited", lk.waited());
      }
      case "semaphore": {
        String as = name(r);
        SemaphoreSlot slot = handle(r, "session", Session.class).semaphore(need(r, "ns"), need(r, "name"),
            r.path("limit").asInt(), r.path("permits").asInt(1), millis(r, "timeout_ms"));
        keep(as, slot, slot.lost(), "lost");
        return ok.put("fence", slot.fence()).put("permits", slot.permits()).put("waited", slot.waited());
      }
      case "release":
        handle(r, "handle", Held.class).release();
        return ok;
      case "checkout": {
        String as = name(r);
        Checkout c = theClient().checkout(need(r, "ns"), need(r, "key"), need(r, "owner"), millis(r, "ttl_ms"));
        keep(as, c, c.lost(), "lost");
        return ok.put("token", c.token()).put("fence", c.fence());
      }
      case "save":
        return ok.put("version", handle(r, "handle", Checkout.class).save(need(r, "body")));
      case "checkin":
        handle(r, "handle", Checkout.class).checkin();
        return ok;
      case "put":
        return ok.put("version", theClient().put(need(r, "ns"), need(r, "key"), need(r, "body")));
      case "get": {
        RecordValue v = theClient().get(need(r, "ns"), need(r, "key"));
        ok.put("body", v.body()).put("version", v.version()).put("locked_by", v.lockedBy());
        return ok.put("state", v.state());
      }
      case "fenced_save":
        return ok.put("version", theClient().save(need(r, "ns"), need(r, "key"), need(r, "body"),
            r.path("fence").asLong()));
      case "watch":
        return watch(r, ok);
      case "stop_watch": {
        String name = need(r, "handle");
        handle(r, "handle", Watch.class).close();
        CompletableFuture<Void> done = watchDone.get(name);
        if (done != null) {
          done.join();
        }
        return ok;
      }
      default:
        throw new Unsupported("op " + op + " is not offered");
    }
  }

  private JsonNode watch(JsonNode r, ObjectNode ok) {
    String as = name(r);
    Watch w = theClient().watch(r.hasNonNull("ns") ? r.get("ns").asText() : null);
    handles.put(as, w);
    CompletableFuture<Void> done = new CompletableFuture<>();
    watchDone.put(as, done);
    Thread t = new Thread(() -> {
      try {
        while (w.hasNext()) {
          Event e = w.next();
          ObjectNode line = MAPPER.createObjectNode().put("event", "watch").put("of", as).put("type", e.type());
          line.set("data", e.data());
          write(line);
        }
        write(MAPPER.createObjectNode().put("event", "watch_end").put("of", as).putNull("error"));
      } catch (RuntimeException e) {
        ObjectNode line = MAPPER.createObjectNode().put("event", "watch_end").put("of", as);
        line.set("error", errorOf(e));
        write(line);
      } finally {
        done.complete(null);
      }
    });
    t.setDaemon(true);
    t.start();
    return ok;
  }

}
