package io.leasehold;

/**
 * A checkout that is not renewed by the client (see {@link LeaseholdClient#lease}): it runs out
 * after its ttl unless renewed ({@link LeaseholdClient#renew}) or checked in
 * ({@link LeaseholdClient#checkin(Lease)}).
 *
 * @param ns the namespace
 * @param key the key leased
 * @param owner the owner others see
 * @param token the lease's token
 * @param fence the lease's fence
 */
public record Lease(String ns, String key, String owner, String token, long fence) {}
