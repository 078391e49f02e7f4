//! `--qvis` of the apps: each connection's qlog, once complete, also in the
//! form qvis loads, `NAME-qvis.qlog` beside `NAME.sqlog` (qvis refuses
//! quiche's JSON-SEQ `.sqlog` as it is).
//!
//! The conversion is qlog-analysis's `to-qvis`, the converter `vegas-sim run
//! --qvis` runs and the test suite checks against qvis's loader: one
//! converter, so the apps' files and the simulator's cannot disagree. The
//! name is the one `qlog-analysis to-qvis QLOGDIR` gives the file. The
//! converter writes a hidden temporary file that is renamed into place once
//! complete, so a `-qvis.qlog` file is never a partial one; the `.sqlog`
//! itself is only read.

use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

use anyhow::Context;

/// The environment variable naming the converter (qlog-analysis's
/// `qlog-analysis` program), as for `vegas-sim run --qvis`.
pub const CONVERTER_ENV: &str = "VEGAS_QLOG_ANALYSIS";

/// What the name of a qlog's qvis form ends with, instead of `.sqlog`.
pub const QVIS_SUFFIX: &str = "-qvis.qlog";

/// Where the qvis form of `sqlog` goes: `DIR/NAME.sqlog` ->
/// `DIR/NAME-qvis.qlog`.
pub fn qvis_path(sqlog: &Path) -> PathBuf {
    let stem = sqlog
        .file_stem()
        .map_or_else(OsString::new, |s| s.to_os_string());
    let mut name = stem;
    name.push(QVIS_SUFFIX);
    sqlog.with_file_name(name)
}

/// Why a qlog has no qvis form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConvertError {
    /// The converter could not be started (not installed, not executable):
    /// no other qlog will convert either.
    CannotRun(String),
    /// The converter ran and failed on this qlog.
    Failed(String),
}

impl std::fmt::Display for ConvertError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            ConvertError::CannotRun(e) | ConvertError::Failed(e) => f.write_str(e),
        }
    }
}

/// qlog-analysis's `to-qvis`, run as a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Converter {
    program: PathBuf,
    /// Run the converter in a process group of its own, so that a Ctrl-C
    /// meant for the app (the server's first one closes its connections,
    /// whose qlogs are then converted) does not kill a conversion.
    own_process_group: bool,
}

impl Converter {
    /// The converter `vegas-sim run --qvis` runs: `$VEGAS_QLOG_ANALYSIS`,
    /// else the repository's `qlog-analysis/.venv/bin/qlog-analysis` above
    /// this program, else `qlog-analysis` on the PATH.
    pub fn locate() -> Converter {
        if let Some(path) = std::env::var_os(CONVERTER_ENV).filter(|p| !p.is_empty()) {
            return Converter::with_program(PathBuf::from(path));
        }
        if let Ok(exe) = std::env::current_exe() {
            for dir in exe.ancestors().skip(1) {
                let candidate = dir.join("qlog-analysis/.venv/bin/qlog-analysis");
                if candidate.is_file() {
                    return Converter::with_program(candidate);
                }
            }
        }
        Converter::with_program(PathBuf::from("qlog-analysis"))
    }

    pub fn with_program(program: PathBuf) -> Converter {
        Converter {
            program,
            own_process_group: false,
        }
    }

    /// See [`Converter::own_process_group`] (the field).
    pub fn in_own_process_group(mut self) -> Converter {
        self.own_process_group = true;
        self
    }

    pub fn program(&self) -> &Path {
        &self.program
    }

