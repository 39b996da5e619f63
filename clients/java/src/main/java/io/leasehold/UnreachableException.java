package io.leasehold;

/**
 * No server could be reached (code {@code tls}: the TLS handshake was refused, by this client or by
 * the server; {@link #getCause()} is the {@code SSLException}), or the connection broke and the
 * request could not be sent again safely.
 */
public class UnreachableException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /** See {@link LeaseholdException#LeaseholdException(String, String, int)}. */
  public UnreachableException(String code, String message, int status) {
    super(code, message, status);
  }
}
