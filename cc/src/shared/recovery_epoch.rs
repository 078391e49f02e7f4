//! One window reduction per recovery epoch.
//!
//! Several losses of one window of data are one congestion signal. Vegas
//! (004_039b3aff67042154.txt, section 3.3) "only decreases the congestion
//! window if the retransmitted segment was previously sent after the last
//! decrease"; NewReno's recovery, in QUIC's terms (RFC 9002 section 7.3.2),
//! does the same for Reno, Westwood+, Veno and VenoDB. A reduction at time T
//! opens an epoch:
//!
//! ```text
//! on a loss of a packet sent at s:   if s is after T: reduce, T = now   (a new epoch)
//!                                    else:            nothing           (same epoch)
//! on an ACK of packets sent at s_i:  if some s_i is after T: recovery ends
//! on a spurious reduction:           T = the reduction before T; recovery ends
//! ```
//!
//! While in recovery the algorithms do not grow the window, and those that
//! evaluate rounds of a [`RoundClock`] do not evaluate them (their RTTs
//! describe the old window); the end of recovery restarts the round clock
//! ([`RecoveryEpoch::on_ack_with_rounds`]). What a reduction is, and which
//! of an algorithm's decreases count as one, stays in the algorithm: it calls
//! [`RecoveryEpoch::begin`] where its paper decreases.

use std::time::Instant;

use crate::events::AckEvent;
use crate::shared::round_clock::{CompletedRound, RoundClock};

/// On which side of a reduction a packet sent at its very instant falls.
/// The one difference between the members of the family; each chooses it
/// where it creates its [`RecoveryEpoch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SentAtReduction {
    /// After it: the stack sends such a packet only after the controller has
    /// reacted, so it was sent with the reduced window. This crate's Vegas
    /// family (Vegas, Vegas-W, Veno, VenoDB) reads section 3.3 this way.
    CountsAsAfter,
    /// Before it, i.e. in the recovery period: RFC 9002's
    /// `InCongestionRecovery(sent_time)` is `sent_time <=
    /// congestion_recovery_start_time`. Westwood+ takes NewReno's recovery
    /// from there.
    CountsAsBefore,
}

/// What an ACK did to a [`RoundClock`] kept with a [`RecoveryEpoch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckedRound {
    /// The round in progress goes on.
    InProgress,
    /// The ACK ended recovery. The window changed, so what the round in
    /// progress measured is stale: the clock was restarted (as Linux restarts
    /// its Vegas round when loss recovery ends).
    RecoveryEnded,
    /// A round ended outside recovery: the algorithm evaluates it.
    Ended(CompletedRound),
    /// A round ended in recovery: its RTTs describe the window before the
    /// reduction, so it is not evaluated.
    EndedInRecovery(CompletedRound),
}

/// Recovery epochs: losses of packets sent before the last reduction belong
/// to it. The default counts a packet sent at the instant of a reduction as
/// sent after it ([`SentAtReduction::CountsAsAfter`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoveryEpoch {
    sent_at_reduction: SentAtReduction,
    last_reduction: Option<Instant>,
    /// Restored if the last reduction proves spurious.
    reduction_before_last: Option<Instant>,
    in_recovery: bool,
}

impl Default for RecoveryEpoch {
    fn default() -> Self {
        Self::new(SentAtReduction::CountsAsAfter)
    }
}

impl RecoveryEpoch {
    /// No reduction yet, not in recovery.
    pub fn new(sent_at_reduction: SentAtReduction) -> Self {
        RecoveryEpoch {
            sent_at_reduction,
            last_reduction: None,
            reduction_before_last: None,
            in_recovery: false,
        }
    }

    /// Was a packet sent at `time_sent` sent after the last reduction (or is
    /// there none)? A loss of such a packet begins a new epoch; an ACK of one
    /// ends recovery.
    pub fn sent_after_reduction(&self, time_sent: Instant) -> bool {
        match (self.last_reduction, self.sent_at_reduction) {
            (None, _) => true,
            (Some(t), SentAtReduction::CountsAsAfter) => time_sent >= t,
            (Some(t), SentAtReduction::CountsAsBefore) => time_sent > t,
        }
    }

    /// A reduction at `now` begins a new epoch, in recovery.
    pub fn begin(&mut self, now: Instant) {
        self.reduction_before_last = self.last_reduction;
        self.last_reduction = Some(now);
        self.in_recovery = true;
    }

    /// An ACK acknowledged packets sent at `times_sent`. Returns whether it
    /// ended recovery (NewReno's "full" acknowledgement): it did if the
    /// controller was in recovery and one of them was sent after the
    /// reduction.
    pub fn on_ack(&mut self, mut times_sent: impl Iterator<Item = Instant>) -> bool {
        if self.in_recovery && times_sent.any(|t| self.sent_after_reduction(t)) {
            self.in_recovery = false;
            return true;
        }
        false
    }

