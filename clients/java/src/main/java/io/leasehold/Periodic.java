package io.leasehold;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A task run every period on a worker thread (the scheduler only wakes it), never two at once:
 * a run still going when the next is due makes that one skip.
 */
final class Periodic {
  private final ScheduledFuture<?> timer;
  private final AtomicBoolean running = new AtomicBoolean();

  Periodic(ScheduledExecutorService scheduler, ExecutorService workers, long periodMs, Runnable task) {
    this.timer = scheduler.scheduleAtFixedRate(() -> {
      if (!running.compareAndSet(false, true)) {
        return;
      }
      try {
        workers.execute(() -> {
          try {
            task.run();
          } finally {
            running.set(false);
          }
        });
      } catch (RuntimeException e) {
        running.set(false);
      }
    }, periodMs, periodMs, TimeUnit.MILLISECONDS);
  }

  void cancel() {
    timer.cancel(false);
  }
}
