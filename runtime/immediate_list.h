// runtime/immediate_list.h — intrusive lock-free MPSC FIFO of processes (Vyukov's queue).
//
// Any thread pushes (one atomic exchange, wait-free); one consumer at a time pops. The executor
// enforces "one consumer" with a try-lock flag, so workers never block on the list: a worker
// that loses the flag simply scans elsewhere. Nodes are embedded in the processes (ListNode),
// so pushing never allocates. A stub node keeps the list non-empty for the algorithm.
//
// pop() may return nullptr while a push is half done (the producer has swung `head` but not yet
// linked its predecessor); `pending()` still counts that item, so callers retry instead of
// parking. Memory orders: push publishes the node with release on the predecessor's `next`;
// pop reads `next` with acquire, so everything written before push is visible after pop.
#pragma once

#include <atomic>
#include <cstdint>

namespace tilec::runtime {

class Process;

struct ListNode {
  std::atomic<ListNode*> next{nullptr};
  Process* owner = nullptr;
};

class ImmediateList {
 public:
  ImmediateList();
  ImmediateList(const ImmediateList&) = delete;
  ImmediateList& operator=(const ImmediateList&) = delete;

  // Any thread. Counts the item as pending before linking it.
  void push(ListNode& node);

  // Takes the consumer flag; returns false when another thread holds it.
  bool try_acquire_consumer() { return !consumer_busy_.exchange(true, std::memory_order_acquire); }
  void release_consumer() { consumer_busy_.store(false, std::memory_order_release); }

  // Consumer only (holding the flag). nullptr when empty or a push is still linking.
  Process* pop();

  // Items pushed and not yet popped (including half-linked ones). Any thread.
  std::int64_t pending() const {
    // Popped first: every item counted there was counted as pushed before.
    const std::int64_t popped = popped_.load(std::memory_order_seq_cst);
    return pushed_.load(std::memory_order_seq_cst) - popped;
  }

 private:
  alignas(64) std::atomic<ListNode*> head_;  // producers swing this
  alignas(64) ListNode* tail_;               // consumer only
  ListNode stub_;
  std::atomic<bool> consumer_busy_{false};
  // Pushed by any producer, popped by the one consumer (a plain store under the flag): two lines,
  // so producers and the consumer never write the same one.
  alignas(64) std::atomic<std::int64_t> pushed_{0};
  alignas(64) std::atomic<std::int64_t> popped_{0};
};

}  // namespace tilec::runtime
