//! A recorded ACK/loss event trace: the 1-RTT packets one data sender sent
//! and the ACK frames it received, in time order, as a small text file.
//!
//! ```text
//! vegas-bench-trace 1 max_ack_delay_us=25000
//! # free-form comment lines
//! s 606370 4 44              a packet: time, packet number, size (bytes)
//! s 0 1 44 n                 ... not ack-eliciting (not in flight)
//! a 2411124 0 3-4 4:1212586  an ACK: time, ACK delay (scaled), inclusive
//!                            ranges, optional receive times pn:us
//! ```
//!
//! Times are microseconds since the previous event (the first: since the
//! trace's start), a packet's number is its increase over the previous
//! packet's (the first: the number itself): that keeps the committed traces
//! small. Receive times are the peer's clock, in microseconds.
//!
//! Losses are not in the file: quiche's loss detection finds them again when
//! the trace is replayed, which is part of what a replay measures.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use quic_ext::PacketReceiveTime;

const MAGIC: &str = "vegas-bench-trace";
const VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Sent {
        at: Duration,
        pkt_num: u64,
        size: usize,
        ack_eliciting: bool,
    },
    Ack {
        at: Duration,
        ack_delay: Duration,
        /// Inclusive packet-number ranges.
        ranges: Vec<(u64, u64)>,
        receive_times: Vec<PacketReceiveTime>,
    },
}

impl Event {
    pub fn at(&self) -> Duration {
        match self {
            Event::Sent { at, .. } | Event::Ack { at, .. } => *at,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The receiver's max_ack_delay transport parameter.
    pub max_ack_delay: Duration,
    pub comments: Vec<String>,
    pub events: Vec<Event>,
}

impl Trace {
    pub fn sent_count(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::Sent { .. }))
            .count()
    }

    pub fn ack_count(&self) -> usize {
        self.events.len() - self.sent_count()
    }

    /// The first `limit` events.
    pub fn truncated(mut self, limit: usize) -> Trace {
        self.events.truncate(limit);
        self
    }

    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{MAGIC} {VERSION} max_ack_delay_us={}\n",
            self.max_ack_delay.as_micros()
        );
        for c in &self.comments {
            let _ = writeln!(out, "# {c}");
        }
        let mut last_at = Duration::ZERO;
        let mut last_pn = 0;
        for e in &self.events {
            let dt = e.at().saturating_sub(last_at).as_micros();
            last_at = e.at();
            match e {
                Event::Sent {
                    pkt_num,
                    size,
                    ack_eliciting,
                    ..
                } => {
                    let dpn = pkt_num.saturating_sub(last_pn);
                    last_pn = *pkt_num;
                    let _ = write!(out, "s {dt} {dpn} {size}");
                    if !ack_eliciting {
                        out.push_str(" n");
                    }
                }
                Event::Ack {
                    ack_delay,
                    ranges,
                    receive_times,
                    ..
                } => {
                    let _ = write!(out, "a {dt} {} ", ack_delay.as_micros());
                    let ranges: Vec<String> =
                        ranges.iter().map(|(l, h)| format!("{l}-{h}")).collect();
                    out.push_str(&ranges.join(","));
                    if !receive_times.is_empty() {
                        let times: Vec<String> = receive_times
                            .iter()
                            .map(|t| format!("{}:{}", t.packet_number, t.receive_time.as_micros()))
                            .collect();
                        let _ = write!(out, " {}", times.join(","));
                    }
                }
            }
            out.push('\n');
        }
        out
    }

    pub fn parse(text: &str) -> anyhow::Result<Trace> {
        let mut lines = text.lines().enumerate();
        let (_, header) = lines.next().ok_or_else(|| anyhow!("empty trace"))?;
        let max_ack_delay = parse_header(header).context("line 1")?;
        let mut trace = Trace {
            max_ack_delay,
            comments: Vec::new(),
            events: Vec::new(),
        };
        let mut cursor = Cursor::default();
        for (i, line) in lines {
            let line = line.trim_end();
            if let Some(c) = line.strip_prefix('#') {
                trace.comments.push(c.trim_start().to_string());
                continue;
            }
            if line.is_empty() {
                continue;
            }
            let event = parse_event(line, &mut cursor)
                .with_context(|| format!("line {}: {line:?}", i + 1))?;
            trace.events.push(event);
        }
        Ok(trace)
    }
}

