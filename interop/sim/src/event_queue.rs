//! Events ordered by time, ties in the order they were scheduled: the one
//! queue both the simulator and the real-time emulator run on, and what makes
//! a simulation deterministic.
//!
//! Besides plain events the queue holds two kinds the simulator has many of,
//! kept out of the heap so that it stays small (a few entries instead of one
//! per datagram in flight):
//! - *lanes*: events pushed in time order into one lane (the datagrams on one
//!   link's wire, which a FIFO wire delivers in the order they left) wait in
//!   that lane's FIFO; only its first is in the heap;
//! - *timers*: one per owner (an endpoint's next wake-up), set again and
//!   again; setting one replaces its previous time, so no stale entries pile
//!   up ([`Timers`]).
//!
//! Every entry, wherever it waits, carries the sequence number it got when
//! it was scheduled, and the queue always yields the smallest (time,
//! sequence) of all: the order is the one a single heap of everything gives.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::time::Nanos;

/// The heap orders small keys; the events themselves wait in slots that
/// are reused (or in their lane), so an event (a datagram of a hundred
/// bytes) is written once and read once instead of being moved at every
/// level of the heap on every push and pop.
pub struct EventQueue<E> {
    heap: BinaryHeap<Key>,
    slots: Vec<Option<E>>,
    /// Slots free for the next push.
    free: Vec<u32>,
    lanes: Vec<VecDeque<(Nanos, u64, E)>>,
    /// Events waiting in lanes.
    in_lanes: usize,
    timers: Timers,
    scheduled: u64,
}

/// What comes out of the queue: an event, or a timer that is due.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Due<E> {
    Event(E),
    Timer(usize),
}

#[derive(Clone, Copy)]
enum Place {
    Slot(u32),
    /// The first event of this lane.
    Lane(u32),
}

