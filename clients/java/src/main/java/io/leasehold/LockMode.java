package io.leasehold;

/** The lock modes of sp_getapplock; {@link #wire()} is the API's spelling. */
public enum LockMode {
  SHARED("Shared"),
  UPDATE("Update"),
  INTENT_SHARED("IntentShared"),
  INTENT_EXCLUSIVE("IntentExclusive"),
  EXCLUSIVE("Exclusive");

  private final String wire;

  LockMode(String wire) {
    this.wire = wire;
  }

  /** The mode as the API spells it ({@code "Exclusive"}). */
  public String wire() {
    return wire;
  }

  /** The mode of the API's spelling, case-insensitive. */
  public static LockMode of(String wire) {
    for (LockMode m : values()) {
      if (m.wire.equalsIgnoreCase(wire) || m.name().equalsIgnoreCase(wire)) {
        return m;
      }
    }
    throw new IllegalArgumentException("not a lock mode: " + wire);
  }
}
