//! Events ordered by time, ties in the order they were scheduled: the one
//! queue both the simulator and the real-time emulator run on, and what makes
//! a simulation deterministic.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::Nanos;

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    scheduled: u64,
}

struct Entry<E> {
    at: Nanos,
    sequence: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.sequence) == (other.at, other.sequence)
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    /// Reversed: `BinaryHeap` is a max-heap and the earliest event must come
    /// out first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.sequence).cmp(&(self.at, self.sequence))
    }
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            scheduled: 0,
        }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, at: Nanos, event: E) {
        self.scheduled += 1;
        self.heap.push(Entry {
            at,
            sequence: self.scheduled,
            event,
        });
    }

    /// The earliest event, and when it is due.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        self.heap.pop().map(|e| (e.at, e.event))
    }

    /// The earliest event if it is due at or before `until`.
    pub fn pop_due(&mut self, until: Nanos) -> Option<(Nanos, E)> {
        if self.next_time()? <= until {
            self.pop()
        } else {
            None
        }
    }

    /// When the earliest event is due.
    pub fn next_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|e| e.at)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_ties_in_scheduling_order() {
        let mut q = EventQueue::new();
        q.push(30, "c");
        q.push(10, "a1");
        q.push(20, "b");
        q.push(10, "a2");
        assert_eq!(q.next_time(), Some(10));
        assert_eq!(q.pop_due(5), None);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(10, "a1"), (10, "a2"), (20, "b"), (30, "c")]);
        assert!(q.is_empty());
    }
}
