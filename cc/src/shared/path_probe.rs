//! Is a standing queue ours? A one-round drain that tells a longer path
//! (or another flow's queue) from the flow's own queue.
//!
//! A delay-based sender takes every delay above BaseRTT for its own queue.
//! When the path gets longer (a LEO handover, a satellite drifting away, a
//! gateway change) the extra delay is not a queue at all, and the sender
//! shrinks its window to `aim × RTT / added delay` for good. Vegas-W
//! (003_5b3b63821b3b4570.txt, section IV.B) refreshes BaseRTT when the RTT
//! jumps far above its recent mean; FAST and BBR (ProbeRTT) drain their own
//! queue now and then so that the minimum RTT is measured without it. Both
//! miss small or gradual changes, or cost a drain every few seconds.
//!
//! This estimator drains only when the delay is suspect, and by exactly what
//! the flow could have queued. With the bottleneck's capacity `C` known
//! (packet pairs or ACK trains), the flow's window can put at most
//! `own = max(0, cwnd − C × BaseRTT)` packets in the queue. A standing
//! queue of `Q = delay × C` packets more than `trigger_packets` beyond that
//! is unexplained. The probe then takes `D = own + aim` packets out of the
//! window (enough to empty any queue of its own), holds for a round (the
//! ACKs of that round are of packets sent before the decrease), and looks
//! at the round after: a queue of ours falls by `D` packets, i.e. its delay
//! by `D / C`; a longer path does not fall at all, and neither does a
//! queue a loss-based flow keeps full (it fills what we leave). That is the
//! pulse-and-watch test of Nimbus's elasticity detection (Goyal et al.,
//! SIGCOMM 2022) made once, with our own decrease as the pulse. If the delay
//! fell by less than `response_fraction` of what was expected, the queue was
//! not ours: BaseRTT becomes the probe round's smallest RTT and the drained
//! packets go back into the window. If it was ours, the window keeps the
//! decrease and the next probe waits `backoff_rounds`, doubled after every
//! probe that found the flow's own queue (a capacity read a few per cent
//! high makes the window look smaller than the queue it keeps).
//!
//! A path longer by less than `trigger_packets` of delay leaves nothing
//! unexplained, yet the sender's update shrinks the window to
//! `aim × RTT / added delay` once the added delay exceeds the aim. So a
//! window below `C × BaseRTT` (it can have queued nothing) that still fills
//! most of the path (a flow alone, not a share of a busy link) and meets
//! more than the aim's queue for `STANDING_ROUNDS` rounds starts a probe
//! too (`short_window_trigger`).
//!
//! Both tests trust C. Where it reads low (receive-stamped pairs under a
//! packet's time of link jitter read 80 of 100 Mbit/s), a path longer by
//! about the aim's delay leaves the window a few packets above the path as
//! read, the update holds Diff at the aim, all of it path, and the link
//! runs a few per cent short. A standing queue keeps the bottleneck busy,
//! so a round that delivered a few per cent less than the flow's recent
//! best (not a tenth or more: another flow's share) cannot have met the
//! queue its Diff reads: two such rounds in a row, with
//! a window of a flow alone, start a probe too (`underfill_trigger`).
//!
//! On a link shared with other delay-based flows no window exceeds
//! `C × BaseRTT` on its own, yet together they keep a standing queue (a
//! joining flow's jump): `own` is zero for each, the drain is only the aim,
//! a few packets of a queue of hundreds, and every flow finds the queue
//! not its own and rebases onto it for good. In a FIFO queue a flow's
//! packets are its rate times the queueing delay (Vegas's Diff); when the
//! window holds well under what the path and the queue hold together
//! (others fill the rest) the drain takes those out instead
//! (`drain_shared_diff`). A queue kept by
//! delay-based flows then falls by it (theirs hold still); one a loss-based
//! flow keeps full does not. Both this and `others_inconclusive` are off in
//! vegas-sat by default: beside CUBIC or BBR2 in a deep buffer they took
//! away the rebases by which it keeps a share (docs/satellite.md,
//! "Delay-based flows sharing a queue").

use std::time::Duration;

/// Rounds in a row of a Diff above the trigger that start a probe even
/// when the window seems to explain the queue.
const STANDING_ROUNDS: u32 = 2;

/// The short-window trigger asks only while the window still fills this
/// fraction of the path: a flow alone whose path grew by less than beta
/// packets of delay settles at `aim × RTT / added delay`, 77-87 % of the
/// path on LEO; a flow sharing the link with others holds its share, a
/// half or less, and the queue there is theirs (asking every two rounds
/// rebased joining flows onto each other's queue).
const SHORT_WINDOW_FLOOR: f64 = 0.75;

