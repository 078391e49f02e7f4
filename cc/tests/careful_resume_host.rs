//! Careful Resume through the host, around a real controller (Vegas): the
//! host's window and pacing follow the phase machine, the retreat reaches
//! the controller's own window, and the controller is not told of losses
//! the retreat answered.

mod common;

use std::time::Instant;

use common::{ms, MDS, WINDOW};
use vegas_cc::careful_resume::{LossRule, Phase};
use vegas_cc::{
    AckEvent, AckSummary, AckedPacket, CarefulResumeConfig, CcState, ControllerHost,
    ControllerSpec, PacketSent, RttSnapshot, SavedPath,
};

const IW: usize = 10 * MDS;
const SAVED_CWND: u64 = 1_200_000;

fn host(saved: Option<SavedPath>, loss_rule: LossRule) -> ControllerHost {
    let spec = ControllerSpec::new("vegas")
        .unwrap()
        .with_careful_resume(CarefulResumeConfig { saved, loss_rule });
    ControllerHost::new(&spec, WINDOW)
}

fn send(host: &mut ControllerHost, pkt_num: u64, at: Instant, in_flight: usize) {
    host.on_packet_sent(&PacketSent {
        pkt_num,
        size: MDS,
        time_sent: at,
        bytes_in_flight: in_flight,
    });
}

fn ack(host: &mut ControllerHost, pkt_num: u64, sent: Instant, at: Instant, in_flight: usize) {
    let acked = [AckedPacket::new(pkt_num, MDS, sent, at)];
    host.on_ack(&AckEvent {
        now: at,
        acked: &acked,
        summary: AckSummary::of(&acked, 0),
        ack_delay: ms(0),
        rtt: RttSnapshot::uniform(ms(600)),
        bytes_in_flight: in_flight,
        app_limited: false,
        backward_queueing: None,
    });
}

/// Handshake flight acknowledged at t0 + 600 ms, then the initial window
/// sent at once: the window jumps at the first packet Vegas's slow-start
/// pacer would have held back, or at the tenth, which fills it.
fn jumped(t0: Instant, loss_rule: LossRule) -> ControllerHost {
    let mut h = host(
        Some(SavedPath {
            cwnd_bytes: SAVED_CWND,
            rtt: ms(600),
        }),
        loss_rule,
    );
    send(&mut h, 0, t0, 0);
    ack(&mut h, 0, t0, t0 + ms(600), MDS);
    for n in 1..=10u64 {
        send(&mut h, n, t0 + ms(600), (n as usize - 1) * MDS);
    }
    h
}

#[test]
fn the_host_jumps_and_paces_the_jump() {
    let t0 = Instant::now();
    let h = jumped(t0, LossRule::default());
    // jump_cwnd = saved / 2, paced at jump_cwnd per smoothed RTT.
    assert_eq!(h.cwnd(), SAVED_CWND as usize / 2);
    assert_eq!(h.controller().cwnd(), IW, "the controller's own window");
    assert_eq!(h.pacing_rate(), Some(1_000_000));
}

#[test]
fn without_saved_state_the_host_is_the_controller() {
    let t0 = Instant::now();
    let mut with = host(None, LossRule::default());
    let spec = ControllerSpec::new("vegas").unwrap();
    let mut without = ControllerHost::new(&spec, WINDOW);
    for h in [&mut with, &mut without] {
        for n in 0..10u64 {
            send(h, n, t0, n as usize * MDS);
        }
        ack(h, 0, t0, t0 + ms(600), IW);
    }
    assert_eq!(with.cwnd(), without.cwnd());
    assert_eq!(with.pacing_rate(), without.pacing_rate());
}

