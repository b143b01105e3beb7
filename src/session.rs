//! The store's writer for one run: its identity, the host it ran on and the
//! history database. It carries nothing between the stages: the measuring stages
//! fill a [`Measurements`] value that the app owns and passes on (judge and
//! recommend read the document made from it, [`Session::document`]); the session
//! only watches each result go by, as that value's [`Checkpoint`], writing it to
//! the history at once, so that Ctrl-C or the deadline keeps what was measured.
//! The judge's verdicts and recommend's outcome are handed to it ([`Judged`])
//! with the measurements when the run is closed and written.
//!
//! The results live in memory first. The history database is a copy: when a
//! write fails (a full disk, another process holding the lock), the session
//! stops writing for the rest of the run, keeps measuring, and at the end tries
//! once more to write the run row, every result and the closing status. Either
//! way the caller gets the whole document (for the terminal and the exports)
//! and, separately, what went wrong with the store.

use crate::discover;
use crate::measure::sink::{Checkpoint, Measurements};
use crate::model::{Document, RecommendationRecord, ResultRecord, RunInfo, RunStatus, VerdictRecord, SCHEMA};
use crate::progress::Progress;
use crate::store::Store;
use anyhow::Result;
use std::sync::{Arc, Mutex};

/// What the judge and recommend stages made of a run, as the document keeps it:
/// handed to the session when the run is closed (`Session::finish`).
#[derive(Debug, Default)]
pub struct Judged {
    pub verdicts: Vec<VerdictRecord>,
    pub recommendations: Vec<RecommendationRecord>,
}

impl Judged {
    /// The judge's verdicts of the run's primitives alone (no recommendation).
    pub fn from_verdicts(verdicts: Vec<VerdictRecord>) -> Judged {
        Judged {
            verdicts,
            recommendations: Vec::new(),
        }
    }
}

pub struct Session {
    /// The run row; its settings are the measurements' until the run is written.
    info: RunInfo,
    /// The history database, shared with the checkpoint that writes each result.
    writer: Arc<Mutex<Writer>>,
    /// What the host's software offers (`RunInfo::capabilities`), asked when the
    /// document is first needed: after measuring, so that the budget measures.
    capabilities: std::sync::OnceLock<crate::model::Capabilities>,
}

/// The history database during the run, and its first write that failed
/// (nothing more is written until the run is closed).
struct Writer {
    store: Option<Store>,
    run_id: String,
    failed: Option<String>,
}

/// The runs of this process still open (their writer, history file and run id),
/// for the forced exit's hook ([`mark_open_runs_interrupted`]).
type Open = (std::sync::Weak<Mutex<Writer>>, std::path::PathBuf, String);
static OPEN: Mutex<Vec<Open>> = Mutex::new(Vec::new());

/// On a forced exit (Ctrl-C twice, or a step that did not stop within the
/// interrupt's watchdog): every run still open is marked `interrupted` in its
/// history over a connection of its own (the run's may be busy in the thread
/// that did not stop), what was written of it kept.
fn mark_open_runs_interrupted() {
    let open = OPEN.lock().map(|v| v.clone()).unwrap_or_default();
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for (w, path, id) in open {
        if w.strong_count() > 0 {
            let _ = Store::mark_interrupted(&path, &id, &now);
        }
    }
}

/// The session's eye on the measurements: each result written as it is kept.
struct StoreCheckpoint(Arc<Mutex<Writer>>);

impl Checkpoint for StoreCheckpoint {
    /// Writes result `idx` to the history unless an earlier write failed.
    fn kept(&mut self, idx: usize, r: &ResultRecord) -> Option<String> {
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if w.failed.is_some() {
            return None;
        }
        let e = w.store.as_ref()?.put_result(&w.run_id, idx, r).err()?;
        w.failed = Some(format!("{e:#}"));
        Some("history database failed: results kept in memory".into())
    }
}

/// The libraries with the run's OpenSSH (its settings' `openssh`, set by the
/// commands that ran it: `ssh` and the main job) beside OpenSSL and GnuTLS.
fn with_openssh(
    mut libraries: std::collections::BTreeMap<String, String>,
    settings: &serde_json::Value,
) -> std::collections::BTreeMap<String, String> {
    if let Some(v) = settings.get("openssh").and_then(|v| v.as_str()) {
        libraries.insert("openssh".to_string(), v.to_string());
    }
    libraries
}

/// A sortable, unique-enough run id: `20261122T150405Z-1a2b`.
fn new_id(now: &chrono::DateTime<chrono::Utc>) -> String {
    let mut r = [0u8; 2];
    crate::measure::random_bytes(&mut r);
    format!("{}-{}", now.format("%Y%m%dT%H%M%SZ"), hex::encode(r))
}

