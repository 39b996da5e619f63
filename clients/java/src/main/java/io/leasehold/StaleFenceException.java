package io.leasehold;

/** A fenced write was refused: a newer fence wrote the record (stale_fence). */
public class StaleFenceException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /** See {@link LeaseholdException#LeaseholdException(String, String, int)}. */
  public StaleFenceException(String code, String message, int status) {
    super(code, message, status);
  }
}