    /// [`RecoveryEpoch::on_ack`], and `ack` counted in `rounds` unless it
    /// ended recovery, in which case `rounds` restarts at `ack.now`.
    // Inlined into the skeleton's ACK path, with the round clock's common
    // path: a call per ACK costs about what the work does (a plain hint was
    // not taken).
    #[inline(always)]
    pub fn on_ack_with_rounds(
        &mut self,
        ack: &AckEvent<'_>,
        rounds: &mut RoundClock,
    ) -> AckedRound {
        // Whether any packet was sent after the reduction is whether the
        // latest one was.
        if self.on_ack(ack.summary.latest_time_sent.into_iter()) {
            rounds.restart(ack.now);
            return AckedRound::RecoveryEnded;
        }
        match rounds.on_ack(ack) {
            None => AckedRound::InProgress,
            Some(round) if self.in_recovery => AckedRound::EndedInRecovery(round),
            Some(round) => AckedRound::Ended(round),
        }
    }

    /// The current epoch also covers packets sent up to `now` (if it did not
    /// already). It stays the same epoch: [`RecoveryEpoch::undo`] still goes
    /// back to the reduction before it.
    pub fn extend_to(&mut self, now: Instant) {
        self.last_reduction = self.last_reduction.max(Some(now));
    }

    /// Leaves recovery without an acknowledgement, e.g. because the sender
    /// restarts from slow start; the epoch itself goes on.
    pub fn end_recovery(&mut self) {
        self.in_recovery = false;
    }

