//! The store's writer for one run: its identity, the host it ran on, the results
//! so far (the measuring stages' `Sink`), the history database they are written to
//! as they come, and the progress bar. It carries nothing between the stages: the
//! judge's verdicts and recommend's outcome are values the app passes along, handed
//! to the session ([`Judged`]) when the run is closed and written.
//!
//! The results live in memory first. The history database is a copy: when a
//! write fails (a full disk, another process holding the lock), the session
//! stops writing for the rest of the run, keeps measuring, and at the end tries
//! once more to write the run row, every result and the closing status. Either
//! way the caller gets the whole document (for the terminal and the exports)
//! and, separately, what went wrong with the store.

use crate::discover;
use crate::measure::sink::{Measurements, Sink};
use crate::model::{Document, RecommendationRecord, ResultRecord, RunInfo, RunStatus, VerdictRecord, SCHEMA};
use crate::progress::Progress;
use crate::store::Store;
use anyhow::Result;

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
    /// The run row; its settings are `measured`'s until the run is written.
    info: RunInfo,
    store: Option<Store>,
    /// The measuring stages' output, as it comes (results, settings, progress).
    measured: Measurements,
    /// The first history write that failed (nothing more is written until `finish`).
    store_failed: Option<String>,
    /// What the host's software offers (`RunInfo::capabilities`), asked when the
    /// document is first needed: after measuring, so that the budget measures.
    capabilities: std::sync::OnceLock<crate::model::Capabilities>,
}

/// A sortable, unique-enough run id: `20261122T150405Z-1a2b`.
fn new_id(now: &chrono::DateTime<chrono::Utc>) -> String {
    let mut r = [0u8; 2];
    openssl::rand::rand_bytes(&mut r).expect("RNG");
    format!("{}-{}", now.format("%Y%m%dT%H%M%SZ"), hex::encode(r))
}

impl Session {
    /// Fingerprints the host and writes the run row before anything is measured.
    pub fn start(command: &str, settings: serde_json::Value, store: Option<Store>, progress: Progress) -> Result<Session> {
        let now = chrono::Utc::now();
        let info = RunInfo {
            id: new_id(&now),
            started_at: now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            finished_at: None,
            status: RunStatus::Running,
            command: command.to_string(),
            host: discover::host::fingerprint(),
            libraries: discover::openssl::libraries(),
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
        Ok(Session {
            info,
            store,
            measured: Measurements::pass(settings, progress),
            store_failed,
            capabilities: std::sync::OnceLock::new(),
        })
    }

    /// Writes result `idx` to the history unless an earlier write failed.
    fn store_result(&mut self, idx: usize, r: &ResultRecord) {
        if self.store_failed.is_some() {
            return;
        }
        if let Some(s) = &self.store {
            if let Err(e) = s.put_result(&self.info.id, idx, r) {
                self.measured.progress_message("history database failed: results kept in memory");
                self.store_failed = Some(format!("{e:#}"));
            }
        }
    }

    /// The measured document as it stands (no verdicts or recommendations yet):
    /// what the judge and recommend stages read.
    pub fn document(&self) -> Document {
        Document {
            schema: SCHEMA.to_string(),
            run: crate::model::RunInfo {
                capabilities: self.capabilities.get_or_init(discover::capabilities).clone(),
                settings: self.measured.settings.clone(),
                ..self.info.clone()
            },
            results: self.measured.results.clone(),
            verdicts: Vec::new(),
            recommendations: Vec::new(),
        }
    }

    /// Closes the run with `status` and what was made of it (`judged`), and returns
    /// the document, and separately what went wrong with the history database (the
    /// document is whole either way). After a failure during the run, everything is
    /// written again now.
    pub fn finish(mut self, status: RunStatus, judged: Judged) -> (Document, Option<crate::error::NotSaved>) {
        self.measured.progress_finish();
        self.info.status = status;
        self.info.settings = std::mem::take(&mut self.measured.settings);
        self.info.capabilities = self.capabilities.take().unwrap_or_else(discover::capabilities);
        self.info.finished_at = Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        let doc = Document {
            schema: SCHEMA.to_string(),
            run: self.info,
            results: self.measured.results,
            verdicts: judged.verdicts,
            recommendations: judged.recommendations,
        };
        let Some(s) = &self.store else {
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
        let during = self.store_failed.take();
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

/// The session is the measuring stages' sink: each result is kept in its
/// [`Measurements`] and written to the history at once.
impl Sink for Session {
    /// Keeps a result and writes it to the history at once. Returns its index.
    fn record(&mut self, r: ResultRecord) -> Result<usize> {
        self.store_result(self.measured.results.len(), &r);
        self.measured.record(r)
    }
    /// Replaces a result after more samples were taken.
    fn replace(&mut self, idx: usize, r: ResultRecord) -> Result<()> {
        self.store_result(idx, &r);
        self.measured.replace(idx, r)
    }
    fn results(&self) -> &[ResultRecord] {
        &self.measured.results
    }
    fn settings(&self) -> &serde_json::Value {
        &self.measured.settings
    }
    /// Adds or overwrites one key of the run's settings (stored when the run ends).
    fn set_setting(&mut self, key: &str, value: serde_json::Value) {
        self.measured.set_setting(key, value);
    }
    fn progress_start(&mut self, len: u64) {
        self.measured.progress_start(len);
    }
    fn progress_message(&self, msg: &str) {
        self.measured.progress_message(msg);
    }
    fn progress_finish(&mut self) {
        self.measured.progress_finish();
    }
}