fn parse_header(line: &str) -> anyhow::Result<Duration> {
    let mut words = line.split_whitespace();
    if words.next() != Some(MAGIC) {
        bail!("not a trace: the first line must start with {MAGIC:?}");
    }
    let version: u32 = words
        .next()
        .ok_or_else(|| anyhow!("missing version"))?
        .parse()
        .context("version")?;
    if version != VERSION {
        bail!("trace version {version}, this program reads {VERSION}");
    }
    let delay = words
        .next()
        .and_then(|w| w.strip_prefix("max_ack_delay_us="))
        .ok_or_else(|| anyhow!("missing max_ack_delay_us=N"))?;
    Ok(Duration::from_micros(
        delay.parse().context("max_ack_delay_us")?,
    ))
}

fn micros(word: Option<&str>, what: &str) -> anyhow::Result<Duration> {
    let w = word.ok_or_else(|| anyhow!("missing {what}"))?;
    Ok(Duration::from_micros(
        w.parse().with_context(|| format!("{what} {w:?}"))?,
    ))
}

fn number(word: Option<&str>, what: &str) -> anyhow::Result<u64> {
    let w = word.ok_or_else(|| anyhow!("missing {what}"))?;
    w.parse().with_context(|| format!("{what} {w:?}"))
}

/// Where the previous event left time and packet numbers.
#[derive(Default)]
struct Cursor {
    at: Duration,
    pkt_num: Option<u64>,
}

fn parse_event(line: &str, cursor: &mut Cursor) -> anyhow::Result<Event> {
    let mut words = line.split_whitespace();
    let kind = words.next().unwrap_or_default();
    let mut at = cursor.at;
    if matches!(kind, "s" | "a") {
        at = at
            .checked_add(micros(words.next(), "time")?)
            .ok_or_else(|| anyhow!("time overflows"))?;
    }
    let event = match kind {
        "s" => {
            let increase = number(words.next(), "packet number")?;
            let pkt_num = match cursor.pkt_num {
                None => increase,
                Some(_) if increase == 0 => bail!("packet number does not increase"),
                Some(last) => last
                    .checked_add(increase)
                    .ok_or_else(|| anyhow!("packet number overflows"))?,
            };
            cursor.pkt_num = Some(pkt_num);
            let size = number(words.next(), "size")? as usize;
            let ack_eliciting = match words.next() {
                None => true,
                Some("n") => false,
                Some(w) => bail!("unexpected {w:?} (only \"n\" may follow the size)"),
            };
            Event::Sent {
                at,
                pkt_num,
                size,
                ack_eliciting,
            }
        }
        "a" => {
            let ack_delay = micros(words.next(), "ACK delay")?;
            let ranges = parse_ranges(words.next().ok_or_else(|| anyhow!("missing ranges"))?)?;
            let receive_times = match words.next() {
                Some(w) => parse_times(w)?,
                None => Vec::new(),
            };
            Event::Ack {
                at,
                ack_delay,
                ranges,
                receive_times,
            }
        }
        other => bail!("unknown event {other:?} (s or a)"),
    };
    if let Some(w) = words.next() {
        bail!("unexpected {w:?} at the end");
    }
    cursor.at = at;
    Ok(event)
}

fn parse_ranges(word: &str) -> anyhow::Result<Vec<(u64, u64)>> {
    word.split(',')
        .map(|r| {
            let (l, h) = r
                .split_once('-')
                .ok_or_else(|| anyhow!("range {r:?} is not LOW-HIGH"))?;
            let (l, h) = (
                number(Some(l), "range start")?,
                number(Some(h), "range end")?,
            );
            if l > h {
                bail!("range {r:?} ends before it starts");
            }
            Ok((l, h))
        })
        .collect()
}