    /// Runs `qlog-analysis to-qvis ARGS`; `what` names the input in an
    /// error.
    fn to_qvis(&self, args: &[&std::ffi::OsStr], what: &Path) -> Result<(), ConvertError> {
        let mut command = Command::new(&self.program);
        command
            .arg("to-qvis")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if self.own_process_group {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let mut output = command.output();
        // A program just written (by an installer, or a test) cannot be run
        // while another process still holds it open for writing: that
        // passes.
        for _ in 0..20 {
            match &output {
                Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    output = command.output();
                }
                _ => break,
            }
        }
        let output = output.map_err(|e| {
            ConvertError::CannotRun(format!(
                "cannot run {}: {e} (install qlog-analysis, see qlog-analysis/README.md, or set \
                 {CONVERTER_ENV} to its qlog-analysis program)",
                self.program.display()
            ))
        })?;
        if output.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&output.stderr);
        let last = said.lines().rev().find(|l| !l.trim().is_empty());
        Err(ConvertError::Failed(format!(
            "{} to-qvis {} failed ({}){}",
            self.program.display(),
            what.display(),
            output.status,
            last.map_or_else(String::new, |l| format!(": {}", l.trim()))
        )))
    }

    /// Writes the qvis form of the complete qlog `sqlog` at
    /// [`qvis_path`]; where it went.
    pub fn convert(&self, sqlog: &Path) -> Result<PathBuf, ConvertError> {
        let target = qvis_path(sqlog);
        let name = target
            .file_name()
            .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
        let temporary = target.with_file_name(format!(".{name}.tmp-{}", random_hex()?));
        if let Err(e) = self.to_qvis(
            &[sqlog.as_os_str(), "-o".as_ref(), temporary.as_os_str()],
            sqlog,
        ) {
            std::fs::remove_file(&temporary).ok();
            return Err(e);
        }
        std::fs::rename(&temporary, &target).map_err(|e| {
            std::fs::remove_file(&temporary).ok();
            ConvertError::Failed(format!("cannot write {}: {e}", target.display()))
        })?;
        Ok(target)
    }

    /// [`Self::convert`] of each of `sqlogs`, in one run of the converter
    /// when they share a directory (its start, Python's and its
    /// libraries', costs more than converting a qlog): they are linked
    /// into a fresh hidden directory beside them, which `to-qvis DIR`
    /// converts with the names and bytes it gives each alone. Where that
    /// fails, each is converted alone, so that an error names its qlog.
    pub fn convert_all(&self, sqlogs: &[PathBuf]) -> Vec<Result<PathBuf, ConvertError>> {
        let one_at_a_time = || sqlogs.iter().map(|p| self.convert(p)).collect();
        let Some(dir) = sqlogs.first().and_then(|p| p.parent()) else {
            return Vec::new();
        };
        if sqlogs.len() < 2 || sqlogs.iter().any(|p| p.parent() != Some(dir)) {
            return one_at_a_time();
        }
        let Ok(suffix) = random_hex() else {
            return one_at_a_time();
        };
        let batch = dir.join(format!(".qvis-batch-{suffix}"));
        if std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&batch)
            .is_err()
        {
            return one_at_a_time();
        }
        let linked = sqlogs.iter().all(|p| {
            p.file_name()
                .is_some_and(|name| std::fs::hard_link(p, batch.join(name)).is_ok())
        });
        let ran = if linked {
            self.to_qvis(&[batch.as_os_str()], &batch)
        } else {
            Err(ConvertError::Failed(String::new()))
        };
        let results = match ran {
            Err(ConvertError::CannotRun(e)) => Some(
                sqlogs
                    .iter()
                    .map(|_| Err(ConvertError::CannotRun(e.clone())))
                    .collect(),
            ),
            Err(ConvertError::Failed(_)) => None,
            Ok(()) => Some(
                sqlogs
                    .iter()
                    .map(|p| {
                        let target = qvis_path(p);
                        let written = batch.join(target.file_name().unwrap_or_default());
                        std::fs::rename(&written, &target)
                            .map(|()| target.clone())
                            .map_err(|e| {
                                ConvertError::Failed(format!(
                                    "cannot write {}: {e}",
                                    target.display()
                                ))
                            })
                    })
                    .collect(),
            ),
        };
        // Only links and the converter's output are in it: the qlogs stay.
        std::fs::remove_dir_all(&batch).ok();
        results.unwrap_or_else(one_at_a_time)
    }

    /// [`Self::convert`], reported on stderr in one line as `app` (see
    /// [`report`]).
    pub fn convert_reporting(
        &self,
        sqlog: &Path,
        app: &str,
        report_written: bool,
    ) -> Result<PathBuf, ConvertError> {
        let result = self.convert(sqlog);
        report(&result, sqlog, app, report_written);
        result
    }
}

/// Says on stderr in one line as `app` where the qvis form of `sqlog`
/// went (if `report_written`), or why there is none (the `.sqlog` is kept
/// as it is).
fn report(result: &Result<PathBuf, ConvertError>, sqlog: &Path, app: &str, report_written: bool) {
    match result {
        Ok(written) if report_written => {
            eprintln!("{app}: for qvis: {}", written.display());
        }
        Ok(_) => {}
        Err(e) => eprintln!(
            "{app}: --qvis: {e}; {} is kept, without its qvis form",
            sqlog.display()
        ),
    }
}

/// 16 random hex digits, for names nobody can guess.
fn random_hex() -> Result<String, ConvertError> {
    let mut random = [0u8; 8];
    getrandom::fill(&mut random)
        .map_err(|e| ConvertError::Failed(format!("no randomness: {e}")))?;
    Ok(hex::encode(random))
}

