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

/// How a later pass's result joins the run's result of the same subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    /// Its samples pooled with the first ones, then at least as wide as the run's
    /// noise for its kind: a second pass over the same subjects (the main job's
    /// race over tied leaders, `check`'s second pass).
    Pool,
    /// In its place: a pass that measured what the first left without an
    /// orderable figure (the SSH physics pass).
    Replace,
}

impl Measurements {
    /// Folds a later pass's results into the run: the one way extra results
    /// join it. Each result joins the run's result of the same kind, metric and
    /// subject as `how` says, or is kept as a new one; one that did not measure
    /// (status not ok) never displaces a figure. Returns how many joined one.
    pub fn fold_in(&mut self, pass: &[ResultRecord], how: Fold) -> Result<usize> {
        use crate::measure::engine;
        let mut joined = 0;
        for r in pass {
            let same = |o: &ResultRecord| o.same_subject(r);
            match self.results.iter().position(same) {
                Some(_) if r.status != crate::model::Status::Ok => {}
                Some(i) => {
                    let folded = match how {
                        Fold::Replace => r.clone(),
                        Fold::Pool => {
                            let pooled = engine::race::pool(&self.results[i], r);
                            match engine::noise::stored(&self.settings, r.kind) {
                                Some(noise) => engine::noise::floor(pooled, noise),
                                None => pooled,
                            }
                        }
                    };
                    self.replace(i, folded)?;
                    joined += 1;
                }
                None => {
                    self.record(r.clone())?;
                }
            }
        }
        Ok(joined)
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Summary;
    use crate::model::{Kind, Metric, Status, Subject};

    fn figure(name: &str, values: &[f64]) -> ResultRecord {
        let subject = Subject {
            algorithm: Some(name.into()),
            ..Default::default()
        };
        let s = Summary::of(values).unwrap();
        ResultRecord::ok(Kind::Primitive, subject, Metric::BytesPerSec, &s, None).with_values(values.to_vec())
    }

    /// Pooled samples join the first ones; a replacing pass puts its figure in
    /// place; a failure never displaces a figure; a new subject is kept.
    #[test]
    fn a_later_pass_joins_the_same_subject_as_it_says_and_a_failure_displaces_nothing() {
        let first = [figure("a", &[10.0, 11.0, 12.0]), figure("b", &[5.0, 5.0, 5.0])];
        let mut failed = figure("a", &[1.0]);
        failed.status = Status::Failed;
        let pass = [figure("a", &[13.0, 14.0]), failed, figure("c", &[7.0, 8.0, 9.0])];
        for how in [Fold::Pool, Fold::Replace] {
            let mut m = Measurements::new();
            for r in first.clone() {
                m.record(r).unwrap();
            }
            assert_eq!(m.fold_in(&pass, how).unwrap(), 1, "{how:?}");
            let names: Vec<_> = m.results().iter().map(|r| r.subject.algorithm.clone().unwrap()).collect();
            assert_eq!(names, ["a", "b", "c"], "{how:?}");
            let a = &m.results()[0];
            assert_eq!(a.status, Status::Ok, "{how:?}");
            let want: &[f64] = match how {
                Fold::Pool => &[10.0, 11.0, 12.0, 13.0, 14.0],
                Fold::Replace => &[13.0, 14.0],
            };
            assert_eq!(a.values, want, "{how:?}");
            assert_eq!(m.results()[1].values, [5.0, 5.0, 5.0]);
        }
    }
}
