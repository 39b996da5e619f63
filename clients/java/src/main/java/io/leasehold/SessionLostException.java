package io.leasehold;

/** The session is gone (session_not_found), or was used after its loss. */
public class SessionLostException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /** See {@link LeaseholdException#LeaseholdException(String, String, int)}. */
  public SessionLostException(String code, String message, int status) {
    super(code, message, status);
  }
}
