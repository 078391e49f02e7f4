//! `vegas-bench`: the Rust side of `scripts/bench`.
//!
//! - `trace-from-qlog SERVER.sqlog OUT.trace`: records the ACK/loss event
//!   trace of a data sender from its qlog (see `trace.rs`).
//! - `replay TRACE --cc NAME`: replays a trace against one controller through
//!   quiche's recovery (`quiche::cc_replay`, patch 0009), once with qlog off
//!   and once with qlog on, each event in a function of its own that is never
//!   inlined, so that `callgrind_annotate --inclusive=yes` gives the
//!   instructions of each kind of event. Prints what it replayed as JSON.

mod trace;

use std::hint::black_box;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use quiche::cc_replay::Replay;
use quiche_vegas::cc_select::CcSelection;
use quiche_vegas::settings::TransportSettings;
use trace::{Event, Trace};

#[derive(Parser)]
#[command(name = "vegas-bench", about = "Benchmark helpers for scripts/bench")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Writes the data sender's ACK/loss event trace from its qlog.
    TraceFromQlog {
        qlog: PathBuf,
        out: PathBuf,
        /// Keep the first N events only.
        #[arg(long)]
        limit: Option<usize>,
        /// A comment line for the trace (repeatable).
        #[arg(long)]
        comment: Vec<String>,
    },
    /// Replays a trace against one controller, qlog off then on.
    Replay {
        trace: PathBuf,
        #[arg(long, default_value = "cubic")]
        cc: String,
        #[arg(long = "cc-param")]
        cc_param: Vec<String>,
        /// Replay the first N events only.
        #[arg(long)]
        limit: Option<usize>,
    },
}

fn main() {
    if let Err(e) = run(Cli::parse()) {
        eprintln!("vegas-bench: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::TraceFromQlog {
            qlog,
            out,
            limit,
            comment,
        } => {
            let text = std::fs::read_to_string(&qlog)
                .with_context(|| format!("cannot read {}", qlog.display()))?;
            let mut trace =
                trace::from_qlog(&text).with_context(|| format!("{}", qlog.display()))?;
            if let Some(n) = limit {
                trace = trace.truncated(n);
            }
            trace.comments = comment;
            write_atomically(&out, &trace.to_text())?;
            eprintln!(
                "{}: {} packets sent, {} ACK frames",
                out.display(),
                trace.sent_count(),
                trace.ack_count()
            );
            Ok(())
        }
        Command::Replay {
            trace,
            cc,
            cc_param,
            limit,
        } => {
            let text = std::fs::read_to_string(&trace)
                .with_context(|| format!("cannot read {}", trace.display()))?;
            let mut t = Trace::parse(&text).with_context(|| format!("{}", trace.display()))?;
            if let Some(n) = limit {
                t = t.truncated(n);
            }
            let params: Vec<&str> = cc_param.iter().map(String::as_str).collect();
            let report = replay_both(&t, &CcSelection::with_params(&cc, &params))?;
            println!("{report}");
            Ok(())
        }
    }
}

