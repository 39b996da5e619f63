package io.leasehold;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * The events of a namespace ({@code GET /v1/events}), as an iterator (or {@link #stream()}).
 * A reader thread parses the stream into a queue; {@link #hasNext()} blocks for the next
 * event, answers false once the stream ended or was closed, and throws
 * {@link UnreachableException} when the stream broke (or was silent for 45 s, or io_timeout
 * if longer). {@link #close()} may be called from any thread.
 */
public final class Watch implements Iterator<Event>, AutoCloseable {
  private static final Object END = new Object();
  private final InputStream body;
  private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
  private final ScheduledFuture<?> silenceCheck;
  private final long silenceNanos;
  private volatile long lastRead = System.nanoTime();
  private volatile boolean closed;
  private Object next;
  private boolean done;

  Watch(LeaseholdClient client, InputStream body) {
    this.body = body;
    this.silenceNanos = Math.max(45_000L, client.transport().ioTimeout.toMillis()) * 1_000_000L;
    client.workers().execute(this::read);
    this.silenceCheck = client.scheduler().scheduleAtFixedRate(this::checkSilence, 1, 1, TimeUnit.SECONDS);
  }

  private void read() {
    SseParser parser = new SseParser();
    try (BufferedReader in = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        lastRead = System.nanoTime();
        Event e = parser.line(line);
        if (e != null) {
          queue.add(e);
        }
      }
      queue.add(closed ? END : Transport.unreachable("the event stream ended"));
    } catch (IOException e) {
      queue.add(closed ? END : Transport.unreachable("the event stream broke: " + e.getMessage()));
    } finally {
      silenceCheck.cancel(false);
    }
  }

  private void checkSilence() {
    if (System.nanoTime() - lastRead > silenceNanos && !closed) {
      queue.add(Transport.unreachable("the event stream was silent too long"));
      stop();
    }
  }

  /** Blocks for the next event; false once the watch ended or was closed. */
  @Override
  public boolean hasNext() {
    if (next != null) {
      return true;
    }
    if (done) {
      return false;
    }
    Object o;
    try {
      o = queue.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CancelledException("interrupted", "the watching thread was interrupted", 0);
    }
    if (o == END) {
      done = true;
      return false;
    }
    if (o instanceof LeaseholdException) {
      done = true;
      throw (LeaseholdException) o;
    }
    next = o;
    return true;
  }

  @Override
  public Event next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Event e = (Event) next;
    next = null;
    return e;
  }

  /** The events as a sequential stream (close the watch to end it). */
  public Stream<Event> stream() {
    return StreamSupport.stream(Spliterators.spliteratorUnknownSize(this, Spliterator.ORDERED), false);
  }

  private void stop() {
    silenceCheck.cancel(false);
    try {
      body.close();
    } catch (IOException ignored) {
      // closing is best effort
    }
  }

  /** Stops the watch: the iterator ends (hasNext false) without an error. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    queue.add(END);
    stop();
  }
}
