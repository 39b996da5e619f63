/**
 * A ShedLock {@code LockProvider} backed by leasehold checkouts. ShedLock
 * ({@code net.javacrumbs.shedlock:shedlock-core}) is the application's dependency: this package
 * is usable only when it is on the classpath.
 */
package io.leasehold.shedlock;
