//! Vegas-A (000_625d42b67da1ab13.txt, Fig. 1) and Vegas-L (Fig. 2, cases
//! 1-6) written again from the paper for the tests, independently of the
//! crate, plus a model of a [`Flow`] in congestion avoidance that applies
//! them round by round.
//!
//! The model follows the choices the crate documents where the paper is
//! ambiguous; each is marked "(choice)" below.

use super::{build, ms, Flow, MDS};
use vegas_cc::{CcState, MINIMUM_WINDOW_PACKETS};

/// BaseRTT of every scenario, in ms.
pub const BASE_RTT_MS: f64 = 100.0;

/// Vegas's Diff (eqs. 1-3): (Cwnd/Base - Cwnd/RTT) x Base, in packets, in
/// the same floating-point steps as seconds would be computed from whole
/// milliseconds.
pub fn diff_packets(cwnd_packets: f64, base_ms: f64, rtt_ms: f64) -> f64 {
    let base = base_ms / 1e3;
    let expected = cwnd_packets / base;
    let actual = cwnd_packets / (rtt_ms / 1e3);
    (expected - actual) * base
}

/// One line of Fig. 1: its number, and how it moves cwnd (packets) and
/// alpha and beta (packets).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fig1 {
    pub line: u32,
    pub cwnd: f64,
    pub thresholds: f64,
}

const fn line(line: u32, cwnd: f64, thresholds: f64) -> Fig1 {
    Fig1 {
        line,
        cwnd,
        thresholds,
    }
}

/// Fig. 1 with alpha's floor at 1. `rose` is Th(i) > Th(i-1), `None` when
/// there is no Th(i-1). Line 0: no line applies (Diff on a threshold, or a
/// throughput comparison without Th(i-1): both no update, (choice)).
pub fn fig1(diff: f64, alpha: f64, beta: f64, rose: Option<bool>) -> Fig1 {
    fig1_with_line_21(diff, alpha, beta, rose, false)
}

/// [`fig1`], with line 21 as printed (no update) when `line_21_holds`.
pub fn fig1_with_line_21(
    diff: f64,
    alpha: f64,
    beta: f64,
    rose: Option<bool>,
    line_21_holds: bool,
) -> Fig1 {
    let none = line(0, 0.0, 0.0);
    if alpha < diff && diff < beta {
        match rose {
            Some(true) => line(3, 1.0, 1.0),
            Some(false) => line(5, 0.0, 0.0),
            None => none,
        }
    } else if diff < alpha {
        if alpha > 1.0 {
            match rose {
                Some(true) => line(10, 1.0, 0.0),
                Some(false) => line(12, -1.0, -1.0),
                None => none,
            }
        } else {
            line(15, 1.0, 0.0)
        }
    } else if diff > beta {
        if alpha > 1.0 {
            line(19, -1.0, -1.0)
        } else {
            // (choice) line 21 with the default above_beta_at_alpha_min =
            // decrease: Vegas's own cwnd - 1, thresholds at their floor;
            // `hold` is the line as printed.
            if line_21_holds {
                line(21, 0.0, 0.0)
            } else {
                line(21, -1.0, 0.0)
            }
        }
    } else {
        none
    }
}

/// Fig. 2: the case of Diff_Now and Diff_Before.
pub fn fig2(diff_now: f64, diff_before: f64) -> u32 {
    match (diff_now > 0.0, diff_before > 0.0) {
        (true, true) if diff_now > diff_before => 1,
        (true, true) => 2,
        (true, false) => 3,
        (false, true) => 4,
        (false, false) if diff_now > diff_before => 5,
        (false, false) => 6,
    }
}

/// Vegas-L's scale for a step of Fig. 1 in a case (paper defaults): cases
/// 1-3 scale growth (twice, as is, half), cases 4-6 reduction (half, as is,
/// twice); a step the other way is Vegas-A's (choice).
pub fn case_scale(case: u32, fig1: Fig1) -> f64 {
    let grows = matches!(fig1.line, 3 | 10 | 15);
    let shrinks = matches!(fig1.line, 12 | 19);
    match case {
        1 if grows => 2.0,
        3 if grows => 0.5,
        4 if shrinks => 0.5,
        6 if shrinks => 2.0,
        _ => 1.0,
    }
}

/// What the model did in one round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    pub diff: f64,
    /// Th(i), bytes per second.
    pub throughput: f64,
    pub fig1: Fig1,
    /// Vegas-L's case, 0 when there is none.
    pub case: u32,
    pub scale: f64,
}

/// cwnd, alpha and beta of a flow in congestion avoidance, and the
/// throughputs of its consecutive rounds.
#[derive(Clone, Debug)]
pub struct Model {
    pub vegas_l: bool,
    /// `above_beta_at_alpha_min=hold`: line 21 as printed.
    pub line_21_holds: bool,
    /// Bytes (exact: the scenarios use steps of half packets of 1200 bytes).
    pub cwnd: f64,
    pub alpha: f64,
    pub beta: f64,
    pub throughputs: Vec<f64>,
    pub max_datagram_size: f64,
}

