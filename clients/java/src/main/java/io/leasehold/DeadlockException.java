package io.leasehold;

import java.util.List;

/** Chosen as a deadlock victim (result -3); {@link #getCycle()} lists the cycle's edges. */
public class DeadlockException extends LeaseholdException {
  private static final long serialVersionUID = 1L;
  private final List<CycleEdge> cycle;

  /** A deadlock refusal with the server's cycle. */
  public DeadlockException(String message, int status, List<CycleEdge> cycle) {
    super("deadlock", message, status);
    this.cycle = List.copyOf(cycle);
  }

  /** The edges of the cycle: which session waited for which, on what resource. */
  public List<CycleEdge> getCycle() {
    return cycle;
  }
}
