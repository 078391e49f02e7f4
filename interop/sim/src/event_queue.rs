//! Events ordered by time, ties in the order they were scheduled: the one
//! queue both the simulator and the real-time emulator run on, and what makes
//! a simulation deterministic.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::Nanos;

/// The heap orders small keys; the events themselves wait in slots that
/// are reused, so an event (a datagram of a hundred bytes) is written once
/// and read once instead of being moved at every level of the heap on
/// every push and pop.
pub struct EventQueue<E> {
    heap: BinaryHeap<Key>,
    slots: Vec<Option<E>>,
    /// Slots free for the next push.
    free: Vec<u32>,
    scheduled: u64,
}

#[derive(Clone, Copy)]
struct Key {
    at: Nanos,
    sequence: u64,
    slot: u32,
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.sequence) == (other.at, other.sequence)
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    /// Reversed: `BinaryHeap` is a max-heap and the earliest event must come
    /// out first. Sequence numbers are unique, so the order is total and
    /// the slot never decides.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.sequence).cmp(&(self.at, self.sequence))
    }
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
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
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(event);
                slot
            }
            None => {
                let slot = u32::try_from(self.slots.len())
                    .expect("fewer than 2^32 events pending at once");
                self.slots.push(Some(event));
                slot
            }
        };
        self.heap.push(Key {
            at,
            sequence: self.scheduled,
            slot,
        });
    }

    /// The earliest event, and when it is due.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let key = self.heap.pop()?;
        self.free.push(key.slot);
        let event = self.slots[key.slot as usize]
            .take()
            .expect("every key names a filled slot");
        Some((key.at, event))
    }

    /// Drops every event for which `keep` is false. The order of the others
    /// stays as it was: it is their (time, sequence), not their place in
    /// the heap.
    pub fn retain(&mut self, mut keep: impl FnMut(&E) -> bool) {
        let mut keys = std::mem::take(&mut self.heap).into_vec();
        keys.retain(|key| {
            let slot = &mut self.slots[key.slot as usize];
            if slot.as_ref().is_some_and(&mut keep) {
                true
            } else {
                *slot = None;
                self.free.push(key.slot);
                false
            }
        });
        self.heap = BinaryHeap::from(keys);
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

    #[test]
    fn reused_slots_keep_the_order_of_a_sorted_reference() {
        // Pushes and pops interleaved, so that slots are freed and reused;
        // the reference is every pushed (time, sequence) sorted.
        let mut q = EventQueue::new();
        let mut reference = std::collections::BTreeSet::new();
        let mut x = 7u64;
        for sequence in 0..5_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = (x >> 40) % 64;
            q.push(at, sequence);
            reference.insert((at, sequence));
            if x.is_multiple_of(3) {
                let (at, sequence) = q.pop().unwrap();
                let first = reference.pop_first().unwrap();
                assert_eq!((at, sequence), first);
            }
        }
        while let Some((at, sequence)) = q.pop() {
            assert_eq!(Some((at, sequence)), reference.pop_first());
        }
        assert!(reference.is_empty());
        assert!(
            q.slots.len() < 5_000,
            "slots were reused: {}",
            q.slots.len()
        );
    }

    #[test]
    fn retain_drops_only_what_it_is_told_and_keeps_the_order() {
        let mut q = EventQueue::new();
        let mut expected = Vec::new();
        for i in 0..300u64 {
            let at = (i * 37) % 50;
            q.push(at, i);
            if i % 3 != 0 {
                expected.push((at, i));
            }
        }
        q.retain(|i| i % 3 != 0);
        assert_eq!(q.len(), expected.len());
        // Freed slots are taken again, and the new events sort among the
        // kept ones by time, then by when they were pushed.
        q.push(10, 1000);
        q.push(10, 1001);
        expected.push((10, 1000));
        expected.push((10, 1001));
        // Events were pushed in the order of their numbers, so (time,
        // number) is the order they must come out in: 1000 and 1001 after
        // every kept event at 10.
        let mut reference = expected;
        reference.sort_unstable();
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, reference);
        assert!(q.slots.len() <= 300, "{}", q.slots.len());
    }
}
