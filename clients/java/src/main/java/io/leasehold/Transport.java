package io.leasehold;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;

/**
 * Sends requests to the node believed to lead, finding it among the nodes, following 307s,
 * and deciding what may be sent again (docs/client.md, "Threads and connections", "Clusters").
 * Thread-safe; one per client.
 */
final class Transport {
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);
  static final long PAUSE_FIRST_MS = 50;
  static final long PAUSE_MAX_MS = 400;

  /** Tests may observe every answer (to validate it against docs/openapi.yaml). */
  static volatile Consumer<Observed> observer;

  /** One request and its answer, as seen by {@link #observer}. */
  record Observed(String method, String path, int status, byte[] body) {}

  /** Why a send got no answer. */
  enum Failure {
    /** Could not connect: nothing was sent. */
    CONNECT,
    /** The connection broke after the request may have been written. */
    BROKEN,
    /** Written, no answer within the deadline. */
    TIMEOUT
  }

  /** Internal: a lock request's connection broke, or it was answered 503. */
  static final class WaitBroken extends RuntimeException {
    private static final long serialVersionUID = 1L;

    WaitBroken() {
      super("the wait broke", null, false, false);
    }
  }

  final Nodes nodes;
  final Duration ioTimeout;
  private final String authorization;
  private final HttpClient http;
  /** Parsed request URIs by node + path (bounded: paths with ids come and go). */
  private final Map<String, URI> uris = new ConcurrentHashMap<>();
  private static final int MAX_URIS = 1024;

  /** A send whose TLS handshake was refused for good (Tls.refusal): nothing was acted on. */
  private record Refused(UnreachableException error) {}

  /** {@code tls}: the context of https connections (null: the JDK's default). */
  Transport(List<String> urls, String token, Duration ioTimeout, SSLContext tls) {
    this.nodes = new Nodes(urls);
    this.authorization = token == null ? null : "Bearer " + token;
    this.ioTimeout = ioTimeout;
    HttpClient.Builder b = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(CONNECT_TIMEOUT)
        .followRedirects(HttpClient.Redirect.NEVER);
    if (tls != null) {
      b.sslContext(tls); // host names are verified by java.net.http whatever the context
    }
    this.http = b.build();
  }

  /** The outcome of one send: an Answer, a Failure, or Refused. */
  private Object send(String node, Request req, long timeoutMs, boolean stream) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(node + req.path()));
    if (timeoutMs > 0) {
      b.timeout(Duration.ofMillis(timeoutMs));
    }
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    if (req.body() != null) {
      b.header("Content-Type", "application/json");
      b.method(req.method(), HttpRequest.BodyPublishers.ofByteArray(req.body()));
    } else {
      b.method(req.method(), HttpRequest.BodyPublishers.noBody());
    }
    try {
      if (stream) {
        HttpResponse<InputStream> r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        if (r.statusCode() == 200) {
          return new Answer(200, null, new byte[0], r.body());
        }
        try (InputStream in = r.body()) {
          return answer(req, r.statusCode(), r.headers().firstValue("Location").orElse(null), in.readAllBytes());
        }
      }
      HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
      return answer(req, r.statusCode(), r.headers().firstValue("Location").orElse(null), r.body());
    } catch (HttpConnectTimeoutException e) {
      return Failure.CONNECT;
    } catch (HttpTimeoutException e) {
      return Failure.TIMEOUT;
    } catch (IOException e) {
      SSLException refusal = Tls.refusal(e);
      if (refusal != null) {
        return new Refused(Tls.error(node, refusal));
      }
      return isConnect(e) ? Failure.CONNECT : Failure.BROKEN;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CancelledException("interrupted", "the calling thread was interrupted", 0);
    }
  }

  private URI uri(String url) {
    URI u = uris.get(url);
    if (u == null) {
      u = URI.create(url);
      if (uris.size() < MAX_URIS) {
        uris.put(url, u);
      }
    }
    return u;
  }

  private static Answer answer(Request req, int status, String location, byte[] body) {
    Consumer<Observed> o = observer;
    if (o != null) {
      o.accept(new Observed(req.method(), req.path(), status, body));
    }
    return new Answer(status, location, body, null);
  }

  /** java.net.http: a ConnectException (anywhere in the causes) means nothing was sent. */
  private static boolean isConnect(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ConnectException) {
        return true;
      }
    }
    return false;
  }

  private static boolean mayResend(Request req, Failure f) {
    return f == Failure.CONNECT || req.retry() == Request.Retry.IDEMPOTENT;
  }

  static UnreachableException unreachable(String message) {
    return new UnreachableException("unreachable", message, 0);
  }

  Answer call(Request req) {
    return call(req, -1, false);
  }

  /**
   * Sends {@code req} to the leader and answers its final answer (anything but 307/503; a 503
   * after the deadline). Throws UnreachableException, or WaitBroken for a lock request that
   * broke or got 503. {@code attemptMs} (if positive) bounds the whole call (a keepalive
   * gives up after ttl/6).
   */
  Answer call(Request req, long attemptMs, boolean stream) {
    long start = System.nanoTime();
    long io = ioTimeout.toMillis();
    Long deadline;
    long readTimeout;
    if (req.waitMs() < 0) {
      deadline = null;
      readTimeout = -1;
    } else {
      deadline = start + ms(io + req.waitMs());
      readTimeout = io + req.waitMs();
    }
    if (stream) {
      readTimeout = -1;
    }
    if (attemptMs > 0) {
      deadline = start + ms(attemptMs);
      readTimeout = attemptMs;
    }
    long pause = PAUSE_FIRST_MS;
    Answer last503 = null;
    UnreachableException refused = null; // the last TLS refusal, named when no node answered
    while (true) {
      boolean answeredAny = false;
      boolean busy = false;
      // The nodes in order, after any leader a 307 named; the sets are made only past the
      // first node (one node, or the leader answering, allocates nothing).
      List<String> order = nodes.order();
      int next = 0;
      Deque<String> queue = null;
      String first = null;
      Set<String> asked = null;
      while (true) {
        String node;
        if (queue != null && !queue.isEmpty()) {
          node = queue.pollFirst();
        } else if (next < order.size()) {
          node = order.get(next++);
        } else {
          break;
        }
        if (asked == null) {
          if (first == null) {
            first = node;
          } else if (first.equals(node)) {
            continue;
          } else {
            asked = new HashSet<>();
            asked.add(first);
            asked.add(node);
          }
        } else if (!asked.add(node)) {
          continue;
        }
        long timeout = deadline == null || stream ? readTimeout
            : Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
        Object outcome = sendOnce(node, req, timeout, stream);
        if (outcome instanceof Refused) {
          refused = ((Refused) outcome).error();
          continue;
        }
        if (!(outcome instanceof Answer)) {
          continue;
        }
        Answer a = (Answer) outcome;
        answeredAny = true;
        if (a.status() == 307) {
          busy = true;
          String target = a.location() == null ? null : Nodes.origin(a.location());
          if (target != null && node.startsWith("https://") && !target.startsWith("https://")) {
            throw new LeaseholdException("bad_url", node + " redirected to " + a.location()
                + ": a redirect from https to http is not followed", 307);
          }
          if (target != null && nodes.learn(target)) {
            if (queue == null) {
              queue = new ArrayDeque<>();
            }
            queue.addFirst(target);
            continue;
          }
          return a;
        }
        if (a.status() == 503) {
          if (req.retry() == Request.Retry.LOCK) {
            throw new WaitBroken();
          }
          busy = true;
          last503 = a;
          continue;
        }
        nodes.answered(node);
        return a;
      }
      if (!answeredAny) {
        if (refused != null) {
          throw refused;
        }
        throw unreachable("no node answered (" + String.join(", ", nodes.order()) + ")");
      }
      long now = System.nanoTime();
      if (deadline == null && busy) {
        deadline = now + ms(io);
      }
      if (deadline != null && now + ms(pause) >= deadline) {
        if (last503 != null) {
          return last503;
        }
        throw unreachable("no node leads (redirects went round)");
      }
      sleep(pause);
      pause = Math.min(pause * 2, PAUSE_MAX_MS);
    }
  }

  /**
   * One node: an Answer, Refused, or null to pass to the next node; throws when nothing may be
   * sent again.
   */
  private Object sendOnce(String node, Request req, long timeout, boolean stream) {
    boolean resent = false;
    while (true) {
      Object outcome = send(node, req, timeout, stream);
      if (outcome instanceof Answer) {
        return outcome;
      }
      if (outcome instanceof Refused) {
        nodes.demote(node);
        return outcome;
      }
      Failure f = (Failure) outcome;
      if (f == Failure.CONNECT) {
        nodes.demote(node);
        return null;
      }
      if (!mayResend(req, f)) {
        if (req.retry() == Request.Retry.LOCK) {
          throw new WaitBroken();
        }
        if (f == Failure.TIMEOUT) {
          throw new UnreachableException("timeout", "no answer in time", 0);
        }
        throw unreachable("the connection broke after the request was sent");
      }
      if (f == Failure.TIMEOUT) {
        nodes.demote(node);
        return null;
      }
      if (resent) {
        return null;
      }
      resent = true;
    }
  }

  /**
   * Asks each node's /healthz in turn until one answers 200 (it leads: null), {@code untilNanos}
   * passes (UnreachableException), or every node of a round refused the TLS handshake (the last
   * refusal: asking again would not change it).
   */
  UnreachableException awaitHealthy(long untilNanos) {
    long pause = PAUSE_FIRST_MS;
    Request req = Request.get("/healthz");
    while (true) {
      List<String> order = nodes.order();
      UnreachableException refused = null;
      int refusals = 0;
      for (String node : order) {
        long left = (untilNanos - System.nanoTime()) / 1_000_000;
        if (left <= 0) {
          return unreachable("no server came back in time");
        }
        Object outcome = send(node, req, Math.min(left, 2000), false);
        if (outcome instanceof Refused) {
          refused = ((Refused) outcome).error();
          refusals++;
        }
        if (outcome instanceof Answer && ((Answer) outcome).status() == 200) {
          nodes.answered(node);
          return null;
        }
      }
      if (refusals == order.size()) {
        return refused;
      }
      if (System.nanoTime() + ms(pause) >= untilNanos) {
        return unreachable("no server came back in time");
      }
      sleep(pause);
      pause = Math.min(pause * 2, PAUSE_MAX_MS);
    }
  }

  private static long ms(long millis) {
    return millis * 1_000_000L;
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CancelledException("interrupted", "the calling thread was interrupted", 0);
    }
  }
}
