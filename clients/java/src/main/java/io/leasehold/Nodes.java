package io.leasehold;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The cluster's nodes: the one believed to lead is asked first, nodes that could not be
 * connected (or did not answer in time) last, until they answer again. Thread-safe.
 */
final class Nodes {
  static final int MAX_NODES = 32;
  private final List<String> urls = new ArrayList<>();
  private final Set<String> demoted = new HashSet<>();
  private String leader;
  private volatile List<String> order = List.of();

  Nodes(List<String> urls) {
    this.urls.addAll(urls);
    this.leader = urls.get(0);
    reorder();
  }

  /** Parses "http://a:7070,http://b:7070" into scheme://host:port nodes; bad_url when none. */
  static List<String> parse(String url) {
    List<String> nodes = new ArrayList<>();
    for (String part : url.split(",")) {
      String p = part.strip();
      if (p.isEmpty()) {
        continue;
      }
      String node = origin(p);
      if (node == null) {
        throw new LeaseholdException("bad_url", "not an http(s) URL: " + p, 0);
      }
      nodes.add(node);
    }
    if (nodes.isEmpty()) {
      throw new LeaseholdException("bad_url", "no URL given", 0);
    }
    return nodes;
  }

  /**
   * scheme://authority of an http(s) URL, without the scheme's default port (80, 443) so that a
   * node is one node however it is written; null when not an http(s) URL.
   */
  static String origin(String url) {
    try {
      URI u = URI.create(url);
      String scheme = u.getScheme();
      String authority = u.getRawAuthority();
      if (scheme == null || authority == null
          || !(scheme.equals("http") || scheme.equals("https"))) {
        return null;
      }
      int port = u.getPort();
      if ((scheme.equals("https") && port == 443) || (scheme.equals("http") && port == 80)) {
        authority = authority.substring(0, authority.length() - (":" + port).length());
      }
      return scheme + "://" + authority;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private void reorder() {
    List<String> first = new ArrayList<>();
    List<String> last = new ArrayList<>();
    for (String u : urls) {
      (demoted.contains(u) ? last : first).add(u);
    }
    if (first.remove(leader)) {
      first.add(0, leader);
    }
    first.addAll(last);
    order = List.copyOf(first);
  }

  List<String> order() {
    return order;
  }

  synchronized void answered(String node) {
    if (node.equals(leader) && !demoted.contains(node)) {
      return;
    }
    leader = node;
    demoted.remove(node);
    reorder();
  }

  synchronized void demote(String node) {
    demoted.add(node);
    reorder();
  }

  /** Takes {@code node} as the leader, learning it if new; false when 32 are known already. */
  synchronized boolean learn(String node) {
    if (!urls.contains(node)) {
      if (urls.size() >= MAX_NODES) {
        return false;
      }
      urls.add(node);
    }
    leader = node;
    reorder();
    return true;
  }
}
