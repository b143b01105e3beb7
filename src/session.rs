//! One run in progress: its identity, the host it ran on, the results so far, the
//! history database they are written to as they come, and the progress bar.

use crate::discover;
use crate::model::{Document, ResultRecord, RunInfo, RunStatus, SCHEMA};
use crate::report::progress::Progress;
use crate::store::Store;
use anyhow::Result;

pub struct Session {
    info: RunInfo,
    store: Option<Store>,
    results: Vec<ResultRecord>,
    verdicts: Vec<serde_json::Value>,
    recommendations: Vec<serde_json::Value>,
    progress: Progress,
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
            settings,
        };
        if let Some(s) = &store {
            s.begin_run(&info)?;
        }
        Ok(Session {
            info,
            store,
            results: Vec::new(),
            verdicts: Vec::new(),
            recommendations: Vec::new(),
            progress,
        })
    }

    /// Keeps a result and writes it to the history at once. Returns its index.
    pub fn record(&mut self, r: ResultRecord) -> Result<usize> {
        let idx = self.results.len();
        if let Some(s) = &self.store {
            s.put_result(&self.info.id, idx, &r)?;
        }
        self.results.push(r);
        self.progress.inc();
        Ok(idx)
    }

    /// A session for re-measuring: the same run and host, no history database (its
    /// results are merged into this one with `replace`/`record`).
    pub fn scratch(&self, progress: Progress) -> Session {
        Session {
            info: self.info.clone(),
            store: None,
            results: Vec::new(),
            verdicts: Vec::new(),
            recommendations: Vec::new(),
            progress,
        }
    }

    /// Adds or overwrites one key of the run's settings (stored when the run ends).
    pub fn set_setting(&mut self, key: &str, value: serde_json::Value) {
        if let Some(m) = self.info.settings.as_object_mut() {
            m.insert(key.to_string(), value);
        }
    }

    /// Replaces a result after more samples were taken.
    pub fn replace(&mut self, idx: usize, r: ResultRecord) -> Result<()> {
        if let Some(s) = &self.store {
            s.put_result(&self.info.id, idx, &r)?;
        }
        self.results[idx] = r;
        Ok(())
    }

    pub fn results(&self) -> &[ResultRecord] {
        &self.results
    }

    /// Attaches the knowledge base's verdict for every primitive measured (the
    /// judge stage for `speed` and `file`).
    pub fn judge_primitives(&mut self) {
        let knowledge = match crate::judge::Knowledge::builtin() {
            Ok(k) => k,
            Err(e) => {
                crate::report::progress::warn(&format!("the security knowledge base did not load: {e}"));
                return;
            }
        };
        let mut names: Vec<&str> = Vec::new();
        for r in &self.results {
            if let Some(a) = r.subject.algorithm.as_deref() {
                if crate::measure::primitive::lookup(a).is_some() && !names.contains(&a) {
                    names.push(a);
                }
            }
        }
        for n in names {
            let v = knowledge.judge(crate::judge::Domain::Primitive, n);
            if let Ok(json) = serde_json::to_value(v) {
                self.verdicts.push(json);
            }
        }
    }

    /// The document as it stands, for the judge and recommend stages.
    pub fn snapshot(&self) -> Document {
        Document {
            schema: SCHEMA.to_string(),
            run: self.info.clone(),
            results: self.results.clone(),
            verdicts: self.verdicts.clone(),
            recommendations: self.recommendations.clone(),
        }
    }

    /// Keeps what `recommend` made of the run: its recommendations and the
    /// verdicts of every option it ranked.
    pub fn set_recommendations(&mut self, outcome: &crate::recommend::Outcome) -> Result<()> {
        Ok(crate::recommend::attach(outcome, &mut self.recommendations, &mut self.verdicts)?)
    }

    /// The document's `recommendations[]`, for steps that annotate them (the
    /// installed-configuration diff adds `now`, `gain` and `diff`).
    pub fn recommendations_mut(&mut self) -> &mut Vec<serde_json::Value> {
        &mut self.recommendations
    }

    pub fn progress_start(&mut self, len: u64) {
        self.progress.start(len);
    }
    pub fn progress_message(&self, msg: &str) {
        self.progress.message(msg);
    }
    pub fn progress_finish(&mut self) {
        self.progress.finish();
    }

    /// Closes the run with `status` and returns the document.
    pub fn finish(mut self, status: RunStatus) -> Result<Document> {
        self.progress.finish();
        self.info.status = status;
        self.info.finished_at = Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        let doc = Document {
            schema: SCHEMA.to_string(),
            run: self.info,
            results: self.results,
            verdicts: self.verdicts,
            recommendations: self.recommendations,
        };
        if let Some(s) = &self.store {
            s.finish_run(&doc)?;
        }
        Ok(doc)
    }
}