impl Session {
    /// Fingerprints the host and writes the run row before anything is measured;
    /// returns the session and the run's (empty) measurements, checkpointed by it.
    pub fn start(command: &str, settings: serde_json::Value, store: Option<Store>, progress: Progress) -> Result<(Session, Measurements)> {
        let now = chrono::Utc::now();
        let info = RunInfo {
            id: new_id(&now),
            started_at: now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            finished_at: None,
            status: RunStatus::Running,
            command: command.to_string(),
            host: discover::host::fingerprint(),
            libraries: with_openssh(discover::openssl::libraries(), &settings),
            settings: settings.clone(),
            capabilities: Default::default(),
        };
        let mut store_failed = None;
        if let Some(s) = &store {
            s.set_busy_timeout(crate::store::RUN_BUSY);
            if let Err(e) = s.begin_run(&info) {
                store_failed = Some(format!("{e:#}"));
            }
        }
        let writer = Arc::new(Mutex::new(Writer {
            store,
            run_id: info.id.clone(),
            failed: store_failed,
        }));
        if let (Ok(mut open), Some(s)) = (
            OPEN.lock(),
            writer
                .lock()
                .ok()
                .as_ref()
                .and_then(|w| w.store.as_ref().map(|s| s.path().to_path_buf())),
        ) {
            open.retain(|(w, _, _)| w.strong_count() > 0);
            open.push((Arc::downgrade(&writer), s, info.id.clone()));
        }
        crate::interrupt::at_forced_exit(mark_open_runs_interrupted);
        let measurements = Measurements {
            checkpoint: Some(Box::new(StoreCheckpoint(writer.clone()))),
            ..Measurements::pass(settings, progress)
        };
        let session = Session {
            info,
            writer,
            capabilities: std::sync::OnceLock::new(),
        };
        Ok((session, measurements))
    }

    /// The measured document as it stands (no verdicts or recommendations yet):
    /// what the judge and recommend stages read.
    pub fn document(&self, measured: &Measurements) -> Document {
        Document {
            schema: SCHEMA.to_string(),
            run: crate::model::RunInfo {
                capabilities: self.capabilities.get_or_init(discover::capabilities).clone(),
                settings: measured.settings.clone(),
                ..self.info.clone()
            },
            results: measured.results.clone(),
            verdicts: Vec::new(),
            recommendations: Vec::new(),
        }
    }

    /// Closes the run with `status` and what was made of it (`judged`), and returns
    /// the document, and separately what went wrong with the history database (the
    /// document is whole either way). After a failure during the run, everything is
    /// written again now.
    pub fn finish(mut self, status: RunStatus, mut measured: Measurements, judged: Judged) -> (Document, Option<crate::error::NotSaved>) {
        measured.progress_finish();
        // The checkpoint (and with it its hold on the writer) goes first.
        measured.checkpoint = None;
        let (store, during) = {
            let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
            (w.store.take(), w.failed.take())
        };
        self.info.status = status;
        self.info.settings = std::mem::take(&mut measured.settings);
        self.info.capabilities = self.capabilities.take().unwrap_or_else(discover::capabilities);
        self.info.finished_at = Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        let doc = Document {
            schema: SCHEMA.to_string(),
            run: self.info,
            results: measured.results,
            verdicts: judged.verdicts,
            recommendations: judged.recommendations,
        };
        let Some(s) = &store else {
            return (doc, None);
        };
        s.set_busy_timeout(crate::store::FINISH_BUSY);
        let write_all = || -> Result<()> {
            s.begin_run(&doc.run)?;
            for (i, r) in doc.results.iter().enumerate() {
                s.put_result(&doc.run.id, i, r)?;
            }
            Ok(())
        };
        let at_end = match &during {
            Some(_) => write_all().and_then(|()| s.finish_run(&doc)),
            None => s.finish_run(&doc),
        };
        let problem = match (during, at_end) {
            (None, Ok(())) => None,
            (Some(d), Ok(())) => Some(format!(
                "the history database {} failed during the run ({d}); every result was written when the run ended",
                s.path().display()
            )),
            (d, Err(e)) => Some(format!(
                "the history database {} failed ({}); the run is not stored (the next run marks it abandoned)",
                s.path().display(),
                d.unwrap_or_else(|| format!("{e:#}"))
            )),
        };
        (doc, problem.map(crate::error::NotSaved))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The session writes each result to the history the moment the measuring
    /// stage records it (before the run closes: what a killed run leaves), and a
    /// replaced one in its place; closing writes the status and the settings.
    #[test]
    fn each_result_reaches_the_history_as_it_is_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let store = Store::open(&path).unwrap();
        let (session, mut measured) = Session::start("speed", serde_json::json!({}), Some(store), Progress::new(true)).unwrap();
        let row = |median: f64| {
            serde_json::json!({"kind": "primitive", "metric": "bytes_per_sec", "status": "ok",
                "subject": {"algorithm": "aes-128-gcm", "op": "encrypt", "bytes": 16384, "library": "openssl", "threads": 1},
                "median": median, "mean": median, "min": median, "max": median,
                "ci95_low": median, "ci95_high": median, "samples": 10, "cv": 0.0})
        };
        let records = crate::testing::doc(serde_json::json!([row(1.0e9), row(2.0e9)])).results;
        let id = session.info.id.clone();
        let stored = || Store::open_read(&path).unwrap().load(&id).unwrap().results;
        assert_eq!(measured.record(records[0].clone()).unwrap(), 0);
        assert_eq!(stored().iter().map(|r| r.median).collect::<Vec<_>>(), [Some(1.0e9)]);
        measured.replace(0, records[1].clone()).unwrap();
        assert_eq!(stored().iter().map(|r| r.median).collect::<Vec<_>>(), [Some(2.0e9)]);
        measured.set_setting("noise", serde_json::json!(0.01));
        assert_eq!(session.document(&measured).results.len(), 1);
        let (doc, problem) = session.finish(RunStatus::Complete, measured, Judged::default());
        assert!(problem.is_none(), "{problem:?}");
        let back = Store::open_read(&path).unwrap().load(&id).unwrap();
        assert_eq!(back.run.status, RunStatus::Complete);
        assert_eq!(back.run.settings["noise"], serde_json::json!(0.01));
        assert_eq!(back.results.len(), doc.results.len());
    }
}
