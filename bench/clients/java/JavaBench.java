// The Java drivers of the client benchmark (bench/clients/README.md): lock+release pairs,
// 16 threads each with its own session and resource r-<caller>, through the client
// (java-client) or through one shared bare java.net.http.HttpClient (java-net-http) that checks
// the status and parses the JSON answer as a client would. After the warm-up (several seconds:
// the JIT needs it) it reads the pairs done and the process's CPU, again SECONDS later, and
// prints one JSON line. Run it as a single-file program (see README.md beside it).
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.leasehold.LeaseholdClient;
import io.leasehold.Lock;
import io.leasehold.LockMode;
import io.leasehold.Session;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

public final class JavaBench {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final LongAdder FAILED = new LongAdder();

  interface Caller {
    void pair() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    String driver = args[0];
    String url = null;
    int callers = 16;
    double seconds = 3;
    double warmup = 5;
    for (int i = 1; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--url": url = args[i + 1]; break;
        case "--callers": callers = Integer.parseInt(args[i + 1]); break;
        case "--seconds": seconds = Double.parseDouble(args[i + 1]); break;
        case "--warmup": warmup = Math.max(Double.parseDouble(args[i + 1]), 5); break;
        default: throw new IllegalArgumentException(args[i]);
      }
    }
    LeaseholdClient client = LeaseholdClient.create(url);
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    List<Caller> list = new ArrayList<>();
    for (int c = 0; c < callers; c++) {
      String resource = "r-" + c;
      Session s = client.session("bench-" + c, Duration.ofSeconds(60));
      if (driver.equals("java-client")) {
        list.add(() -> {
          // A break on a timeout-0 acquire is reported, not asked again
          // (docs/client.md, "Restarts"): counted like the bare loop's.
          try {
            Lock lk = s.lock("bench", resource, LockMode.EXCLUSIVE, Duration.ZERO);
            lk.release();
          } catch (io.leasehold.UnreachableException e) {
            FAILED.increment();
          }
        });
      } else if (driver.equals("java-net-http")) {
        String base = url.split(",")[0];
        String acquire = MAPPER.createObjectNode().put("session", s.id()).put("resource", resource)
            .put("mode", "Exclusive").put("owner", "Session").put("timeout_ms", 0).put("principal", "public").toString();
        String release = MAPPER.createObjectNode().put("session", s.id()).put("resource", resource)
            .put("owner", "Session").put("principal", "public").toString();
        list.add(() -> {
          // JDK 17's HttpClient now and then fails a request on a pooled
          // connection under 16 threads ("HTTP/1.1 header parser received no
          // bytes: connection closed locally"; the server logged nothing):
          // counted in failed_pairs, and the loop goes on.
          try {
            post(http, base + "/v1/applocks/bench/acquire", acquire);
            post(http, base + "/v1/applocks/bench/release", release);
          } catch (java.io.IOException e) {
            FAILED.increment();
          }
        });
      } else {
        throw new IllegalArgumentException("driver: java-client or java-net-http");
      }
    }
    LongAdder pairs = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    for (Caller caller : list) {
      Thread t = new Thread(() -> {
        try {
          while (!stop.get()) {
            caller.pair();
            pairs.increment();
          }
        } catch (Exception e) {
          e.printStackTrace();
          System.exit(1);
        }
      });
      t.start();
      threads.add(t);
    }
    var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    Thread.sleep((long) (warmup * 1000));
    long p0 = pairs.sum();
    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    Thread.sleep((long) (seconds * 1000));
    long p1 = pairs.sum();
    long cpu1 = os.getProcessCpuTime();
    double elapsed = (System.nanoTime() - t0) / 1e9;
    stop.set(true);
    for (Thread t : threads) {
      t.join();
    }
    long done = p1 - p0;
    double cpu = (cpu1 - cpu0) / 1e9;
    System.out.printf(java.util.Locale.ROOT,
        "{\"driver\":\"%s\",\"callers\":%d,\"pairs\":%d,\"seconds\":%.1f,\"pairs_per_s\":%.1f,\"cpu_s\":%.2f,"
            + "\"cpu_us_per_call\":%.1f,\"failed_pairs\":%d}%n",
        driver, callers, done, elapsed, done / elapsed, cpu, done == 0 ? 0 : cpu * 1e6 / (2 * done),
        FAILED.sum());
    client.close();
    System.exit(0);
  }

  private static JsonNode post(HttpClient http, String url, String body) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    HttpResponse<byte[]> a = http.send(r, HttpResponse.BodyHandlers.ofByteArray());
    if (a.statusCode() != 200) {
      throw new IllegalStateException("status " + a.statusCode());
    }
    return MAPPER.readTree(a.body());
  }
}