/// Converts closed connections' qlogs on a thread of its own, those that
/// closed during a conversion together in the next
/// ([`Converter::convert_all`]): the server's event loop only hands over a
/// path (a channel send) and never waits for a conversion. [`Self::finish`] (or dropping it)
/// waits for those handed over.
pub struct QvisWriter {
    jobs: Option<mpsc::Sender<PathBuf>>,
    thread: Option<JoinHandle<()>>,
    pending: Arc<AtomicUsize>,
}

impl QvisWriter {
    /// Starts the thread; `app` and `report_written` as for
    /// [`Converter::convert_reporting`]. Once the converter cannot be
    /// started, it says so once and drops what comes after.
    pub fn start(converter: Converter, app: &str, report_written: bool) -> anyhow::Result<Self> {
        let (tx, rx) = mpsc::channel::<PathBuf>();
        let pending = Arc::new(AtomicUsize::new(0));
        let left = Arc::clone(&pending);
        let app = app.to_string();
        let thread = std::thread::Builder::new()
            .name("qvis-writer".into())
            .spawn(move || {
                let mut cannot_run = false;
                while let Ok(first) = rx.recv() {
                    // What closed while the last conversion ran goes in one.
                    let mut batch = vec![first];
                    batch.extend(rx.try_iter());
                    if !cannot_run {
                        for (sqlog, result) in batch.iter().zip(converter.convert_all(&batch)) {
                            if let Err(ConvertError::CannotRun(_)) = result {
                                report(&result, sqlog, &app, report_written);
                                eprintln!("{app}: --qvis: no more qvis files will be written");
                                cannot_run = true;
                                break;
                            }
                            report(&result, sqlog, &app, report_written);
                        }
                    }
                    left.fetch_sub(batch.len(), Ordering::Relaxed);
                }
            })
            .context("cannot start the qvis writer thread")?;
        Ok(QvisWriter {
            jobs: Some(tx),
            thread: Some(thread),
            pending,
        })
    }

    /// Queues the complete qlog `sqlog` for conversion; never blocks.
    pub fn submit(&self, sqlog: PathBuf) {
        if let Some(jobs) = &self.jobs {
            self.pending.fetch_add(1, Ordering::Relaxed);
            if jobs.send(sqlog).is_err() {
                self.pending.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// qlogs handed over and not converted yet.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }

    /// Converts what was handed over, then stops the thread.
    pub fn finish(&mut self) {
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            thread.join().ok();
        }
    }
}

impl Drop for QvisWriter {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    #[test]
    fn the_qvis_form_is_named_as_to_qvis_names_it_in_a_directory() {
        // qlog-analysis's qvis.directory_jobs: X.sqlog -> X-qvis.qlog.
        assert_eq!(
            qvis_path(Path::new("/q/server-00ab.sqlog")),
            Path::new("/q/server-00ab-qvis.qlog")
        );
        assert_eq!(
            qvis_path(Path::new("client-ff.sqlog")),
            Path::new("client-ff-qvis.qlog")
        );
    }

    /// An executable shell script `body` (a stand-in converter taking
    /// `to-qvis IN -o OUT`, i.e. `$2` and `$4`) in `dir`.
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
        path
    }

    #[test]
    fn the_converter_writes_beside_the_qlog_and_failures_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let sqlog = dir.path().join("server-01.sqlog");
        std::fs::write(&sqlog, b"\x1e{}\n").unwrap();
        let copy = script(dir.path(), "copy", r#"[ "$1" = to-qvis ] && cp "$2" "$4""#);
        let written = Converter::with_program(copy).convert(&sqlog).unwrap();
        assert_eq!(written, dir.path().join("server-01-qvis.qlog"));
        assert_eq!(std::fs::read(&written).unwrap(), b"\x1e{}\n");
        std::fs::remove_file(&written).unwrap();

        // Fails half-way: its partial output is not left under any name,
        // the reason is its last line.
        let fail = script(
            dir.path(),
            "fail",
            r#"echo partial > "$4"; echo "vegas-qlog: error: bad record" >&2; exit 3"#,
        );
        let e = Converter::with_program(fail).convert(&sqlog).unwrap_err();
        let ConvertError::Failed(text) = &e else {
            panic!("{e:?}");
        };
        assert!(text.contains("exit status: 3"), "{text}");
        assert!(text.ends_with(": vegas-qlog: error: bad record"), "{text}");
        let missing = Converter::with_program(dir.path().join("no-such-converter"))
            .convert(&sqlog)
            .unwrap_err();
        let ConvertError::CannotRun(text) = &missing else {
            panic!("{missing:?}");
        };
        assert!(text.contains("no-such-converter") && text.contains(CONVERTER_ENV));
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["copy", "fail", "server-01.sqlog"]);
        assert_eq!(std::fs::read(&sqlog).unwrap(), b"\x1e{}\n");
    }