/// A window under this fraction of what the path and the standing queue
/// hold together (`C × (BaseRTT + q)`) shares the queue with other flows:
/// alone, a window keeps the link busy and holds about all of it
/// (`drain_shared_diff`).
const SHARED_WINDOW_FRACTION: f64 = 0.8;

/// A fall of the delay beyond this many times what the drain could remove
/// is not our queue's.
const OTHERS_FALL_FACTOR: f64 = 3.0;

/// The back-off doubles at most this many times (8 rounds become 32: 19 s
/// at GEO). Beside CUBIC a probe that happens to meet its queue draining
/// reads as ours; a longer back-off left vegas-sat without probes for
/// minutes while CUBIC took the link (Jain 0.61-0.69 on robust-geo-vs-cubic,
/// seeds 1-3).
const MAX_BACKOFF_DOUBLINGS: u32 = 2;

/// How a probe decides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathProbeConfig {
    /// Packets of standing queue beyond the window's own that start a probe.
    pub trigger_packets: f64,
    /// The delay must fall by at least this fraction of what draining our
    /// own queue would remove, or the queue is not ours.
    pub response_fraction: f64,
    /// Rounds without a probe after one that found our own queue (doubled
    /// after each such probe in a row, at most `MAX_BACKOFF_DOUBLINGS`
    /// times).
    pub backoff_rounds: u64,
    /// A window that cannot fill the path (`cwnd ≤ C × BaseRTT`, but at
    /// least `SHORT_WINDOW_FLOOR` of it) has queued nothing: a queue above
    /// the aim standing `STANDING_ROUNDS` rounds starts a probe, not only
    /// one above `trigger_packets`. Without it a path longer by between aim
    /// and trigger packets of delay is never probed, and the update shrinks
    /// the window until it holds the aim as Diff: `aim × RTT / added delay`
    /// (LEO, +0.5 ms steps: 83 of 94 Mbit/s for seconds).
    pub short_window_trigger: bool,
    /// Where the window holds under `SHARED_WINDOW_FRACTION` of the path
    /// and its standing queue (others fill the rest), the drain is the
    /// flow's packets in the FIFO queue plus the aim, rather than the
    /// window's excess over the path plus the aim.
    pub drain_shared_diff: bool,
    /// A delay that moved during the probe by more than
    /// `OTHERS_FALL_FACTOR` times the expected fall tells nothing about
    /// this flow's queue: it rose (other flows grew meanwhile: a join, a
    /// regrowth) or fell far more (others drained at the same time, or a
    /// loss-based flow backed off). The drain is given back and the probe
    /// asked again later; no rebase onto a round whose RTTs carry the
    /// return path's queue. Only once a probe has found the queue ours (the
    /// neighbours were seen to hold still): beside a flow that grows into
    /// whatever it is left, a moved delay is a queue not ours, as before.
    pub others_inconclusive: bool,
    /// A round that delivered well under what the flow delivered lately
    /// (`ProbeRound::underfilled`) while its Diff read more than half the
    /// aim, with a window that fills most of the path (alone), cannot have
    /// had that queue: a standing queue keeps the bottleneck busy. Two such
    /// rounds in a row start a probe. A path longer by about the aim's
    /// delay otherwise goes unnoticed: the update holds Diff at the aim,
    /// all of it path, and the link runs a few per cent short (LEO drift).
    pub underfill_trigger: bool,
}

/// One round, as the probe sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeRound {
    /// The round's smallest queueing delay (above BaseRTT).
    pub queue_delay: Duration,
    /// Bottleneck capacity, bytes per second.
    pub capacity: f64,
    /// Bytes per packet.
    pub packet_bytes: f64,
    pub cwnd_packets: f64,
    /// C × BaseRTT, in packets.
    pub path_packets: f64,
    /// The queue the flow aims at, in packets.
    pub aim_packets: f64,
    /// Vegas's Diff for the round: the window's packets the delay implies
    /// are queued.
    pub diff_packets: f64,
    /// The round delivered under its sender's recent best by a margin.
    pub underfilled: bool,
}

impl ProbeRound {
    /// The standing queue in packets at the bottleneck: delay × C.
    fn queue_packets(&self) -> f64 {
        self.queue_delay.as_secs_f64() * self.capacity / self.packet_bytes.max(1.0)
    }

    /// The most the window can have queued: its excess over C × BaseRTT.
    fn own_packets(&self) -> f64 {
        (self.cwnd_packets - self.path_packets).max(0.0)
    }