#[derive(Clone, Copy)]
struct Key {
    at: Nanos,
    sequence: u64,
    place: Place,
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
    /// the place never decides.
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
            lanes: Vec::new(),
            in_lanes: 0,
            timers: Timers::default(),
            scheduled: 0,
        }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    fn next_sequence(&mut self) -> u64 {
        self.scheduled += 1;
        self.scheduled
    }

    pub fn push(&mut self, at: Nanos, event: E) {
        let sequence = self.next_sequence();
        self.push_in_slot(at, sequence, event);
    }

    fn push_in_slot(&mut self, at: Nanos, sequence: u64, event: E) {
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
            sequence,
            place: Place::Slot(slot),
        });
    }

    /// Schedules `event` as [`Self::push`] does, waiting in `lane` if it is
    /// due no earlier than the lane's last event (the usual case for a lane
    /// whose events come in time order), else in the heap. Either way it
    /// comes out in the same place of the order.
    pub fn push_in_lane(&mut self, lane: usize, at: Nanos, event: E) {
        let sequence = self.next_sequence();
        if lane >= self.lanes.len() {
            self.lanes.resize_with(lane + 1, VecDeque::new);
        }
        let queue = &mut self.lanes[lane];
        match queue.back() {
            Some(&(last, _, _)) if at < last => self.push_in_slot(at, sequence, event),
            Some(_) => {
                queue.push_back((at, sequence, event));
                self.in_lanes += 1;
            }
            None => {
                queue.push_back((at, sequence, event));
                self.in_lanes += 1;
                self.heap.push(Key {
                    at,
                    sequence,
                    place: Place::Lane(u32::try_from(lane).expect("fewer than 2^32 lanes")),
                });
            }
        }
    }

    /// Sets timer `timer` to go off at `at`, in place of any time it had
    /// (`None`: not at all). Ties with events fall in the order of the
    /// calls that scheduled them, as for a push.
    pub fn set_timer(&mut self, timer: usize, at: Option<Nanos>) {
        let due = at.map(|at| (at, self.next_sequence()));
        self.timers.set(timer, due);
    }

    /// The earliest event or timer, and when it is due.
    pub fn pop_next(&mut self) -> Option<(Nanos, Due<E>)> {
        let event = self.heap.peek().map(|k| (k.at, k.sequence));
        match (event, self.timers.peek()) {
            (Some(e), Some((at, sequence, _))) if (at, sequence) < e => self.pop_timer(),
            (None, Some(_)) => self.pop_timer(),
            (Some(_), _) => self.pop_event().map(|(at, e)| (at, Due::Event(e))),
            (None, None) => None,
        }
    }

    fn pop_timer(&mut self) -> Option<(Nanos, Due<E>)> {
        let (at, _, timer) = self.timers.pop()?;
        Some((at, Due::Timer(timer)))
    }

    fn pop_event(&mut self) -> Option<(Nanos, E)> {
        let key = self.heap.pop()?;
        match key.place {
            Place::Slot(slot) => {
                self.free.push(slot);
                let event = self.slots[slot as usize]
                    .take()
                    .expect("every key names a filled slot");
                Some((key.at, event))
            }
            Place::Lane(lane) => {
                let queue = &mut self.lanes[lane as usize];
                let (at, _, event) = queue.pop_front().expect("a lane's key names its first");
                self.in_lanes -= 1;
                if let Some(&(at, sequence, _)) = queue.front() {
                    self.heap.push(Key {
                        at,
                        sequence,
                        place: Place::Lane(lane),
                    });
                }
                Some((at, event))
            }
        }
    }

    /// The earliest event, and when it is due. For queues that use no
    /// timers (the emulator's); see [`Self::pop_next`].
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        debug_assert!(self.timers.is_empty(), "a queue with timers: pop_next");
        self.pop_event()
    }

    /// Drops every event for which `keep` is false. The order of the others
    /// stays as it was: it is their (time, sequence), not their place in
    /// the heap.
    pub fn retain(&mut self, mut keep: impl FnMut(&E) -> bool) {
        for queue in &mut self.lanes {
            let before = queue.len();
            queue.retain(|(_, _, e)| keep(e));
            self.in_lanes -= before - queue.len();
        }
        let mut keys = std::mem::take(&mut self.heap).into_vec();
        keys.retain(|key| match key.place {
            Place::Slot(index) => {
                let slot = &mut self.slots[index as usize];
                if slot.as_ref().is_some_and(&mut keep) {
                    true
                } else {
                    *slot = None;
                    self.free.push(index);
                    false
                }
            }
            // Put back below from what is left in the lanes.
            Place::Lane(_) => false,
        });
        for (lane, queue) in self.lanes.iter().enumerate() {
            if let Some(&(at, sequence, _)) = queue.front() {
                keys.push(Key {
                    at,
                    sequence,
                    place: Place::Lane(lane as u32),
                });
            }
        }
        self.heap = BinaryHeap::from(keys);
    }

    /// The earliest event if it is due at or before `until`. For queues
    /// that use no timers, as [`Self::pop`].
    pub fn pop_due(&mut self, until: Nanos) -> Option<(Nanos, E)> {
        if self.next_time()? <= until {
            self.pop()
        } else {
            None
        }
    }

    /// When the earliest event or timer is due.
    pub fn next_time(&self) -> Option<Nanos> {
        let event = self.heap.peek().map(|e| e.at);
        let timer = self.timers.peek().map(|t| t.0);
        match (event, timer) {
            (Some(e), Some(t)) => Some(e.min(t)),
            (e, t) => e.or(t),
        }
    }

    /// Events and timers pending.
    pub fn len(&self) -> usize {
        self.heap.len() - self.lanes.iter().filter(|q| !q.is_empty()).count()
            + self.in_lanes
            + self.timers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.timers.is_empty()
    }
}

/// Timers by number, each set to one (time, sequence) or to nothing, the
/// earliest on top: a binary heap that knows where each timer sits, so that
/// setting one again moves it instead of leaving a stale copy behind.
#[derive(Default)]
struct Timers {
    /// (time, sequence, timer), a min-heap on (time, sequence).
    heap: Vec<(Nanos, u64, usize)>,
    /// Per timer: its index in `heap`, if set.
    position: Vec<Option<usize>>,
}

impl Timers {
    fn len(&self) -> usize {
        self.heap.len()
    }

    fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    fn peek(&self) -> Option<(Nanos, u64, usize)> {
        self.heap.first().copied()
    }

    fn set(&mut self, timer: usize, due: Option<(Nanos, u64)>) {
        if timer >= self.position.len() {
            self.position.resize(timer + 1, None);
        }
        match (self.position[timer], due) {
            (Some(index), Some((at, sequence))) => {
                self.heap[index] = (at, sequence, timer);
                let index = self.sift_up(index);
                self.sift_down(index);
            }
            (None, Some((at, sequence))) => {
                self.heap.push((at, sequence, timer));
                self.position[timer] = Some(self.heap.len() - 1);
                self.sift_up(self.heap.len() - 1);
            }
            (Some(index), None) => self.remove_at(index),
            (None, None) => {}
        }
    }

    fn pop(&mut self) -> Option<(Nanos, u64, usize)> {
        let top = self.peek()?;
        self.remove_at(0);
        Some(top)
    }