impl Model {
    /// One round: the flow sends floor(cwnd / 1200) packets `idle_ms` after
    /// the previous round ended, and they are acknowledged `rtt_ms` later.
    pub fn round(&mut self, idle_ms: u64, rtt_ms: u64) -> Outcome {
        let packets = (self.cwnd / MDS as f64).floor();
        let seconds = (idle_ms + rtt_ms) as f64 / 1e3;
        let throughput = packets * MDS as f64 / seconds;
        let cwnd_packets = self.cwnd / self.max_datagram_size;
        let diff = diff_packets(cwnd_packets, BASE_RTT_MS, rtt_ms as f64);
        self.throughputs.push(throughput);
        let th = |back: usize| {
            self.throughputs
                .len()
                .checked_sub(1 + back)
                .map(|k| self.throughputs[k])
        };
        let rose = th(1).map(|previous| throughput > previous);
        let step = fig1_with_line_21(diff, self.alpha, self.beta, rose, self.line_21_holds);
        let case = match (th(1), th(2)) {
            (Some(t1), Some(t2)) if self.vegas_l => fig2(throughput - t1, t1 - t2),
            _ => 0,
        };
        let scale = case_scale(case, step);
        let alpha = (self.alpha + step.thresholds * scale).max(1.0);
        self.beta += alpha - self.alpha;
        self.alpha = alpha;
        let minimum = (MINIMUM_WINDOW_PACKETS * MDS) as f64;
        self.cwnd = (self.cwnd + step.cwnd * scale * self.max_datagram_size).max(minimum);
        Outcome {
            diff,
            throughput,
            fig1: step,
            case,
            scale,
        }
    }

    /// The throughput history restarts (rounds no longer consecutive).
    pub fn forget_throughputs(&mut self) {
        self.throughputs.clear();
    }
}

/// `name` with `pairs`, driven out of slow start as Vegas does it (BaseRTT
/// 100 ms, then 110 ms: Diff > gamma at the second check, cwnd cut by 1/8 to
/// 17.5 packets) and through the recovery RTT after the cut, and the model
/// of it: cwnd 21000 bytes, the initial alpha and beta, no throughput yet.
pub fn in_congestion_avoidance(name: &str, pairs: &[&str], alpha: f64, beta: f64) -> (Flow, Model) {
    let mut flow = Flow::new(build(name, pairs));
    flow.rounds(&[ms(100), ms(110), ms(110), ms(110)]);
    flow.round(ms(110));
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
    assert_eq!(flow.cwnd(), 21_000);
    assert_eq!(
        flow.internal("fig1_line"),
        None,
        "no round of congestion avoidance yet"
    );
    let model = Model {
        vegas_l: name == "vegas-l",
        line_21_holds: pairs.contains(&"above_beta_at_alpha_min=hold"),
        cwnd: 21_000.0,
        alpha,
        beta,
        throughputs: Vec::new(),
        max_datagram_size: MDS as f64,
    };
    (flow, model)
}

/// Runs `(idle_ms, rtt_ms)` rounds on the flow and the model and checks
/// cwnd, alpha, beta and the reported line (and case) after each.
pub fn check_rounds(flow: &mut Flow, model: &mut Model, rounds: &[(u64, u64)]) -> Vec<Outcome> {
    rounds
        .iter()
        .enumerate()
        .map(|(k, (idle_ms, rtt_ms))| {
            flow.advance(ms(*idle_ms));
            flow.round(ms(*rtt_ms));
            let out = model.round(*idle_ms, *rtt_ms);
            let at = format!("round {k} ({idle_ms} ms idle, RTT {rtt_ms} ms): {out:?}");
            assert_eq!(flow.cwnd() as f64, model.cwnd, "cwnd, {at}");
            assert_eq!(flow.internal("alpha"), Some(model.alpha), "alpha, {at}");
            assert_eq!(flow.internal("beta"), Some(model.beta), "beta, {at}");
            assert_eq!(
                flow.internal("fig1_line"),
                Some(f64::from(out.fig1.line)),
                "line, {at}"
            );
            if model.vegas_l {
                assert_eq!(
                    flow.internal("case"),
                    Some(f64::from(out.case)),
                    "case, {at}"
                );
            }
            let diff = flow.internal("diff_packets").unwrap_or(f64::NAN);
            assert_eq!(diff, out.diff, "Diff, {at}");
            let th = flow.internal("throughput_bps").unwrap_or(f64::NAN);
            assert!(
                (th - out.throughput * 8.0).abs() <= 1e-9 * th.abs(),
                "throughput {th}, {at}"
            );
            out
        })
        .collect()
}
