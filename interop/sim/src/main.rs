//! `vegas-sim run SCENARIO.toml [--cc NAME] [--cc-param K=V]... [--seed N]
//! [--set KEY.PATH=VALUE]... [--out DIR] [--qvis]`

use std::path::{Path, PathBuf};
use std::process::{Command as Process, ExitCode};

use clap::{Parser, Subcommand};
use vegas_sim::{Overrides, Scenario};

/// mimalloc for this binary only: quiche allocates per packet (stream
/// buffers, frames, transport parameters), and the system allocator's share
/// of a run was about 9 % (docs/benchmarks.md, section 3). Built from its C
/// source by the `cc` crate: no system package needed.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "vegas-sim",
    about = "Virtual-time network simulator running real quiche connections",
    version
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs a scenario and writes summary.json, CSV series and qlogs.
    Run {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Congestion controller of every flow marked `under_test = true`.
        #[arg(long = "cc", value_name = "NAME")]
        cc: Option<String>,
        /// Parameter of the flows under test (repeatable).
        #[arg(long = "cc-param", value_name = "KEY=VALUE")]
        cc_params: Vec<String>,
        /// Seed of every random choice (overrides the scenario's).
        #[arg(long)]
        seed: Option<u64>,
        /// Changes one value of the scenario before it is read, e.g.
        /// `--set links.bottleneck.packet_loss=0.02` (repeatable).
        #[arg(long = "set", value_name = "KEY.PATH=VALUE")]
        set: Vec<String>,
        /// Output directory (default: out/sim/<scenario name>).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Write no .sqlog files (for long runs).
        #[arg(long, conflicts_with = "qlog")]
        no_qlog: bool,
        /// Write .sqlog files even where the default leaves them out (runs
        /// of more than one flow longer than 60 s).
        #[arg(long)]
        qlog: bool,
        /// Also write each connection's qlogs as qvis loads them,
        /// NAME-qvis.qlog beside NAME-client.sqlog and NAME-server.sqlog
        /// (implies --qlog). The converter is qlog-analysis's `to-qvis`:
        /// $VEGAS_QLOG_ANALYSIS, else the repository's
        /// qlog-analysis/.venv/bin/qlog-analysis above this binary, else
        /// qlog-analysis on the PATH.
        #[arg(long, conflicts_with = "no_qlog")]
        qvis: bool,
    },
}

/// The `qlog-analysis` program `--qvis` runs (see its help): the apps'
/// lookup, so that all three find the same converter.
fn qvis_converter() -> PathBuf {
    quiche_vegas::qvis::Converter::locate()
        .program()
        .to_path_buf()
}

/// Converts the run's qlogs in `out` for qvis (one converter for the apps'
/// qlogs and ours: qlog-analysis's, tested against qvis's loader).
fn write_qvis(out: &Path) -> Result<(), String> {
    let converter = qvis_converter();
    let status = Process::new(&converter)
        .arg("to-qvis")
        .arg(out)
        .status()
        .map_err(|e| {
            format!(
                "--qvis: cannot run {}: {e} (install qlog-analysis, see qlog-analysis/README.md, \
                 or set VEGAS_QLOG_ANALYSIS to its qlog-analysis program)",
                converter.display()
            )
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "--qvis: {} to-qvis {} failed ({status})",
            converter.display(),
            out.display()
        ))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            scenario,
            cc,
            cc_params,
            seed,
            set,
            out,
            no_qlog,
            qlog,
            qvis,
        } => {
            let overrides = Overrides {
                seed,
                cc,
                cc_params,
                set,
            };
            let mut loaded = match Scenario::load(&scenario, &overrides) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("vegas-sim: {e}");
                    return ExitCode::from(2);
                }
            };
            if no_qlog {
                loaded.qlog = false;
            } else if qlog || qvis {
                loaded.qlog = true;
            } else if loaded.qlog_off_by_default {
                eprintln!(
                    "vegas-sim: no qlogs: {} flows for more than {} s (their qlogs would be gigabytes); \
                     --qlog or qlog = true writes them",
                    loaded.flows.len(),
                    vegas_sim::scenario::QLOG_DEFAULT_OFF_AFTER_S
                );
            }
            let out = out.unwrap_or_else(|| {
                let stem = scenario
                    .file_stem()
                    .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
                PathBuf::from("out/sim").join(stem)
            });
            match vegas_sim::run(&loaded, &out) {
                Ok(summary) => {
                    print!("{}", vegas_sim::report::table(&summary));
                    println!("outputs in {}", out.display());
                    if qvis {
                        if let Err(e) = write_qvis(&out) {
                            eprintln!("vegas-sim: {e}");
                            return ExitCode::FAILURE;
                        }
                    } else if loaded.qlog && !loaded.flows.is_empty() {
                        // qvis refuses quiche's .sqlog as it is.
                        println!(
                            "for qvis: qlog-analysis to-qvis {} (writes NAME-qvis.qlog per flow; or run with --qvis)",
                            out.display()
                        );
                    }
                    let unverified: Vec<&str> = summary
                        .flows
                        .iter()
                        .filter(|f| f.verified == Some(false))
                        .map(|f| f.name.as_str())
                        .collect();
                    if unverified.is_empty() {
                        ExitCode::SUCCESS
                    } else {
                        eprintln!(
                            "vegas-sim: the body received by {} does not match what was sent",
                            unverified.join(", ")
                        );
                        ExitCode::FAILURE
                    }
                }
                Err(e) => {
                    eprintln!("vegas-sim: {}: {e:#}", scenario.display());
                    ExitCode::FAILURE
                }
            }
        }
    }
}
