package io.leasehold;

/** A checkout refused because someone else holds the key (423); {@link #lockedBy()} names them. */
public class LockedException extends LeaseholdException {
  private static final long serialVersionUID = 1L;
  private final String lockedBy;

  /** A refusal with the holder's name (null when the server did not say). */
  public LockedException(String message, int status, String lockedBy) {
    super("locked", message, status);
    this.lockedBy = lockedBy;
  }

  /** The owner that holds the key, or null. */
  public String lockedBy() {
    return lockedBy;
  }
}
