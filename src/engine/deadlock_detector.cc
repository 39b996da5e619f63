#include "engine/deadlock_detector.h"

namespace leasehold::engine {

void DeadlockDetector::AppendBlockers(const Waiter* w,
                                      std::vector<Session*>& out) {
  const Resource* r = w->resource;
  if (r->limit != 0) {  // a semaphore: strictly FIFO
    for (const Grant* g = r->grants; g != nullptr; g = g->resource_next) {
      if (g->session != w->session) out.push_back(g->session);
    }
    for (const Waiter* q = r->queue_head; q != nullptr && q != w; q = q->next) {
      if (q->session != w->session) out.push_back(q->session);
    }
    return;
  }
  for (const Grant* g = r->grants; g != nullptr; g = g->resource_next) {
    if (g->session != w->session && !Compatible(g->mode, w->target)) {
      out.push_back(g->session);
    }
  }
  if (w->conversion) return;  // conversions wait only on granted modes
  for (const Waiter* q = r->queue_head; q != nullptr && q != w; q = q->next) {
    if (q->session != w->session && !Compatible(q->target, w->target)) {
      out.push_back(q->session);
    }
  }
}

std::optional<std::vector<CycleEdge>> DeadlockDetector::FindCycle(
    Session* start) {
  ++epoch_;
  last_visited_ = 1;
  stack_.clear();
  blockers_.clear();
  // No edge leads into a session that holds nothing and has nobody queued
  // behind it, so no cycle can pass through it.
  if (start->total_grants() == 0 && start->waiting->next == nullptr) {
    return std::nullopt;
  }
  scanned_.clear();
  auto push = [this](Session* s) {
    s->visited_epoch = epoch_;
    const std::size_t begin = blockers_.size();
    const Waiter* w = s->waiting;
    bool skip = false;
    // Only a resource with several waiters can repeat work.
    if (!w->conversion && (w->prev != nullptr || w->next != nullptr)) {
      // A non-conversion waiter's blockers are a subset of those of any
      // later non-conversion waiter on the same resource with the same
      // target: if one was listed, these are reachable already.
      WaitId& upto = scanned_[w->resource][static_cast<std::size_t>(w->target)];
      if (upto >= w->id) {
        skip = true;
      } else {
        upto = w->id;
      }
    }
    if (!skip) AppendBlockers(w, blockers_);
    stack_.push_back(Frame{s, begin, blockers_.size()});
  };
  push(start);
  while (!stack_.empty()) {
    Frame& top = stack_.back();
    if (top.next == top.end) {
      // Done with this session; its blockers sit past its parent's.
      stack_.pop_back();
      if (!stack_.empty()) blockers_.resize(stack_.back().end);
      continue;
    }
    Session* next = blockers_[top.next++];
    if (next == start) {
      std::vector<CycleEdge> cycle;
      cycle.reserve(stack_.size());
      bool semaphore = false;
      for (const Frame& f : stack_) {
        const Waiter* w = f.session->waiting;
        semaphore |= w->resource->limit != 0;
        cycle.push_back(CycleEdge{f.session, blockers_[f.next - 1], w->resource,
                                  w->target, w->permits});
      }
      if (semaphore) return Reduce(start);
      return cycle;
    }
    if (next->visited_epoch == epoch_) continue;
    next->visited_epoch = epoch_;
    ++last_visited_;
    if (next->waiting != nullptr) push(next);
  }
  return std::nullopt;
}

std::optional<std::vector<CycleEdge>> DeadlockDetector::Reduce(Session* start) {
  // Everyone the start waits for, directly or not; those waiting may be
  // stuck, the others will finish.
  std::vector<Session*> reached{start};
  std::unordered_set<const Session*> seen{start};
  std::unordered_set<const Session*> stuck;
  std::vector<Session*> blockers;
  for (std::size_t i = 0; i < reached.size(); ++i) {
    const Waiter* w = reached[i]->waiting;
    if (w == nullptr) continue;
    stuck.insert(reached[i]);
    blockers.clear();
    AppendBlockers(w, blockers);
    for (Session* b : blockers) {
      if (seen.insert(b).second) reached.push_back(b);
    }
  }
  last_visited_ = reached.size();
  for (bool finished_one = true; finished_one;) {
    finished_one = false;
    for (auto it = stuck.begin(); it != stuck.end();) {
      if (CouldFinish((*it)->waiting, stuck)) {
        it = stuck.erase(it);
        finished_one = true;
      } else {
        ++it;
      }
    }
  }
  if (!stuck.contains(start)) return std::nullopt;
  // A cycle through the start among the stuck: every stuck waiter has a
  // stuck blocker (else it could finish), and the start's wait is what
  // made them stuck, so a walk along stuck blockers comes back to it.
  struct Step {
    Session* session;
    std::vector<Session*> next;
    std::size_t at = 0;
  };
  std::vector<Step> path;
  std::unordered_set<const Session*> visited{start};
  const auto enter = [&](Session* s) {
    Step step{s, {}};
    AppendBlockers(s->waiting, step.next);
    std::erase_if(step.next, [&](Session* b) { return !stuck.contains(b); });
    path.push_back(std::move(step));
  };
  enter(start);
  while (!path.empty()) {
    Step& top = path.back();
    if (top.at == top.next.size()) {
      path.pop_back();
      continue;
    }
    Session* next = top.next[top.at++];
    if (next == start) {
      std::vector<CycleEdge> cycle;
      for (const Step& step : path) {
        const Waiter* w = step.session->waiting;
        cycle.push_back(CycleEdge{step.session, step.next[step.at - 1],
                                  w->resource, w->target, w->permits});
      }
      return cycle;
    }
    if (visited.insert(next).second) enter(next);
  }
  return std::nullopt;  // not reached while the invariant holds
}

bool DeadlockDetector::CouldFinish(
    const Waiter* w, const std::unordered_set<const Session*>& stuck) {
  const Resource* r = w->resource;
  if (r->limit == 0) {
    std::vector<Session*> blockers;
    AppendBlockers(w, blockers);
    for (const Session* b : blockers) {
      if (stuck.contains(b)) return false;
    }
    return true;
  }
  for (const Waiter* q = r->queue_head; q != nullptr && q != w; q = q->next) {
    if (stuck.contains(q->session)) return false;
  }
  std::uint64_t held = w->permits;
  for (const Grant* g = r->grants; g != nullptr; g = g->resource_next) {
    if (g->session == w->session || stuck.contains(g->session)) {
      held += g->count;
    }
  }
  return held <= r->limit;
}

}  // namespace leasehold::engine
