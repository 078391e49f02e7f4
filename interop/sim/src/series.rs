//! CSV time series written while the simulation runs: one file per flow,
//! per cross-traffic source and per link (queue).
//!
//! Numbers are written with fixed decimals so that the files are the same
//! bytes for the same run, and small.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

pub struct CsvSeries {
    path: PathBuf,
    writer: BufWriter<File>,
}

impl CsvSeries {
    pub fn create(path: &Path, header: &str) -> anyhow::Result<Self> {
        let file =
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        let mut series = CsvSeries {
            path: path.to_path_buf(),
            writer: BufWriter::new(file),
        };
        series.line(header)?;
        Ok(series)
    }

    pub fn line(&mut self, line: &str) -> anyhow::Result<()> {
        writeln!(self.writer, "{line}")
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    pub fn finish(mut self) -> anyhow::Result<()> {
        self.writer
            .flush()
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}

pub const FLOW_HEADER: &str = "time_s,bytes_delivered,goodput_bps,cwnd_bytes,srtt_ms,min_rtt_ms,rttvar_ms,packets_lost,bytes_retransmitted,delivery_rate_bps";
pub const CROSS_HEADER: &str = "time_s,bytes_sent,bytes_delivered,delivered_bps";
pub const QUEUE_HEADER: &str =
    "time_s,queue_packets,queue_bytes,backlog_packets,max_queue_packets,max_queue_bytes,utilization,dropped_packets,lost_packets";