    /// The packets of the queue that are the flow's: the window's excess
    /// over the path; with `shared`, where the window holds well under
    /// what the path and the standing queue hold together (others fill the
    /// rest), its packets in a FIFO queue: its rate `cwnd / (BaseRTT + q)`
    /// times the delay `q`, i.e. `cwnd × Q / (path + Q)` (Vegas's Diff,
    /// read at the round's smallest delay).
    fn own_queued_packets(&self, shared: bool) -> f64 {
        let own = self.own_packets();
        let queue = self.queue_packets();
        let holds = self.path_packets + queue;
        if shared && holds > 0.0 && self.cwnd_packets < SHARED_WINDOW_FRACTION * holds {
            own.max(self.cwnd_packets * queue / holds)
        } else {
            own
        }
    }

    /// The underfill test (`underfill_trigger`).
    fn underfilled_with_queue(&self) -> bool {
        self.underfilled
            && self.diff_packets > self.aim_packets / 2.0
            && self.cwnd_packets >= SHORT_WINDOW_FLOOR * self.path_packets
    }

    /// The short-window test: a window that cannot fill the path but
    /// fills at least `SHORT_WINDOW_FLOOR` of it, meeting a queue above the
    /// aim.
    fn short_window(&self) -> bool {
        self.cwnd_packets <= self.path_packets
            && self.cwnd_packets >= SHORT_WINDOW_FLOOR * self.path_packets
            && self.queue_packets() > self.aim_packets
    }
}

/// Which test started a probe (the qlog's `probe_trigger`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeTrigger {
    /// A standing queue more than the trigger beyond the window's own.
    UnexplainedQueue,
    /// Diff above the trigger `STANDING_ROUNDS` rounds in a row.
    HighDiff,
    /// `short_window_trigger`'s window below the path meeting a queue.
    ShortWindow,
    /// `underfill_trigger`'s rounds under the flow's best with a queue.
    Underfill,
}

impl ProbeTrigger {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeTrigger::UnexplainedQueue => "unexplained_queue",
            ProbeTrigger::HighDiff => "high_diff",
            ProbeTrigger::ShortWindow => "short_window",
            ProbeTrigger::Underfill => "underfill",
        }
    }
}

/// What the sender does with this round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProbeAction {
    /// Nothing to probe: the usual update applies.
    None,
    /// Start a probe: take this many packets out of the window.
    Drain(f64),
    /// The probe's window holds this round.
    Hold,
    /// The queue did not respond: it is the path's (or a competitor's).
    /// BaseRTT becomes the round's smallest RTT; give these packets back.
    NotOurs { restore_packets: f64 },
    /// The queue fell as ours would: keep the decrease.
    Ours,
    /// Others moved the queue more than the drain could: no verdict; give
    /// these packets back and ask again.
    Inconclusive { restore_packets: f64 },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    Idle,
    /// Drained `packets`; the standing delay was `delay_before`; the round
    /// after the decrease is still of packets sent before it.
    Draining {
        packets: f64,
        delay_before: Duration,
        held: bool,
    },
}

/// The probe's state machine; see the module documentation.
#[derive(Clone, Debug)]
pub struct PathProbe {
    config: PathProbeConfig,
    state: State,
    /// Rounds still to wait before the next probe.
    wait_rounds: u64,
    /// Probes in a row that found our own queue.
    own_in_a_row: u32,
    /// The last verdict found the queue ours (`others_inconclusive`
    /// applies only then: the neighbours were seen to hold still).
    last_was_ours: bool,
    /// Rounds in a row whose Diff exceeded the trigger.
    high_diff_rounds: u32,
    /// Rounds in a row of a queue above the aim with a window below the
    /// path (`short_window_trigger`).
    short_window_rounds: u32,
    probes: u64,
    not_ours: u64,
    /// The test that started the latest probe.
    last_trigger: Option<ProbeTrigger>,
}

impl PathProbe {
    pub fn new(config: PathProbeConfig) -> Self {
        PathProbe {
            config,
            state: State::Idle,
            wait_rounds: 0,
            own_in_a_row: 0,
            last_was_ours: false,
            high_diff_rounds: 0,
            short_window_rounds: 0,
            probes: 0,
            not_ours: 0,
            last_trigger: None,
        }
    }

    /// A probe is draining or holding.
    pub fn active(&self) -> bool {
        self.state != State::Idle
    }

    /// Probes started.
    pub fn probes(&self) -> u64 {
        self.probes
    }

    /// Probes that found the queue was not the flow's.
    pub fn not_ours(&self) -> u64 {
        self.not_ours
    }

    /// The test that started the latest probe, `None` before the first.
    pub fn last_trigger(&self) -> Option<ProbeTrigger> {
        self.last_trigger
    }

    /// No probe for `rounds` rounds: a verdict the sender did not act on
    /// (a shared link's queue it leaves to the others) is not asked again at
    /// once.
    pub fn defer(&mut self, rounds: u64) {
        self.wait_rounds = self.wait_rounds.max(rounds);
    }

