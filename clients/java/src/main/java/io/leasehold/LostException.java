package io.leasehold;

/** A handle used after its lease or lock was lost (a save through a lost checkout). */
public class LostException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /** See {@link LeaseholdException#LeaseholdException(String, String, int)}. */
  public LostException(String code, String message, int status) {
    super(code, message, status);
  }
}
