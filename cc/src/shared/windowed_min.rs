//! A minimum over the last few rounds, for delay baselines that must be
//! able to forget.
//!
//! Vegas's BaseRTT is the minimum of all samples (004, section 3.5.2), which
//! never notices that a path's fixed delay went up (a route change or a
//! satellite beam handover: 003 refreshes BaseRTT for exactly this reason).
//! A minimum over the last `rounds` rounds forgets an old path within that
//! many rounds, at the price that a queue standing for the whole window
//! becomes part of the baseline; whoever uses it must drain its queue now and
//! then (see `vegas_sat`'s base probe).

/// Smallest value seen in the round in progress and in each of the last
/// `rounds - 1` completed rounds. `rounds == 0` keeps the minimum forever.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowedMin<T: Copy + PartialOrd> {
    rounds: usize,
    /// Minimums of completed rounds, oldest first (at most `rounds - 1`).
    completed: std::collections::VecDeque<Option<T>>,
    current: Option<T>,
    /// `rounds == 0`: the all-time minimum.
    forever: Option<T>,
}

impl<T: Copy + PartialOrd> WindowedMin<T> {
    pub fn new(rounds: usize) -> Self {
        WindowedMin {
            rounds,
            completed: std::collections::VecDeque::with_capacity(rounds),
            current: None,
            forever: None,
        }
    }

    pub fn on_sample(&mut self, value: T) {
        if self.current.is_none_or(|c| value < c) {
            self.current = Some(value);
        }
        if self.forever.is_none_or(|c| value < c) {
            self.forever = Some(value);
        }
    }

    /// The round in progress ended; the oldest round beyond the window is
    /// forgotten.
    pub fn on_round_end(&mut self) {
        if self.rounds == 0 {
            self.current = None;
            return;
        }
        self.completed.push_back(self.current.take());
        while self.completed.len() >= self.rounds {
            self.completed.pop_front();
        }
    }

    /// The minimum over the window, `None` before any sample in it.
    pub fn get(&self) -> Option<T> {
        if self.rounds == 0 {
            return self.forever;
        }
        self.completed
            .iter()
            .flatten()
            .chain(self.current.iter())
            .fold(None, |m: Option<T>, &v| match m {
                Some(m) if m <= v => Some(m),
                _ => Some(v),
            })
    }

    /// The window's length in rounds (0: forever).
    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// Forgets everything and starts from `value` (a path change).
    pub fn reset_to(&mut self, value: T) {
        self.completed.clear();
        self.current = Some(value);
        self.forever = Some(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgets_rounds_beyond_the_window() {
        let mut m = WindowedMin::new(3);
        m.on_sample(5);
        m.on_round_end(); // [5]
        m.on_sample(9);
        m.on_round_end(); // [5, 9]
        assert_eq!(m.get(), Some(5));
        m.on_sample(8);
        m.on_round_end(); // 5 falls out: [9, 8]
        assert_eq!(m.get(), Some(8));
        m.on_sample(7); // current
        assert_eq!(m.get(), Some(7));
        m.on_round_end(); // [8, 7]
        m.on_round_end(); // [7, None]
        m.on_round_end(); // [None, None]
        assert_eq!(m.get(), None);
    }

    #[test]
    fn zero_rounds_keeps_the_all_time_minimum() {
        let mut m = WindowedMin::new(0);
        m.on_sample(4);
        for _ in 0..100 {
            m.on_round_end();
        }
        m.on_sample(6);
        assert_eq!(m.get(), Some(4));
    }

    #[test]
    fn reset_forgets_lower_values() {
        let mut m = WindowedMin::new(10);
        m.on_sample(1);
        m.on_round_end();
        m.reset_to(50);
        assert_eq!(m.get(), Some(50));
        m.on_sample(40);
        assert_eq!(m.get(), Some(40));
    }
}
