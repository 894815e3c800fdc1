//! A fixed-segment worker's wait set: at most `capacity` connections are
//! waited on at once (WaitForMultipleObjects takes 64 handles); the rest
//! queue for a slot. A connection gives its slot up after each request it
//! was served, so every connection of the segment gets its turn, in order.

use std::collections::VecDeque;

/// The slots of one worker, holding connection ids of type `T`.
#[derive(Debug, Clone)]
pub struct Slots<T> {
    capacity: usize,
    held: Vec<T>,
    waiting: VecDeque<T>,
}

impl<T: Copy + PartialEq> Slots<T> {
    /// Empty, with `capacity` slots (at least 1).
    pub fn new(capacity: usize) -> Slots<T> {
        Slots {
            capacity: capacity.max(1),
            held: Vec::new(),
            waiting: VecDeque::new(),
        }
    }

    /// A new connection: it takes a free slot or queues.
    pub fn add(&mut self, c: T) {
        if self.held.len() < self.capacity {
            self.held.push(c);
        } else {
            self.waiting.push_back(c);
        }
    }

    /// The connections being waited on now.
    pub fn held(&self) -> &[T] {
        &self.held
    }

    /// Connections queued for a slot.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// `c` was served one request: when others wait, it goes to the back
    /// of the queue and the first waiting connection takes its slot.
    pub fn served(&mut self, c: T) {
        if let Some(next) = self.waiting.pop_front()
            && let Some(i) = self.held.iter().position(|x| *x == c)
        {
            self.held[i] = next;
            self.waiting.push_back(c);
        }
    }

    /// `c` closed: its slot goes to the first waiting connection.
    pub fn remove(&mut self, c: T) {
        if let Some(i) = self.held.iter().position(|x| *x == c) {
            match self.waiting.pop_front() {
                Some(next) => self.held[i] = next,
                None => {
                    self.held.swap_remove(i);
                }
            }
        } else {
            self.waiting.retain(|x| *x != c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_capacity_are_waited_on_and_turns_rotate() {
        let mut s = Slots::new(2);
        for c in 1..=4 {
            s.add(c);
        }
        assert_eq!(s.held(), &[1, 2]);
        assert_eq!(s.waiting(), 2);
        s.served(1);
        assert_eq!(s.held(), &[3, 2]);
        s.served(2);
        assert_eq!(s.held(), &[3, 4]);
        s.served(3);
        assert_eq!(s.held(), &[1, 4], "1 had waited longest");
        s.remove(4);
        assert_eq!(s.held(), &[1, 2]);
        s.remove(3);
        assert_eq!(s.waiting(), 0);
        s.remove(1);
        assert_eq!(s.held(), &[2]);
        // Without waiters a served connection keeps its slot.
        s.served(2);
        assert_eq!(s.held(), &[2]);
    }

    #[test]
    fn every_connection_is_held_or_waiting_exactly_once() {
        let mut s = Slots::new(3);
        for c in 0..10u32 {
            s.add(c);
        }
        for step in 0..200u32 {
            let held = s.held().to_vec();
            s.served(held[(step as usize * 7) % held.len()]);
            if step % 50 == 0 {
                s.remove(step / 50);
            }
            let mut all: Vec<u32> = s.held().to_vec();
            all.extend(s.waiting.iter().copied());
            all.sort_unstable();
            let n = all.len();
            all.dedup();
            assert_eq!(all.len(), n, "duplicates at step {step}");
            assert!(s.held().len() <= 3);
        }
    }
}