/// Writes `path` through a temporary file beside it, so that a failure
/// leaves no partial file.
fn write_atomically(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

fn new_replay(trace: &Trace, cc: &CcSelection, qlog: bool) -> anyhow::Result<Replay> {
    let settings = TransportSettings {
        cc: cc.clone(),
        ..TransportSettings::default()
    };
    let (config, _) = settings.build_config(&[b"h3"])?;
    Ok(Replay::new(&config, trace.max_ack_delay, qlog))
}

/// Which ACK events declare losses (timer expiries before the event
/// included). Loss detection is the stack's, so this is the same in a second
/// replay with the same controller.
#[inline(never)]
fn classify(trace: &Trace, cc: &CcSelection) -> anyhow::Result<Vec<bool>> {
    let mut r = new_replay(trace, cc, false)?;
    let mut lossy = Vec::with_capacity(trace.events.len());
    for e in &trace.events {
        let lost = match e {
            Event::Sent {
                at,
                pkt_num,
                size,
                ack_eliciting,
            } => {
                let lost = r.timers(*at).lost_packets;
                r.sent(*at, *pkt_num, *size, *ack_eliciting);
                lost
            }
            Event::Ack {
                at,
                ack_delay,
                ranges,
                receive_times,
            } => {
                r.timers(*at).lost_packets
                    + r.ack(*at, *ack_delay, ranges, receive_times)
                        .map_err(|e| anyhow::anyhow!("ACK at {at:?} refused: {e}"))?
                        .lost_packets
            }
        };
        lossy.push(lost > 0);
    }
    Ok(lossy)
}

/// Counts of one replay.
#[derive(Debug, Default, PartialEq)]
struct Counts {
    sent: u64,
    acks: u64,
    lossy_acks: u64,
    lost_packets: u64,
    final_cwnd: usize,
}

/// One measured function per kind of event and qlog setting: the symbols
/// `scripts/bench` reads from callgrind. Each fires expired timers first, as
/// the connection does before handling a packet.
macro_rules! measured_event_fns {
    ($tag:literal, $sent:ident, $ack:ident, $lossy_ack:ident) => {
        #[inline(never)]
        fn $sent(
            r: &mut Replay,
            at: std::time::Duration,
            pn: u64,
            size: usize,
            elicits: bool,
        ) -> usize {
            // The tags keep the compiler from merging identical functions.
            black_box($tag);
            let lost = r.timers(at).lost_packets;
            r.sent(at, pn, size, elicits);
            black_box(lost)
        }

        #[inline(never)]
        fn $ack(
            r: &mut Replay,
            at: std::time::Duration,
            delay: std::time::Duration,
            ranges: &[(u64, u64)],
            times: &[quic_ext::PacketReceiveTime],
        ) -> quiche::Result<usize> {
            black_box($tag + 1);
            let lost = r.timers(at).lost_packets;
            Ok(black_box(
                lost + r.ack(at, delay, ranges, times)?.lost_packets,
            ))
        }

        #[inline(never)]
        fn $lossy_ack(
            r: &mut Replay,
            at: std::time::Duration,
            delay: std::time::Duration,
            ranges: &[(u64, u64)],
            times: &[quic_ext::PacketReceiveTime],
        ) -> quiche::Result<usize> {
            black_box($tag + 2);
            let lost = r.timers(at).lost_packets;
            Ok(black_box(
                lost + r.ack(at, delay, ranges, times)?.lost_packets,
            ))
        }
    };
}

measured_event_fns!(10u8, bench_sent, bench_ack, bench_lossy_ack);
measured_event_fns!(20u8, bench_sent_qlog, bench_ack_qlog, bench_lossy_ack_qlog);

type SentFn = fn(&mut Replay, std::time::Duration, u64, usize, bool) -> usize;
type AckFn = fn(
    &mut Replay,
    std::time::Duration,
    std::time::Duration,
    &[(u64, u64)],
    &[quic_ext::PacketReceiveTime],
) -> quiche::Result<usize>;

fn measured_replay(
    trace: &Trace,
    cc: &CcSelection,
    lossy: &[bool],
    qlog: bool,
    (sent_fn, ack_fn, lossy_fn): (SentFn, AckFn, AckFn),
) -> anyhow::Result<Counts> {
    let mut r = new_replay(trace, cc, qlog)?;
    let mut counts = Counts::default();
    for (e, &is_lossy) in trace.events.iter().zip(lossy) {
        match e {
            Event::Sent {
                at,
                pkt_num,
                size,
                ack_eliciting,
            } => {
                counts.lost_packets += sent_fn(&mut r, *at, *pkt_num, *size, *ack_eliciting) as u64;
                counts.sent += 1;
            }
            Event::Ack {
                at,
                ack_delay,
                ranges,
                receive_times,
            } => {
                let f = if is_lossy { lossy_fn } else { ack_fn };
                let lost = f(&mut r, *at, *ack_delay, ranges, receive_times)
                    .map_err(|e| anyhow::anyhow!("ACK at {at:?} refused: {e}"))?;
                if (lost > 0) != is_lossy {
                    anyhow::bail!("the replay is not deterministic: ACK at {at:?} lost {lost}");
                }
                counts.lost_packets += lost as u64;
                counts.acks += 1;
                counts.lossy_acks += u64::from(is_lossy);
            }
        }
    }
    counts.final_cwnd = r.cwnd();
    Ok(counts)
}

fn replay_both(trace: &Trace, cc: &CcSelection) -> anyhow::Result<serde_json::Value> {
    cc.resolve().map_err(|e| anyhow::anyhow!("{e}"))?;
    let lossy = classify(trace, cc)?;
    let off = measured_replay(
        trace,
        cc,
        &lossy,
        false,
        (bench_sent, bench_ack, bench_lossy_ack),
    )?;
    let on = measured_replay(
        trace,
        cc,
        &lossy,
        true,
        (bench_sent_qlog, bench_ack_qlog, bench_lossy_ack_qlog),
    )?;
    if on != off {
        anyhow::bail!("qlog changed the replay: {off:?} against {on:?}");
    }
    Ok(serde_json::json!({
        "cc": cc.name,
        "events": trace.events.len(),
        "sent": off.sent,
        "acks": off.acks,
        "lossy_acks": off.lossy_acks,
        "lost_packets": off.lost_packets,
        "final_cwnd": off.final_cwnd,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Ten packets, the fourth never acknowledged: ACKs of 1-3 and then of
    /// 5-10 in two frames. RFC 9002's packet threshold (3) makes packet 4
    /// lost on the ACK that acknowledges packet 7.
    fn lossy_trace() -> Trace {
        let us = Duration::from_micros;
        let mut events = Vec::new();
        for pn in 1..=10 {
            events.push(Event::Sent {
                at: us(pn * 10),
                pkt_num: pn,
                size: 1350,
                ack_eliciting: true,
            });
        }
        let ack = |at, ranges: Vec<(u64, u64)>| Event::Ack {
            at: us(at),
            ack_delay: Duration::ZERO,
            ranges,
            receive_times: vec![],
        };
        events.push(ack(100_000, vec![(1, 3)]));
        events.push(ack(100_100, vec![(1, 3), (5, 6)]));
        events.push(ack(100_200, vec![(1, 3), (5, 10)]));
        Trace {
            max_ack_delay: Duration::from_millis(25),
            comments: vec![],
            events,
        }
    }

    #[test]
    fn replay_finds_the_loss_for_every_kind_of_controller() {
        for cc in ["cubic", "reno", "bbr2", "vegas", "venodb", "vegas-w"] {
            let report = replay_both(&lossy_trace(), &CcSelection::new(cc)).unwrap();
            assert_eq!(report["sent"], 10, "{cc}");
            assert_eq!(report["acks"], 3, "{cc}");
            assert_eq!(report["lossy_acks"], 1, "{cc}: {report}");
            assert_eq!(report["lost_packets"], 1, "{cc}: {report}");
        }
    }

    #[test]
    fn unknown_algorithm_is_an_error() {
        let err = replay_both(&lossy_trace(), &CcSelection::new("nope")).unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
    }

    #[test]
    fn ack_ranges_beyond_the_packets_sent_are_ignored() {
        let mut t = lossy_trace();
        t.events.push(Event::Ack {
            at: Duration::from_secs(1),
            ack_delay: Duration::ZERO,
            ranges: vec![(1, 99)],
            receive_times: vec![],
        });
        // quiche's recovery ignores ranges beyond what it sent; the replay
        // must at least not fail on them and count the event.
        let report = replay_both(&t, &CcSelection::new("cubic")).unwrap();
        assert_eq!(report["acks"], 4);
    }
}