    #[test]
    fn the_writer_never_waits_for_a_conversion() {
        let dir = tempfile::tempdir().unwrap();
        let go = dir.path().join("go");
        // A converter that waits until the test lets it go.
        let slow = script(
            dir.path(),
            "slow",
            &format!(
                // Bounded (about a minute), so that a failed test leaves
                // no process behind.
                r#"i=0; while [ ! -e '{}' ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done; cp "$2" "$4""#,
                go.display()
            ),
        );
        let sqlogs: Vec<PathBuf> = (0..3)
            .map(|i| {
                let p = dir.path().join(format!("server-{i}.sqlog"));
                std::fs::write(&p, format!("{i}")).unwrap();
                p
            })
            .collect();
        let writer = QvisWriter::start(Converter::with_program(slow), "test", false).unwrap();
        // Handed over while the converter cannot finish: had submit waited
        // for it, this would never return.
        let (tx, rx) = mpsc::channel();
        let handed = sqlogs.clone();
        let submitter = std::thread::spawn(move || {
            for p in handed {
                writer.submit(p);
            }
            tx.send(writer.pending()).unwrap();
            writer
        });
        let pending = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("submit waited for the converter");
        assert_eq!(pending, 3);
        let mut writer = submitter.join().unwrap();
        assert!(sqlogs.iter().all(|p| !qvis_path(p).exists()));
        std::fs::write(&go, b"").unwrap();
        writer.finish();
        assert_eq!(writer.pending(), 0);
        for (i, p) in sqlogs.iter().enumerate() {
            assert_eq!(
                std::fs::read_to_string(qvis_path(p)).unwrap(),
                i.to_string()
            );
        }
    }

    #[test]
    fn what_closes_during_a_conversion_is_converted_in_one_run() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        let go = dir.path().join("go");
        // A stand-in for to-qvis (FILE -o OUT, or DIR: X-qvis.qlog beside
        // each X.sqlog) that logs each run and holds the first until the
        // test lets it go (bounded, so a failed test leaves no process).
        let converter = script(
            dir.path(),
            "converter",
            &format!(
                r#"echo "$2" >> '{runs}'
i=0; while [ ! -e '{go}' ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done
if [ -d "$2" ]; then for f in "$2"/*.sqlog; do cp "$f" "${{f%.sqlog}}-qvis.qlog"; done; else cp "$2" "$4"; fi"#,
                runs = runs.display(),
                go = go.display()
            ),
        );
        let qlogs = dir.path().join("qlog");
        std::fs::create_dir(&qlogs).unwrap();
        let sqlogs: Vec<PathBuf> = (0..4)
            .map(|i| {
                let p = qlogs.join(format!("server-{i}.sqlog"));
                std::fs::write(&p, format!("trace {i}")).unwrap();
                p
            })
            .collect();
        let mut writer =
            QvisWriter::start(Converter::with_program(converter), "test", false).unwrap();
        writer.submit(sqlogs[0].clone());
        // Once the first conversion runs, three more close.
        for _ in 0..60_000 {
            if runs.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(runs.exists(), "the converter never started");
        for p in &sqlogs[1..] {
            writer.submit(p.clone());
        }
        std::fs::write(&go, b"").unwrap();
        writer.finish();
        let runs = std::fs::read_to_string(&runs).unwrap();
        let runs: Vec<&str> = runs.lines().collect();
        assert_eq!(runs.len(), 2, "{runs:?}");
        assert_eq!(runs[0], sqlogs[0].to_str().unwrap());
        assert!(runs[1].contains("/.qvis-batch-"), "{runs:?}");
        for (i, p) in sqlogs.iter().enumerate() {
            assert_eq!(
                std::fs::read_to_string(qvis_path(p)).unwrap(),
                format!("trace {i}")
            );
        }
        // The qlogs and their qvis forms, and nothing else.
        let mut names: Vec<String> = std::fs::read_dir(&qlogs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut expected: Vec<String> = (0..4)
            .flat_map(|i| [format!("server-{i}-qvis.qlog"), format!("server-{i}.sqlog")])
            .collect();
        expected.sort();
        assert_eq!(names, expected);
    }
}
