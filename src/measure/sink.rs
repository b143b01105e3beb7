//! What a measuring stage measured, as it goes: its output value.
//!
//! The stage fills a `Measurements` (results, the run's settings, progress) that
//! the caller owns and reads afterwards: every measuring function takes
//! `&mut Measurements` and records into it. Each result is also shown, the moment it exists, to
//! the `Measurements`' [`Checkpoint`] when there is one: the run's store writer
//! (`session`), so that Ctrl-C, a deadline or a crash keeps everything measured
//! so far. The checkpoint observes; it is not where the stages read from.

use crate::model::ResultRecord;
use crate::progress::Progress;
use anyhow::Result;

/// Sees each result as it is kept (the run's store writer writes it to the
/// history at once). Returns a note to show once when keeping failed (the
/// results stay in memory either way).
pub trait Checkpoint: Send {
    fn kept(&mut self, idx: usize, r: &ResultRecord) -> Option<String>;
}

/// What a measuring stage measured: results in memory, the run's settings, the
/// progress shown, and who checkpoints each result (the run's store writer; none
/// for a re-measuring pass whose results are pooled into the run's afterwards,
/// and in tests).
#[derive(Default)]
pub struct Measurements {
    pub results: Vec<ResultRecord>,
    pub settings: serde_json::Value,
    pub progress: Option<Progress>,
    pub checkpoint: Option<Box<dyn Checkpoint>>,
}

impl Measurements {
    #[cfg(test)]
    pub fn new() -> Measurements {
        Measurements {
            settings: serde_json::json!({}),
            ..Default::default()
        }
    }

    /// An empty pass that starts from the run's `settings` (its noise floors, for a
    /// re-measuring pass) and shows `progress`.
    pub fn pass(settings: serde_json::Value, progress: Progress) -> Measurements {
        Measurements {
            results: Vec::new(),
            settings,
            progress: Some(progress),
            checkpoint: None,
        }
    }

    /// Shows result `idx` to the checkpoint (and its note, the first time it fails).
    fn checkpoint(&mut self, idx: usize) {
        if let (Some(c), Some(r)) = (&mut self.checkpoint, self.results.get(idx)) {
            if let Some(note) = c.kept(idx, r) {
                self.progress_message(&note);
            }
        }
    }
}

impl Measurements {
    /// Keeps a result (and shows it to the checkpoint at once). Returns its index.
    pub fn record(&mut self, r: ResultRecord) -> Result<usize> {
        if let Some(p) = &self.progress {
            p.inc();
        }
        self.results.push(r);
        let idx = self.results.len() - 1;
        self.checkpoint(idx);
        Ok(idx)
    }
    /// Replaces result `idx` after more samples were taken.
    pub fn replace(&mut self, idx: usize, r: ResultRecord) -> Result<()> {
        match self.results.get_mut(idx) {
            Some(slot) => {
                *slot = r;
                self.checkpoint(idx);
                Ok(())
            }
            None => anyhow::bail!("no result {idx} to replace"),
        }
    }
    /// The results so far, in the order recorded.
    pub fn results(&self) -> &[ResultRecord] {
        &self.results
    }
    /// The run's settings so far (a stage reads what an earlier step stored, such
    /// as the noise floor).
    pub fn settings(&self) -> &serde_json::Value {
        &self.settings
    }
    /// Adds or overwrites one key of the run's settings.
    pub fn set_setting(&mut self, key: &str, value: serde_json::Value) {
        if !self.settings.is_object() {
            self.settings = serde_json::json!({});
        }
        if let Some(m) = self.settings.as_object_mut() {
            m.insert(key.to_string(), value);
        }
    }
    /// Progress: `len` units of work start; a message; the work ended.
    pub fn progress_start(&mut self, len: u64) {
        if let Some(p) = &mut self.progress {
            p.start(len);
        }
    }
    pub fn progress_message(&self, msg: &str) {
        if let Some(p) = &self.progress {
            p.message(msg);
        }
    }
    pub fn progress_finish(&mut self) {
        if let Some(p) = &mut self.progress {
            p.finish();
        }
    }
}