    /// The last reduction was spurious: forget it, and leave recovery.
    pub fn undo(&mut self) {
        self.last_reduction = self.reduction_before_last;
        self.in_recovery = false;
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    pub fn last_reduction(&self) -> Option<Instant> {
        self.last_reduction
    }

    pub fn sent_at_reduction(&self) -> SentAtReduction {
        self.sent_at_reduction
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::shared::round_clock::tests::{ack, acked};

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn every_loss_is_new_before_the_first_reduction() {
        let t0 = Instant::now();
        for rule in [
            SentAtReduction::CountsAsAfter,
            SentAtReduction::CountsAsBefore,
        ] {
            let epoch = RecoveryEpoch::new(rule);
            assert!(epoch.sent_after_reduction(t0));
            assert!(!epoch.in_recovery());
            assert_eq!(epoch.last_reduction(), None);
        }
        assert_eq!(
            RecoveryEpoch::default().sent_at_reduction(),
            SentAtReduction::CountsAsAfter
        );
    }

    #[test]
    fn a_reduction_filters_losses_of_packets_sent_before_it() {
        let t0 = Instant::now();
        let mut epoch = RecoveryEpoch::default();
        epoch.begin(t0 + ms(100));
        assert!(epoch.in_recovery());
        assert_eq!(epoch.last_reduction(), Some(t0 + ms(100)));
        assert!(!epoch.sent_after_reduction(t0 + ms(99)));
        assert!(epoch.sent_after_reduction(t0 + ms(101)));
    }

    #[test]
    fn the_instant_of_the_reduction_falls_where_the_algorithm_says() {
        let t0 = Instant::now();
        let mut after = RecoveryEpoch::new(SentAtReduction::CountsAsAfter);
        let mut before = RecoveryEpoch::new(SentAtReduction::CountsAsBefore);
        after.begin(t0);
        before.begin(t0);
        assert!(after.sent_after_reduction(t0));
        assert!(
            !before.sent_after_reduction(t0),
            "RFC 9002: <= is in recovery"
        );
        // The ACK of such a packet ends recovery only where it counts as after.
        assert!(after.on_ack([t0].into_iter()));
        assert!(!after.in_recovery());
        assert!(!before.on_ack([t0].into_iter()));
        assert!(before.in_recovery());
    }

    #[test]
    fn recovery_ends_at_the_first_ack_of_a_packet_sent_after_the_reduction() {
        let t0 = Instant::now();
        let mut epoch = RecoveryEpoch::default();
        epoch.begin(t0 + ms(50));
        // Partial ACKs: only packets sent before the reduction.
        assert!(!epoch.on_ack([t0, t0 + ms(10)].into_iter()));
        assert!(!epoch.on_ack(std::iter::empty()));
        assert!(epoch.in_recovery());
        // One packet sent after it is enough, wherever it is in the ACK.
        assert!(epoch.on_ack([t0 + ms(20), t0 + ms(60), t0].into_iter()));
        assert!(!epoch.in_recovery());
        // Not in recovery: nothing to end.
        assert!(!epoch.on_ack([t0 + ms(70)].into_iter()));
        // Ending recovery does not end the epoch.
        assert!(!epoch.sent_after_reduction(t0 + ms(40)));
    }

    #[test]
    fn undo_restores_the_reduction_before_the_last() {
        let t0 = Instant::now();
        let mut epoch = RecoveryEpoch::default();
        epoch.begin(t0 + ms(10));
        epoch.begin(t0 + ms(20));
        epoch.undo();
        assert!(!epoch.in_recovery());
        assert_eq!(epoch.last_reduction(), Some(t0 + ms(10)));
        assert!(epoch.sent_after_reduction(t0 + ms(15)));
        assert!(!epoch.sent_after_reduction(t0 + ms(5)));
        // Only one level is remembered: a second undo changes nothing more.
        epoch.undo();
        assert_eq!(epoch.last_reduction(), Some(t0 + ms(10)));
        // Undoing the first reduction forgets every reduction.
        let mut first = RecoveryEpoch::default();
        first.begin(t0);
        first.undo();
        assert_eq!(first.last_reduction(), None);
        assert!(first.sent_after_reduction(t0));
    }

    #[test]
    fn extending_an_epoch_keeps_what_undo_restores() {
        let t0 = Instant::now();
        let mut epoch = RecoveryEpoch::new(SentAtReduction::CountsAsBefore);
        epoch.begin(t0 + ms(10));
        epoch.begin(t0 + ms(20));
        epoch.extend_to(t0 + ms(30));
        assert_eq!(epoch.last_reduction(), Some(t0 + ms(30)));
        assert!(!epoch.sent_after_reduction(t0 + ms(25)));
        // Never moves the epoch back.
        epoch.extend_to(t0 + ms(5));
        assert_eq!(epoch.last_reduction(), Some(t0 + ms(30)));
        epoch.undo();
        assert_eq!(epoch.last_reduction(), Some(t0 + ms(10)));
        // Without any reduction the epoch starts at `now`.
        let mut fresh = RecoveryEpoch::default();
        fresh.extend_to(t0);
        assert_eq!(fresh.last_reduction(), Some(t0));
        assert!(!fresh.in_recovery());
    }

    #[test]
    fn rounds_are_not_evaluated_in_recovery_and_restart_when_it_ends() {
        let t0 = Instant::now();
        let mut rounds = RoundClock::new();
        let mut epoch = RecoveryEpoch::default();
        let sent = |n: u64| acked(n, t0 + ms(n), t0 + ms(100 + n));
        for n in 0..4 {
            rounds.on_packet_sent(n, t0 + ms(n));
        }
        // Round 0 ends at the first ACK, outside recovery.
        let first = [sent(0)];
        let AckedRound::Ended(round) =
            epoch.on_ack_with_rounds(&ack(t0 + ms(100), &first, false), &mut rounds)
        else {
            panic!("round 0 should end");
        };
        assert_eq!(round.index, 0);
        // Round 1's distinguished packet is 4; packet 1 leaves it in progress.
        let second = [sent(1)];
        assert_eq!(
            epoch.on_ack_with_rounds(&ack(t0 + ms(101), &second, false), &mut rounds),
            AckedRound::InProgress
        );
        // A reduction at 2 ms: packets 0-1 were sent before it, 2-3 after.
        epoch.begin(t0 + ms(2));
        rounds.on_packet_sent(4, t0 + ms(102));
        // Packet 2 was sent after the reduction: recovery ends, round restarts.
        let third = [sent(2)];
        assert_eq!(
            epoch.on_ack_with_rounds(&ack(t0 + ms(102), &third, false), &mut rounds),
            AckedRound::RecoveryEnded
        );
        assert!(!epoch.in_recovery());
        assert_eq!(
            rounds.current().map(|r| (r.index, r.end_pkt_num)),
            Some((2, 5))
        );
        // In recovery again, a round that ends is reported as such.
        epoch.begin(t0 + ms(200));
        rounds.on_packet_sent(5, t0 + ms(103));
        let late = [sent(5)];
        let AckedRound::EndedInRecovery(round) =
            epoch.on_ack_with_rounds(&ack(t0 + ms(203), &late, false), &mut rounds)
        else {
            panic!("round 2 should end in recovery");
        };
        assert_eq!(round.index, 2);
        assert!(epoch.in_recovery());
    }

    #[test]
    fn end_recovery_leaves_the_epoch_in_place() {
        let t0 = Instant::now();
        let mut epoch = RecoveryEpoch::default();
        epoch.begin(t0 + ms(10));
        epoch.end_recovery();
        assert!(!epoch.in_recovery());
        assert_eq!(epoch.last_reduction(), Some(t0 + ms(10)));
        assert!(!epoch.sent_after_reduction(t0));
    }
}
