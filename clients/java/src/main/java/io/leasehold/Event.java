package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One event of a watch.
 *
 * @param type the event's type ({@code applock.granted}, {@code record.saved}, ...)
 * @param data the server's data object
 */
public record Event(String type, JsonNode data) {}