    fn remove_at(&mut self, index: usize) {
        let last = self.heap.len() - 1;
        self.swap(index, last);
        let (_, _, removed) = self.heap.pop().expect("not empty");
        self.position[removed] = None;
        if index < self.heap.len() {
            let index = self.sift_up(index);
            self.sift_down(index);
        }
    }

    fn earlier(&self, a: usize, b: usize) -> bool {
        (self.heap[a].0, self.heap[a].1) < (self.heap[b].0, self.heap[b].1)
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.position[self.heap[a].2] = Some(a);
        self.position[self.heap[b].2] = Some(b);
    }

    fn sift_up(&mut self, mut index: usize) -> usize {
        while index > 0 {
            let parent = (index - 1) / 2;
            if !self.earlier(index, parent) {
                break;
            }
            self.swap(index, parent);
            index = parent;
        }
        index
    }

    fn sift_down(&mut self, mut index: usize) {
        loop {
            let (left, right) = (2 * index + 1, 2 * index + 2);
            let mut first = index;
            if left < self.heap.len() && self.earlier(left, first) {
                first = left;
            }
            if right < self.heap.len() && self.earlier(right, first) {
                first = right;
            }
            if first == index {
                return;
            }
            self.swap(index, first);
            index = first;
        }
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

    /// What the queue must give: every pending entry in one sorted set,
    /// sequence numbers given in the order of the calls, a timer's entry
    /// replaced when it is set again.
    #[derive(Default)]
    struct Reference {
        pending: std::collections::BTreeSet<(Nanos, u64, Due<u64>)>,
        timers: std::collections::HashMap<usize, (Nanos, u64)>,
        sequence: u64,
    }

    impl Reference {
        fn push(&mut self, at: Nanos, id: u64) {
            self.sequence += 1;
            self.pending.insert((at, self.sequence, Due::Event(id)));
        }

        fn set_timer(&mut self, timer: usize, at: Option<Nanos>) {
            if let Some((old, sequence)) = self.timers.remove(&timer) {
                self.pending.remove(&(old, sequence, Due::Timer(timer)));
            }
            if let Some(at) = at {
                self.sequence += 1;
                self.timers.insert(timer, (at, self.sequence));
                self.pending.insert((at, self.sequence, Due::Timer(timer)));
            }
        }

        fn pop(&mut self) -> Option<(Nanos, Due<u64>)> {
            let (at, _, due) = self.pending.pop_first()?;
            if let Due::Timer(timer) = due {
                self.timers.remove(&timer);
            }
            Some((at, due))
        }
    }

    #[test]
    fn lanes_and_timers_come_out_as_one_sorted_set_of_everything() {
        let mut q = EventQueue::new();
        let mut reference = Reference::default();
        let mut x = 11u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        let mut now = 0;
        let mut lane_last = [0u64; 3];
        for id in 0..20_000u64 {
            let r = next();
            let at = now + next() % 40;
            match r % 8 {
                0 | 1 => {
                    q.push(at, id);
                    reference.push(at, id);
                }
                2..=4 => {
                    // Mostly in time order per lane, sometimes not (a
                    // reordering wire): those go to the heap.
                    let lane = (r / 8 % 3) as usize;
                    let at = if next() % 8 != 0 {
                        lane_last[lane].max(at)
                    } else {
                        at
                    };
                    lane_last[lane] = lane_last[lane].max(at);
                    q.push_in_lane(lane, at, id);
                    reference.push(at, id);
                }
                5 => {
                    let timer = (r / 8 % 5) as usize;
                    let at = (next() % 8 != 0).then_some(at);
                    q.set_timer(timer, at);
                    reference.set_timer(timer, at);
                }
                _ => {
                    let popped = q.pop_next();
                    assert_eq!(popped, reference.pop(), "at step {id}");
                    if let Some((at, _)) = popped {
                        now = at;
                    }
                }
            }
            assert_eq!(q.len(), reference.pending.len());
            assert_eq!(
                q.next_time(),
                reference.pending.first().map(|p| p.0),
                "at step {id}"
            );
        }
        while let Some(popped) = q.pop_next() {
            assert_eq!(Some(popped), reference.pop());
        }
        assert!(reference.pending.is_empty() && q.is_empty());
        assert!(q.heap.len() < 64, "lanes kept the heap small");
    }

    #[test]
    fn retain_keeps_the_order_of_lane_events() {
        let mut q = EventQueue::new();
        let mut expected = Vec::new();
        for i in 0..200u64 {
            let at = i / 3;
            q.push_in_lane((i % 2) as usize, at, i);
            if i % 5 != 0 {
                expected.push((at, i));
            }
        }
        q.retain(|i| i % 5 != 0);
        assert_eq!(q.len(), expected.len());
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, expected);
    }
}