#[test]
fn a_loss_in_the_unvalidated_phase_sets_the_controller_window() {
    // RFC 9959 as written: every loss is congestion.
    let t0 = Instant::now();
    let mut h = jumped(t0, LossRule::Any);
    let t = t0 + ms(600);
    for n in 11..=100u64 {
        send(&mut h, n, t + ms(n), (n as usize - 1) * MDS);
    }
    // PipeSize is the flight at the jump (no ACK since); the retreat
    // window is half of it, not below two packets.
    let pipesize = h.careful_resume().expect("on").pipesize();
    assert!(pipesize > 0 && pipesize <= IW, "{pipesize}");
    let retreat = (pipesize / 2).max(2 * MDS);
    h.on_congestion_event(t + ms(700), MDS, 1, t, 99 * MDS);
    assert_eq!(h.cwnd(), retreat);
    assert_eq!(h.controller().cwnd(), retreat);
    assert_eq!(h.ssthresh(), retreat);
    // Vegas did not react itself (no recovery epoch of its own).
    assert_ne!(h.state(), CcState::Recovery);
    // A second loss of the jump's packets is not passed on either.
    h.on_congestion_event(t + ms(710), MDS, 50, t + ms(50), 98 * MDS);
    assert_eq!(h.controller().cwnd(), retreat);
    // A spurious-loss rollback does not undo the retreat.
    h.checkpoint();
    assert!(!h.rollback());
    assert_eq!(h.cwnd(), retreat);
}

#[test]
fn under_the_queue_rule_a_random_loss_goes_to_the_controller_and_the_jump_goes_on() {
    let t0 = Instant::now();
    let mut h = jumped(t0, LossRule::QueueSignal);
    let t = t0 + ms(600);
    for n in 11..=100u64 {
        send(&mut h, n, t + ms(n), (n as usize - 1) * MDS);
    }
    // Every RTT so far was 600 ms: no queue, and 1 loss of the 90 packets
    // sent since the jump is within 5 %.
    h.on_congestion_event(t + ms(700), MDS, 1, t, 99 * MDS);
    let cr = h.careful_resume().expect("on");
    assert_eq!(cr.phase(), Phase::Unvalidated);
    assert!(!cr.saved_discarded());
    // Vegas answered it itself (section 3.3: cwnd x 3/4, recovery), and the
    // stack still uses the jump's window.
    assert_eq!(h.controller().cwnd(), IW * 3 / 4);
    assert_eq!(h.state(), CcState::Recovery);
    assert_eq!(h.cwnd(), SAVED_CWND as usize / 2);
}

#[test]
fn a_controller_that_paces_its_initial_window_jumps_at_the_first_held_back_packet() {
    // vegas-sat paces its initial window over about an RTT; the data is
    // ready all along, so the jump should not wait for the window to fill.
    let t0 = Instant::now();
    let spec = ControllerSpec::new("vegas-sat")
        .unwrap()
        .with_careful_resume(CarefulResumeConfig {
            saved: Some(SavedPath {
                cwnd_bytes: SAVED_CWND,
                rtt: ms(600),
            }),
            loss_rule: LossRule::default(),
        });
    let mut h = ControllerHost::new(&spec, WINDOW);
    send(&mut h, 0, t0, 0);
    ack(&mut h, 0, t0, t0 + ms(600), 0);
    let mut now = t0 + ms(600);
    let mut in_flight = 0;
    let mut sent = 0;
    for n in 1..=10u64 {
        // Each packet leaves at the earliest time the pacer allows.
        now = h.next_release_time().map_or(now, |t| t.max(now));
        send(&mut h, n, now, in_flight);
        in_flight += MDS;
        sent = n;
        if h.careful_resume().map(|cr| cr.phase()) == Some(Phase::Unvalidated) {
            break;
        }
    }
    assert_eq!(
        h.careful_resume().map(|cr| cr.phase()),
        Some(Phase::Unvalidated)
    );
    assert!(
        in_flight < IW,
        "jumped after {sent} packets, {in_flight} bytes in flight"
    );
    assert!(now > t0 + ms(600), "the pacer held a packet back");
}
