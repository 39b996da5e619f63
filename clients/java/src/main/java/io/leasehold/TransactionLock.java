package io.leasehold;

/**
 * An application lock owned by a {@link Transaction}: its commit or rollback releases it.
 *
 * @param ns the namespace
 * @param resource the resource locked
 * @param fence the grant's fence: pass it to the writes the lock guards
 * @param mode the combined mode the session holds, as the API spells it ({@code "Exclusive"},
 *     {@code "SharedIntentExclusive"}, ...)
 * @param count how many times the session holds it
 * @param waited whether it was granted after a wait
 */
public record TransactionLock(String ns, String resource, long fence, String mode, int count, boolean waited) {}