fn parse_times(word: &str) -> anyhow::Result<Vec<PacketReceiveTime>> {
    word.split(',')
        .map(|t| {
            let (pn, us) = t
                .split_once(':')
                .ok_or_else(|| anyhow!("receive time {t:?} is not PN:MICROS"))?;
            Ok(PacketReceiveTime {
                packet_number: number(Some(pn), "packet number")?,
                receive_time: micros(Some(us), "receive time")?,
            })
        })
        .collect()
}

/// Frames that do not make a packet ack-eliciting (RFC 9002 section 2).
/// quiche logs our extension frames, ACK_RECEIVE_TIMESTAMPS and
/// QUEUEING_TIME, as `unknown`; neither elicits an ACK.
fn frame_elicits_ack(frame: &serde_json::Value) -> bool {
    !matches!(
        frame.get("frame_type").and_then(|t| t.as_str()),
        Some("ack" | "padding" | "unknown" | "connection_close")
    )
}

/// The data sender's side of a qlog written by `vegas-sim` or the apps
/// (JSON-SEQ, one event per line): its 1-RTT packets sent and the ACK frames
/// (plain, or ours with receive timestamps) it received.
pub fn from_qlog(text: &str) -> anyhow::Result<Trace> {
    let mut ack_delay_exponent = 3u32;
    let mut max_ack_delay = Duration::from_millis(25);
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_start_matches('\u{1e}').trim();
        if line.is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(line).with_context(|| format!("qlog line {}: not JSON", i + 1))?;
        let name = v.get("name").and_then(|n| n.as_str()).unwrap_or_default();
        let data = &v["data"];
        if name == "quic:parameters_set" && data["initiator"] == "remote" {
            if let Some(e) = data["ack_delay_exponent"].as_u64() {
                ack_delay_exponent = u32::try_from(e).context("ack_delay_exponent")?;
                if ack_delay_exponent > 20 {
                    bail!("qlog line {}: ack_delay_exponent {e} above 20", i + 1);
                }
            }
            if let Some(d) = data["max_ack_delay"].as_u64() {
                max_ack_delay = Duration::from_millis(d);
            }
            continue;
        }
        if data["header"]["packet_type"] != "1RTT" {
            continue;
        }
        let Some(time_ms) = v["time"].as_f64().filter(|t| t.is_finite() && *t >= 0.0) else {
            bail!("qlog line {}: no valid time", i + 1);
        };
        let at = Duration::from_micros((time_ms * 1000.0).round() as u64);
        match name {
            "quic:packet_sent" => {
                let pkt_num = data["header"]["packet_number"]
                    .as_u64()
                    .ok_or_else(|| anyhow!("qlog line {}: packet without number", i + 1))?;
                let size = data["raw"]["length"]
                    .as_u64()
                    .ok_or_else(|| anyhow!("qlog line {}: packet without length", i + 1))?;
                let ack_eliciting = data["frames"]
                    .as_array()
                    .is_some_and(|f| f.iter().any(frame_elicits_ack));
                events.push(Event::Sent {
                    at,
                    pkt_num,
                    size: size as usize,
                    ack_eliciting,
                });
            }
            "quic:packet_received" => {
                let scale = |raw: u64| Duration::from_micros(raw << ack_delay_exponent);
                let plain = data["frames"].as_array().into_iter().flatten();
                // Our extension frames sit beside `data` (quiche-seam/extensions.rs).
                let ours = v["extension_frames"].as_array().into_iter().flatten();
                for f in plain.chain(ours) {
                    let (ack_delay, times) = match f["frame_type"].as_str() {
                        // quiche logs the raw field divided by 1000.
                        Some("ack") => (
                            scale((f["ack_delay"].as_f64().unwrap_or(0.0) * 1000.0).round() as u64),
                            Vec::new(),
                        ),
                        Some("ack_receive_timestamps") => (
                            scale(f["ack_delay_raw"].as_u64().unwrap_or(0)),
                            qlog_receive_times(&f["receive_timestamps_us"]),
                        ),
                        _ => continue,
                    };
                    let mut ranges = Vec::new();
                    for r in f["acked_ranges"].as_array().into_iter().flatten() {
                        let (Some(l), Some(h)) = (r[0].as_u64(), r[1].as_u64()) else {
                            bail!("qlog line {}: malformed ACK range {r}", i + 1);
                        };
                        ranges.push((l.min(h), l.max(h)));
                    }
                    if ranges.is_empty() {
                        bail!("qlog line {}: ACK frame without ranges", i + 1);
                    }
                    events.push(Event::Ack {
                        at,
                        ack_delay,
                        ranges,
                        receive_times: times,
                    });
                }
            }
            _ => {}
        }
    }
    if events.is_empty() {
        bail!("no 1-RTT packets in the qlog");
    }
    // The text form stores increases of both.
    if events.windows(2).any(|w| w[1].at() < w[0].at()) {
        bail!("the qlog's events are not in time order");
    }
    let sent_numbers: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            Event::Sent { pkt_num, .. } => Some(*pkt_num),
            Event::Ack { .. } => None,
        })
        .collect();
    if sent_numbers.windows(2).any(|w| w[1] <= w[0]) {
        bail!("the qlog's 1-RTT packet numbers do not increase");
    }
    Ok(Trace {
        max_ack_delay,
        comments: Vec::new(),
        events,
    })
}

