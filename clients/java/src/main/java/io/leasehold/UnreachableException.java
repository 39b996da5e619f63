package io.leasehold;

/** No server could be reached, or the connection broke and the request could not be sent again safely. */
public class UnreachableException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /** See {@link LeaseholdException#LeaseholdException(String, String, int)}. */
  public UnreachableException(String code, String message, int status) {
    super(code, message, status);
  }
}
