package io.leasehold;

/**
 * A transaction is over and nothing of it was applied: {@code transaction_aborted} (a staged
 * write no longer held at commit), {@code transaction_expired} ({@code max_transaction_ms}) or
 * {@code transaction_lost} (a restart). Begin a new transaction.
 */
public class TransactionAbortedException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /** See {@link LeaseholdException#LeaseholdException(String, String, int)}. */
  public TransactionAbortedException(String code, String message, int status) {
    super(code, message, status);
  }
}
