package io.leasehold;

/** A lock or semaphore was not granted within its timeout (result -1). */
public class LockTimeoutException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /** See {@link LeaseholdException#LeaseholdException(String, String, int)}. */
  public LockTimeoutException(String code, String message, int status) {
    super(code, message, status);
  }
}
