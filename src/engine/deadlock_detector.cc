#include "engine/deadlock_detector.h"

namespace leasehold::engine {

void DeadlockDetector::AppendBlockers(const Waiter* w,
                                      std::vector<Session*>& out) {
  const Resource* r = w->resource;
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
      for (const Frame& f : stack_) {
        cycle.push_back(CycleEdge{f.session, blockers_[f.next - 1],
                                  f.session->waiting->resource,
                                  f.session->waiting->target});
      }
      return cycle;
    }
    if (next->visited_epoch == epoch_) continue;
    next->visited_epoch = epoch_;
    ++last_visited_;
    if (next->waiting != nullptr) push(next);
  }
  return std::nullopt;
}

}  // namespace leasehold::engine
