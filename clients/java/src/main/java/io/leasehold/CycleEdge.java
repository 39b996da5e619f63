package io.leasehold;

import java.io.Serializable;

/**
 * One edge of a deadlock cycle: session {@code waiter} waits for {@code holder} on {@code resource}.
 *
 * @param waiter the waiting session's id
 * @param holder the holding session's id
 * @param resource the resource waited for
 * @param waiterName the waiter's name, or null
 * @param holderName the holder's name, or null
 * @param wanted the mode the waiter asked for, or null
 */
public record CycleEdge(String waiter, String holder, String resource, String waiterName, String holderName,
    String wanted) implements Serializable {
  private static final long serialVersionUID = 1L;
}
