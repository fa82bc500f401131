// runtime/immediate_list.cpp — Vyukov's intrusive MPSC queue; see immediate_list.h.
#include "runtime/immediate_list.h"

namespace tilec::runtime {

ImmediateList::ImmediateList() : head_(&stub_), tail_(&stub_) {}

void ImmediateList::push(ListNode& node) {
  // seq_cst: with the parked-mask load after it, one side of the executor's Dekker pairing.
  pushed_.fetch_add(1, std::memory_order_seq_cst);
  node.next.store(nullptr, std::memory_order_relaxed);
  ListNode* previous = head_.exchange(&node, std::memory_order_acq_rel);
  previous->next.store(&node, std::memory_order_release);
}

Process* ImmediateList::pop() {
  ListNode* tail = tail_;
  ListNode* next = tail->next.load(std::memory_order_acquire);
  if (tail == &stub_) {
    if (next == nullptr) return nullptr;
    tail_ = next;
    tail = next;
    next = next->next.load(std::memory_order_acquire);
  }
  if (next != nullptr) {
    tail_ = next;
    popped_.store(popped_.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
    return tail->owner;
  }
  // `tail` is the last linked node. If head moved past it, a producer is mid-push: retry later.
  if (tail != head_.load(std::memory_order_acquire)) return nullptr;
  // Re-insert the stub behind `tail` so `tail` can be handed out. The stub is not counted.
  stub_.next.store(nullptr, std::memory_order_relaxed);
  ListNode* previous = head_.exchange(&stub_, std::memory_order_acq_rel);
  previous->next.store(&stub_, std::memory_order_release);
  next = tail->next.load(std::memory_order_acquire);
  if (next != nullptr) {
    tail_ = next;
    popped_.store(popped_.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
    return tail->owner;
  }
  return nullptr;
}

}  // namespace tilec::runtime