fn qlog_receive_times(v: &serde_json::Value) -> Vec<PacketReceiveTime> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some(PacketReceiveTime {
                packet_number: t[0].as_u64()?,
                receive_time: Duration::from_micros(t[1].as_u64()?),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Trace {
        Trace {
            max_ack_delay: Duration::from_millis(25),
            comments: vec!["made by hand".into()],
            events: vec![
                Event::Sent {
                    at: Duration::from_micros(10),
                    pkt_num: 4,
                    size: 1350,
                    ack_eliciting: true,
                },
                Event::Sent {
                    at: Duration::from_micros(10),
                    pkt_num: 5,
                    size: 44,
                    ack_eliciting: false,
                },
                Event::Ack {
                    at: Duration::from_micros(600_010),
                    ack_delay: Duration::from_micros(24),
                    ranges: vec![(1, 2), (4, 4)],
                    receive_times: vec![PacketReceiveTime {
                        packet_number: 4,
                        receive_time: Duration::from_micros(300_000),
                    }],
                },
                Event::Ack {
                    at: Duration::from_micros(600_020),
                    ack_delay: Duration::ZERO,
                    ranges: vec![(5, 5)],
                    receive_times: vec![],
                },
            ],
        }
    }

    #[test]
    fn text_round_trip() {
        let t = sample();
        let text = t.to_text();
        assert!(text.contains("\ns 10 4 1350\ns 0 1 44 n\n"), "{text}");
        assert!(
            text.contains("\na 600000 24 1-2,4-4 4:300000\na 10 0 5-5\n"),
            "{text}"
        );
        assert_eq!(Trace::parse(&text).unwrap(), t);
        assert_eq!((t.sent_count(), t.ack_count()), (2, 2));
    }

    #[test]
    fn bad_traces_are_errors_naming_the_line() {
        let cases = [
            ("", "empty trace"),
            ("something else\n", "not a trace"),
            ("vegas-bench-trace 2 max_ack_delay_us=1\n", "version 2"),
            ("vegas-bench-trace 1\n", "max_ack_delay_us"),
            ("vegas-bench-trace 1 max_ack_delay_us=1\nx 1 2\n", "line 2"),
            (
                "vegas-bench-trace 1 max_ack_delay_us=1\ns 1 2\n",
                "missing size",
            ),
            (
                "vegas-bench-trace 1 max_ack_delay_us=1\ns 1 2 3 y\n",
                "only \"n\"",
            ),
            (
                "vegas-bench-trace 1 max_ack_delay_us=1\na 1 0 5-4\n",
                "ends before",
            ),
            (
                "vegas-bench-trace 1 max_ack_delay_us=1\na 1 0 5\n",
                "LOW-HIGH",
            ),
            (
                "vegas-bench-trace 1 max_ack_delay_us=1\na 1 0 5-5 5\n",
                "PN:MICROS",
            ),
            (
                "vegas-bench-trace 1 max_ack_delay_us=1\ns 5 1 1\ns 4 0 1\n",
                "does not increase",
            ),
            ("vegas-bench-trace 1 max_ack_delay_us=1\ns -1 1 1\n", "time"),
        ];
        for (text, want) in cases {
            let err = format!("{:#}", Trace::parse(text).unwrap_err());
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn qlog_events_become_trace_events() {
        // Exponent 2 from the peer's parameters: raw delay 5 is 20 us; the
        // plain ACK frame's 0.007 is raw 7, 28 us.
        let qlog = [
            r#"{"file_schema":"x"}"#,
            r#"{"time":0.0,"name":"quic:parameters_set","data":{"initiator":"remote","ack_delay_exponent":2,"max_ack_delay":20}}"#,
            r#"{"time":1.0,"name":"quic:packet_sent","data":{"header":{"packet_type":"initial","packet_number":0},"raw":{"length":1200}}}"#,
            r#"{"time":1.5,"name":"quic:packet_sent","data":{"header":{"packet_type":"1RTT","packet_number":3},"raw":{"length":1350},"frames":[{"frame_type":"stream"}]}}"#,
            r#"{"time":1.5,"name":"quic:packet_sent","data":{"header":{"packet_type":"1RTT","packet_number":4},"raw":{"length":40},"frames":[{"frame_type":"ack"},{"frame_type":"padding"}]}}"#,
            r#"{"time":601.25,"name":"quic:packet_received","data":{"header":{"packet_type":"1RTT","packet_number":9},"frames":[{"frame_type":"unknown"}]},"extension_frames":[{"frame_type":"ack_receive_timestamps","ack_delay_raw":5,"acked_ranges":[[3,4]],"receive_timestamps_us":[[4,300100]]}]}"#,
            r#"{"time":602.0,"name":"quic:packet_received","data":{"header":{"packet_type":"1RTT","packet_number":10},"frames":[{"frame_type":"ack","ack_delay":0.007,"acked_ranges":[[1,1],[3,4]]}]}}"#,
        ]
        .join("\n");
        let t = from_qlog(&qlog).unwrap();
        assert_eq!(t.max_ack_delay, Duration::from_millis(20));
        let us = Duration::from_micros;
        assert_eq!(
            t.events,
            vec![
                Event::Sent {
                    at: us(1500),
                    pkt_num: 3,
                    size: 1350,
                    ack_eliciting: true
                },
                Event::Sent {
                    at: us(1500),
                    pkt_num: 4,
                    size: 40,
                    ack_eliciting: false
                },
                Event::Ack {
                    at: us(601_250),
                    ack_delay: us(20),
                    ranges: vec![(3, 4)],
                    receive_times: vec![PacketReceiveTime {
                        packet_number: 4,
                        receive_time: us(300_100)
                    }],
                },
                Event::Ack {
                    at: us(602_000),
                    ack_delay: us(28),
                    ranges: vec![(1, 1), (3, 4)],
                    receive_times: vec![]
                },
            ]
        );
    }

    #[test]
    fn qlog_without_application_packets_is_an_error() {
        let err = from_qlog(
            r#"{"time":0.0,"name":"quic:packet_sent","data":{"header":{"packet_type":"initial"}}}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("no 1-RTT"), "{err}");
        let sent = |t: f64, pn: u64| {
            format!(
                r#"{{"time":{t},"name":"quic:packet_sent","data":{{"header":{{"packet_type":"1RTT","packet_number":{pn}}},"raw":{{"length":9}}}}}}"#
            )
        };
        let err = from_qlog(&[sent(2.0, 1), sent(1.0, 2)].join("\n")).unwrap_err();
        assert!(err.to_string().contains("time order"), "{err}");
        let err = from_qlog(&[sent(1.0, 2), sent(2.0, 2)].join("\n")).unwrap_err();
        assert!(err.to_string().contains("do not increase"), "{err}");
        let err = from_qlog("{not json").unwrap_err();
        assert!(format!("{err:#}").contains("line 1"), "{err:#}");
    }
}
