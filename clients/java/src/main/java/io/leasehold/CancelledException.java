package io.leasehold;

/** The wait was cancelled (result -2), or the waiting thread was interrupted. */
public class CancelledException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /** See {@link LeaseholdException#LeaseholdException(String, String, int)}. */
  public CancelledException(String code, String message, int status) {
    super(code, message, status);
  }
}