    /// Abandons a probe in progress (the window was set otherwise: a
    /// timeout, start-up again).
    pub fn cancel(&mut self) {
        self.state = State::Idle;
    }

    /// One evaluated round of congestion avoidance.
    pub fn on_round(&mut self, round: &ProbeRound) -> ProbeAction {
        match self.state {
            State::Idle => {
                self.high_diff_rounds = if round.diff_packets > self.config.trigger_packets {
                    self.high_diff_rounds.saturating_add(1)
                } else {
                    0
                };
                let window_short = self.config.short_window_trigger && round.short_window();
                let short_window = window_short
                    || (self.config.underfill_trigger && round.underfilled_with_queue());
                self.short_window_rounds = if short_window {
                    self.short_window_rounds.saturating_add(1)
                } else {
                    0
                };
                if self.wait_rounds > 0 {
                    self.wait_rounds -= 1;
                    return ProbeAction::None;
                }
                let unexplained = round.queue_packets() - round.own_packets();
                // A capacity read low makes the window look as if it
                // explained the queue: a Diff above the trigger two rounds
                // in a row is suspect too.
                let standing = self.high_diff_rounds >= STANDING_ROUNDS
                    || self.short_window_rounds >= STANDING_ROUNDS;
                if (unexplained <= self.config.trigger_packets && !standing)
                    || round.capacity <= 0.0
                {
                    return ProbeAction::None;
                }
                // Enough to empty whatever the window queued (at most the
                // whole standing queue), never more than half the window.
                let own = round.own_queued_packets(self.config.drain_shared_diff);
                let packets = (own + round.aim_packets)
                    .min(round.queue_packets())
                    .min(round.cwnd_packets / 2.0)
                    .max(0.0);
                if self.config.others_inconclusive && packets < 1.0 {
                    // Nothing queued at the round's smallest delay (a Diff
                    // read from RTTs the return path lengthened): a drain
                    // of nothing cannot tell anything.
                    return ProbeAction::None;
                }
                self.last_trigger = Some(if unexplained > self.config.trigger_packets {
                    ProbeTrigger::UnexplainedQueue
                } else if self.high_diff_rounds >= STANDING_ROUNDS {
                    ProbeTrigger::HighDiff
                } else if window_short {
                    ProbeTrigger::ShortWindow
                } else {
                    ProbeTrigger::Underfill
                });
                self.high_diff_rounds = 0;
                self.short_window_rounds = 0;
                self.state = State::Draining {
                    packets,
                    delay_before: round.queue_delay,
                    held: false,
                };
                self.probes = self.probes.saturating_add(1);
                ProbeAction::Drain(packets)
            }
            State::Draining {
                packets,
                delay_before,
                held: false,
            } => {
                self.state = State::Draining {
                    packets,
                    delay_before,
                    held: true,
                };
                ProbeAction::Hold
            }
            State::Draining {
                packets,
                delay_before,
                held: true,
            } => {
                self.state = State::Idle;
                // Our queue would have fallen by the packets drained (at
                // most all of it).
                let expected = (packets * round.packet_bytes / round.capacity.max(1.0))
                    .min(delay_before.as_secs_f64());
                let fell = delay_before.as_secs_f64() - round.queue_delay.as_secs_f64();
                // A queue that fell by far more than we drained is another
                // flow's, emptying on its own (a loss-based flow after its
                // loss); alone, the fall is at most what we drained.
                let others_moved = fell > OTHERS_FALL_FACTOR * expected;
                if self.config.others_inconclusive
                    && self.last_was_ours
                    && fell.abs() > OTHERS_FALL_FACTOR * expected
                {
                    return ProbeAction::Inconclusive {
                        restore_packets: packets,
                    };
                }
                if fell < self.config.response_fraction * expected || others_moved {
                    self.last_was_ours = false;
                    self.not_ours = self.not_ours.saturating_add(1);
                    self.own_in_a_row = 0;
                    ProbeAction::NotOurs {
                        restore_packets: packets,
                    }
                } else {
                    self.wait_rounds = self
                        .config
                        .backoff_rounds
                        .saturating_mul(1 << self.own_in_a_row.min(MAX_BACKOFF_DOUBLINGS));
                    self.own_in_a_row = self.own_in_a_row.saturating_add(1);
                    self.last_was_ours = true;
                    ProbeAction::Ours
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: PathProbeConfig = PathProbeConfig {
        trigger_packets: 10.0,
        response_fraction: 0.5,
        backoff_rounds: 8,
        short_window_trigger: true,
        drain_shared_diff: false,
        others_inconclusive: false,
        underfill_trigger: false,
    };
    /// With the shared-queue drain and the inconclusive verdicts.
    const SHARED: PathProbeConfig = PathProbeConfig {
        drain_shared_diff: true,
        others_inconclusive: true,
        ..CONFIG
    };
    /// 100 Mbit/s.
    const C: f64 = 12.5e6;
    const MDS: f64 = 1250.0;

    /// A round with `delay_ms` of standing queue, a window `cwnd` against a
    /// path of 320 packets (32 ms at 100 Mbit/s, 1250-byte packets).
    fn round(delay_ms: f64, cwnd: f64) -> ProbeRound {
        ProbeRound {
            queue_delay: Duration::from_secs_f64(delay_ms / 1e3),
            capacity: C,
            packet_bytes: MDS,
            cwnd_packets: cwnd,
            path_packets: 320.0,
            aim_packets: 7.5,
            diff_packets: 0.0,
            underfilled: false,
        }
    }

    #[test]
    fn a_queue_the_window_explains_starts_no_probe() {
        let mut p = PathProbe::new(CONFIG);
        // 0.75 ms = 7.5 packets at C; the window is 7.5 above the path.
        assert_eq!(p.on_round(&round(0.75, 327.5)), ProbeAction::None);
        // 15 packets queued by a window 10 above: 5 unexplained.
        assert_eq!(p.on_round(&round(1.5, 330.0)), ProbeAction::None);
        assert_eq!(p.probes(), 0);
    }

    #[test]
    fn rounds_delivering_under_the_best_with_a_queue_start_a_probe() {
        // 0.8 ms = 8 packets at C, a window 7.5 above the path: the window
        // seems to explain it (0.5 unexplained), and it is not short.
        let underfilled = |diff: f64, cwnd: f64| ProbeRound {
            diff_packets: diff,
            underfilled: true,
            ..round(0.8, cwnd)
        };
        let on = PathProbeConfig {
            underfill_trigger: true,
            ..CONFIG
        };
        let mut p = PathProbe::new(on);
        assert_eq!(p.on_round(&underfilled(8.0, 327.5)), ProbeAction::None);
        // The second in a row: own 7.5 + aim 7.5, at most the queue's 8.
        assert_eq!(
            p.on_round(&underfilled(8.0, 327.5)),
            ProbeAction::Drain(8.0)
        );
        assert_eq!(p.last_trigger(), Some(ProbeTrigger::Underfill));
        // Off: never.
        let mut off = PathProbe::new(CONFIG);
        for _ in 0..4 {
            assert_eq!(off.on_round(&underfilled(8.0, 327.5)), ProbeAction::None);
        }
        // A round that delivered its best, a Diff of at most half the aim,
        // or a window under 3/4 of the path (a share of a busy link): no.
        for r in [
            ProbeRound {
                underfilled: false,
                ..underfilled(8.0, 327.5)
            },
            underfilled(3.75, 327.5),
            underfilled(8.0, 0.74 * 320.0),
        ] {
            let mut q = PathProbe::new(on);
            for _ in 0..4 {
                assert_eq!(q.on_round(&r), ProbeAction::None, "{r:?}");
            }
        }
    }

    #[test]
    fn an_unexplained_queue_drains_the_windows_own_plus_the_aim() {
        let mut p = PathProbe::new(CONFIG);
        // +5 ms = 50 packets; the window's own excess is 7.5.
        assert_eq!(
            p.on_round(&round(5.0, 327.5)),
            ProbeAction::Drain(7.5 + 7.5)
        );
        assert!(p.active());
        assert_eq!(p.last_trigger(), Some(ProbeTrigger::UnexplainedQueue));
        // A window below the path: the aim alone.
        let mut q = PathProbe::new(CONFIG);
        assert_eq!(q.on_round(&round(5.0, 200.0)), ProbeAction::Drain(7.5));
        // Never more than half the window.
        let mut r = PathProbe::new(CONFIG);
        assert_eq!(r.on_round(&round(50.0, 12.0)), ProbeAction::Drain(6.0));
    }

    #[test]
    fn a_delay_that_does_not_fall_is_not_ours() {
        let mut p = PathProbe::new(CONFIG);
        assert!(matches!(
            p.on_round(&round(5.0, 327.5)),
            ProbeAction::Drain(_)
        ));
        assert_eq!(p.on_round(&round(5.0, 312.5)), ProbeAction::Hold);
        // Expected fall: 15 packets = 1.5 ms; it fell 0.2 ms.
        assert_eq!(
            p.on_round(&round(4.8, 312.5)),
            ProbeAction::NotOurs {
                restore_packets: 15.0
            }
        );
        assert!(!p.active());
        assert_eq!(p.not_ours(), 1);
        // No wait: the next round may probe again.
        assert!(matches!(
            p.on_round(&round(5.0, 327.5)),
            ProbeAction::Drain(_)
        ));
    }

    #[test]
    fn a_delay_that_falls_as_ours_would_is_ours_and_backs_off() {
        let mut p = PathProbe::new(CONFIG);
        assert!(matches!(
            p.on_round(&round(2.0, 310.0)),
            ProbeAction::Drain(_)
        ));
        assert_eq!(p.on_round(&round(2.0, 302.5)), ProbeAction::Hold);
        // Expected fall: 7.5 packets = 0.75 ms; it fell 0.6 ms (≥ half).
        assert_eq!(p.on_round(&round(1.4, 302.5)), ProbeAction::Ours);
        // Eight rounds without a probe, then a probe again.
        for _ in 0..8 {
            assert_eq!(p.on_round(&round(5.0, 300.0)), ProbeAction::None);
        }
        assert!(matches!(
            p.on_round(&round(5.0, 300.0)),
            ProbeAction::Drain(_)
        ));
        p.on_round(&round(5.0, 300.0));
        assert_eq!(p.on_round(&round(4.4, 300.0)), ProbeAction::Ours);
        // The second in a row waits twice as long.
        for _ in 0..16 {
            assert_eq!(p.on_round(&round(5.0, 300.0)), ProbeAction::None);
        }
        assert!(matches!(
            p.on_round(&round(5.0, 300.0)),
            ProbeAction::Drain(_)
        ));
    }

    #[test]
    fn a_standing_diff_probes_even_when_the_window_seems_to_explain_it() {
        // A capacity read low: the window looks 60 packets above the path,
        // more than the 46 queued, so nothing is unexplained.
        let mut p = PathProbe::new(CONFIG);
        let mut r = round(4.6, 380.0);
        r.diff_packets = 40.0;
        assert_eq!(p.on_round(&r), ProbeAction::None);
        // The second round in a row above the trigger probes, and drains
        // the whole standing queue (46 packets), not own + aim (67.5).
        let drain = p.on_round(&r);
        let ProbeAction::Drain(packets) = drain else {
            panic!("{drain:?}")
        };
        assert!((packets - 4.6e-3 * C / MDS).abs() < 1e-9, "{packets}");
        assert_eq!(p.last_trigger(), Some(ProbeTrigger::HighDiff));
        // A Diff below the trigger in between starts the count again.
        let mut q = PathProbe::new(CONFIG);
        assert_eq!(q.on_round(&r), ProbeAction::None);
        let mut low = r;
        low.diff_packets = 9.0;
        assert_eq!(q.on_round(&low), ProbeAction::None);
        assert_eq!(q.on_round(&r), ProbeAction::None);
    }

    #[test]
    fn a_window_below_the_path_probes_a_queue_above_the_aim() {
        // The path 0.95 ms longer: 9.5 packets at C (1250-byte packets),
        // above the aim (7.5) but not the trigger (10); the window 280
        // packets against a path of 320, so none of it is the window's.
        // Two such rounds probe.
        let short = |p: &mut PathProbe| p.on_round(&round(0.95, 280.0));
        let mut p = PathProbe::new(CONFIG);
        assert_eq!(short(&mut p), ProbeAction::None);
        assert_eq!(p.last_trigger(), None);
        // Drains the aim (own is zero; the queue, 9.5 packets, is more).
        assert_eq!(short(&mut p), ProbeAction::Drain(7.5));
        assert_eq!(p.last_trigger(), Some(ProbeTrigger::ShortWindow));
        // Switched off: never, however long it stands.
        let mut off = PathProbe::new(PathProbeConfig {
            short_window_trigger: false,
            ..CONFIG
        });
        for _ in 0..10 {
            assert_eq!(short(&mut off), ProbeAction::None);
        }
        // A queue at the aim (7.5 packets: 0.75 ms) is the aim's, not a
        // longer path's; a window above the path explains what it queued;
        // a window below three quarters of the path (239 of 320) holds a
        // share of a link others use too, and the queue is theirs.
        let mut at_aim = PathProbe::new(CONFIG);
        let mut above_path = PathProbe::new(CONFIG);
        let mut a_share = PathProbe::new(CONFIG);
        for _ in 0..10 {
            assert_eq!(at_aim.on_round(&round(0.75, 280.0)), ProbeAction::None);
            assert_eq!(above_path.on_round(&round(0.95, 325.0)), ProbeAction::None);
            assert_eq!(a_share.on_round(&round(0.95, 239.0)), ProbeAction::None);
        }
        let mut at_floor = PathProbe::new(CONFIG);
        at_floor.on_round(&round(0.95, 240.0));
        assert!(matches!(
            at_floor.on_round(&round(0.95, 240.0)),
            ProbeAction::Drain(_)
        ));
        // A round in between without the queue starts the count again.
        let mut broken = PathProbe::new(CONFIG);
        assert_eq!(short(&mut broken), ProbeAction::None);
        assert_eq!(broken.on_round(&round(0.5, 280.0)), ProbeAction::None);
        assert_eq!(short(&mut broken), ProbeAction::None);
        assert!(matches!(short(&mut broken), ProbeAction::Drain(_)));
    }

    #[test]
    fn a_fall_of_half_the_drained_queue_is_ours() {
        // 6 packets (0.6 ms) standing with the trigger at 5: all 6 are
        // drained, so half of it is 0.3 ms: a fall of 0.31 ms is ours, of
        // 0.29 ms not.
        for (after_ms, ours) in [(0.29, true), (0.31, false)] {
            let mut q = PathProbe::new(PathProbeConfig {
                trigger_packets: 5.0,
                ..CONFIG
            });
            let drain = q.on_round(&round(0.6, 300.0));
            assert!(
                matches!(drain, ProbeAction::Drain(p) if (p - 6.0).abs() < 1e-9),
                "{drain:?}"
            );
            q.on_round(&round(0.6, 294.0));
            let verdict = q.on_round(&round(after_ms, 294.0));
            assert_eq!(verdict == ProbeAction::Ours, ours, "{verdict:?}");
        }
    }

    #[test]
    fn a_fall_far_beyond_the_drain_is_another_flows_queue() {
        let mut p = PathProbe::new(CONFIG);
        // 20 ms standing below the path window: 7.5 packets drained, 0.75 ms
        // expected; the queue fell 5 ms (more than 3 × 0.75).
        assert_eq!(p.on_round(&round(20.0, 200.0)), ProbeAction::Drain(7.5));
        p.on_round(&round(20.0, 192.5));
        assert!(matches!(
            p.on_round(&round(15.0, 192.5)),
            ProbeAction::NotOurs { .. }
        ));
        // A fall of 2 ms (within 3 × 0.75) is ours.
        let mut q = PathProbe::new(CONFIG);
        q.on_round(&round(20.0, 200.0));
        q.on_round(&round(20.0, 192.5));
        assert_eq!(q.on_round(&round(18.0, 192.5)), ProbeAction::Ours);
    }

    #[test]
    fn a_shared_queue_drains_the_flows_packets_in_it() {
        // 20 ms standing (200 packets) against a window of 300 on a path
        // of 320: the window holds under 0.8 of the 520 the path and the
        // queue hold, so others fill the rest. In a FIFO queue the flow's
        // packets are its rate times the delay: 300 / (32 + 20 ms) × 20 ms.
        let ours = 300.0 * 20.0 / (32.0 + 20.0);
        let mut p = PathProbe::new(SHARED);
        let drain = p.on_round(&round(20.0, 300.0));
        let ProbeAction::Drain(packets) = drain else {
            panic!("{drain:?}")
        };
        assert!((packets - (ours + 7.5)).abs() < 1e-9, "{packets}");
        // Without it: the window's excess over the path (none) plus the aim.
        let mut off = PathProbe::new(SHARED_OFF_DRAIN);
        assert_eq!(off.on_round(&round(20.0, 300.0)), ProbeAction::Drain(7.5));
        // A window that holds most of the path and queue (alone on a path
        // 5 ms longer: 327.5 of 370) keeps the window's own excess.
        let mut alone = PathProbe::new(SHARED);
        assert_eq!(
            alone.on_round(&round(5.0, 327.5)),
            ProbeAction::Drain(7.5 + 7.5)
        );
    }

    const SHARED_OFF_DRAIN: PathProbeConfig = PathProbeConfig {
        drain_shared_diff: false,
        ..SHARED
    };

    /// A probe that finds the queue ours (the neighbours held still),
    /// then the eight rounds it waits.
    fn after_an_ours_verdict(config: PathProbeConfig) -> PathProbe {
        let mut p = PathProbe::new(config);
        assert!(matches!(
            p.on_round(&round(2.0, 310.0)),
            ProbeAction::Drain(_)
        ));
        p.on_round(&round(2.0, 302.5));
        assert_eq!(p.on_round(&round(1.4, 302.5)), ProbeAction::Ours);
        for _ in 0..8 {
            assert_eq!(p.on_round(&round(0.5, 300.0)), ProbeAction::None);
        }
        p
    }

    #[test]
    fn a_delay_others_moved_during_the_probe_is_inconclusive() {
        // Drained 15 packets (1.5 ms expected at C); the delay rose by 5 ms
        // (others grew) or fell by 4.8 ms (others drained too): both more
        // than three times the expected fall.
        for after_ms in [10.0, 0.2] {
            let mut p = after_an_ours_verdict(SHARED);
            assert_eq!(p.on_round(&round(5.0, 327.5)), ProbeAction::Drain(15.0));
            assert_eq!(p.on_round(&round(5.0, 312.5)), ProbeAction::Hold);
            assert_eq!(
                p.on_round(&round(after_ms, 312.5)),
                ProbeAction::Inconclusive {
                    restore_packets: 15.0
                }
            );
            assert_eq!(p.not_ours(), 0);
            assert!(!p.active());
            // Switched off, both are a queue not ours.
            let mut off = after_an_ours_verdict(PathProbeConfig {
                others_inconclusive: false,
                ..SHARED
            });
            off.on_round(&round(5.0, 327.5));
            off.on_round(&round(5.0, 312.5));
            assert_eq!(
                off.on_round(&round(after_ms, 312.5)),
                ProbeAction::NotOurs {
                    restore_packets: 15.0
                }
            );
            // Before any verdict found the queue ours (a competitor that
            // never held still: a loss-based flow growing into the
            // buffer), a moved delay is a queue not ours too.
            let mut first = PathProbe::new(SHARED);
            first.on_round(&round(5.0, 327.5));
            first.on_round(&round(5.0, 312.5));
            assert!(matches!(
                first.on_round(&round(after_ms, 312.5)),
                ProbeAction::NotOurs { .. }
            ));
        }
        // A rise within three times the expected fall (4 ms of 4.5) is
        // still a queue that did not respond.
        let mut p = after_an_ours_verdict(SHARED);
        p.on_round(&round(5.0, 327.5));
        p.on_round(&round(5.0, 312.5));
        assert!(matches!(
            p.on_round(&round(9.0, 312.5)),
            ProbeAction::NotOurs { .. }
        ));
        // After a not-ours verdict the gate closes again.
        let mut q = after_an_ours_verdict(SHARED);
        q.on_round(&round(5.0, 327.5));
        q.on_round(&round(5.0, 312.5));
        q.on_round(&round(4.9, 312.5));
        q.on_round(&round(5.0, 327.5));
        q.on_round(&round(5.0, 312.5));
        assert!(matches!(
            q.on_round(&round(10.0, 312.5)),
            ProbeAction::NotOurs { .. }
        ));
    }

    #[test]
    fn a_probe_with_less_than_a_packet_to_drain_does_not_start() {
        // A Diff above the trigger two rounds running, but no queue at the
        // round's smallest delay (0.05 ms: half a packet).
        let mut r = round(0.05, 300.0);
        r.diff_packets = 20.0;
        let mut p = PathProbe::new(SHARED);
        for _ in 0..5 {
            assert_eq!(p.on_round(&r), ProbeAction::None);
        }
        assert_eq!(p.probes(), 0);
        let mut off = PathProbe::new(PathProbeConfig {
            others_inconclusive: false,
            ..SHARED
        });
        off.on_round(&r);
        assert!(matches!(off.on_round(&r), ProbeAction::Drain(d) if d < 1.0));
    }

    #[test]
    fn the_back_off_stops_doubling_at_four_times() {
        let mut p = PathProbe::new(CONFIG);
        for wait in [8, 16, 32, 32] {
            assert!(matches!(
                p.on_round(&round(2.0, 310.0)),
                ProbeAction::Drain(_)
            ));
            p.on_round(&round(2.0, 302.5));
            assert_eq!(p.on_round(&round(1.4, 302.5)), ProbeAction::Ours);
            for _ in 0..wait {
                assert_eq!(p.on_round(&round(5.0, 300.0)), ProbeAction::None);
            }
        }
    }

    #[test]
    fn without_a_capacity_nothing_is_probed() {
        let mut p = PathProbe::new(CONFIG);
        let mut r = round(5.0, 300.0);
        r.capacity = 0.0;
        assert_eq!(p.on_round(&r), ProbeAction::None);
    }

    #[test]
    fn defer_waits_before_the_next_probe() {
        let mut p = PathProbe::new(CONFIG);
        p.defer(3);
        for _ in 0..3 {
            assert_eq!(p.on_round(&round(5.0, 327.5)), ProbeAction::None);
        }
        assert!(matches!(
            p.on_round(&round(5.0, 327.5)),
            ProbeAction::Drain(_)
        ));
    }

    #[test]
    fn cancel_abandons_a_probe() {
        let mut p = PathProbe::new(CONFIG);
        assert!(matches!(
            p.on_round(&round(5.0, 327.5)),
            ProbeAction::Drain(_)
        ));
        p.cancel();
        assert!(!p.active());
    }
}
