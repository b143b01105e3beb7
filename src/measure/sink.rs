//! Where a measuring stage puts what it measures, as it goes: the stage's output.
//!
//! Measuring writes each result the moment it exists, so that Ctrl-C, a deadline
//! or a crash keeps everything measured so far. The stage therefore does not
//! return one value at the end; it pushes its results into a `Sink`, and what it
//! measured is that sink's `Measurements`: the plain in-memory value (tests,
//! re-measuring passes), which the run's `Session` (the history's writer) also
//! keeps, writing each result to the history as it comes.

use crate::model::ResultRecord;
use crate::progress::Progress;
use anyhow::Result;

pub trait Sink {
    /// Keeps a result (and writes it to the history at once, where there is one).
    /// Returns its index.
    fn record(&mut self, r: ResultRecord) -> Result<usize>;
    /// Replaces result `idx` after more samples were taken.
    fn replace(&mut self, idx: usize, r: ResultRecord) -> Result<()>;
    /// The results so far, in the order recorded.
    fn results(&self) -> &[ResultRecord];
    /// The run's settings so far (the stage reads what an earlier step stored, such
    /// as the noise floor).
    fn settings(&self) -> &serde_json::Value;
    /// Adds or overwrites one key of the run's settings.
    fn set_setting(&mut self, key: &str, value: serde_json::Value);
    /// Progress: `len` units of work start; a message; the work ended.
    fn progress_start(&mut self, _len: u64) {}
    fn progress_message(&self, _msg: &str) {}
    fn progress_finish(&mut self) {}
}

/// What a measuring stage measured: results in memory, the run's settings and
/// the progress shown (a re-measuring pass whose results are pooled into the
/// run's afterwards, tests; the run's `Session` keeps one and adds the history).
#[derive(Default)]
pub struct Measurements {
    pub results: Vec<ResultRecord>,
    pub settings: serde_json::Value,
    pub progress: Option<Progress>,
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
        }
    }
}

impl Sink for Measurements {
    fn record(&mut self, r: ResultRecord) -> Result<usize> {
        if let Some(p) = &self.progress {
            p.inc();
        }
        self.results.push(r);
        Ok(self.results.len() - 1)
    }
    fn replace(&mut self, idx: usize, r: ResultRecord) -> Result<()> {
        match self.results.get_mut(idx) {
            Some(slot) => {
                *slot = r;
                Ok(())
            }
            None => anyhow::bail!("no result {idx} to replace"),
        }
    }
    fn results(&self) -> &[ResultRecord] {
        &self.results
    }
    fn settings(&self) -> &serde_json::Value {
        &self.settings
    }
    fn set_setting(&mut self, key: &str, value: serde_json::Value) {
        if !self.settings.is_object() {
            self.settings = serde_json::json!({});
        }
        if let Some(m) = self.settings.as_object_mut() {
            m.insert(key.to_string(), value);
        }
    }
    fn progress_start(&mut self, len: u64) {
        if let Some(p) = &mut self.progress {
            p.start(len);
        }
    }
    fn progress_message(&self, msg: &str) {
        if let Some(p) = &self.progress {
            p.message(msg);
        }
    }
    fn progress_finish(&mut self) {
        if let Some(p) = &mut self.progress {
            p.finish();
        }
    }
}
