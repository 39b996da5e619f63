package io.leasehold;

/**
 * The base of every error the client raises. {@link #code()} is the API's error code
 * ({@code session_not_found}, {@code not_held}, {@code exists}, {@code not_found}, ...) or the
 * client's own ({@code bad_url}, {@code bad_tls}, {@code unreachable}, {@code tls}, {@code timeout},
 * {@code bad_response});
 * {@link #status()} is the HTTP status, 0 when no answer arrived. Branch on the subclass
 * ({@link LockTimeoutException}, {@link DeadlockException}, ...), never on the message.
 */
public class LeaseholdException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final String code;
  private final int status;

  /** An error with the API's or the client's {@code code} and the HTTP {@code status} (0: none). */
  public LeaseholdException(String code, String message, int status) {
    super(message.isEmpty() ? code : code + ": " + message);
    this.code = code;
    this.status = status;
  }

  /** The API's error code or the client's own. */
  public String code() {
    return code;
  }

  /** The HTTP status of the answer, 0 when none arrived. */
  public int status() {
    return status;
  }
}
