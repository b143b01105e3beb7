//! The shapes both the tables and the interop matrix are built of: a table of
//! formatted cells and the throughput cell. Kept apart so that `table.rs` and
//! `interop.rs` both depend on this and not on each other.

use crate::model::{ResultRecord, Status};
use crate::units::BytesPerSec;

/// A rectangular table of already-formatted cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

/// Throughput with its uncertainty when that is worth showing (≥ 1%).
pub fn throughput_cell(r: &ResultRecord) -> String {
    match (r.status, r.summary()) {
        (Status::Ok, Some(s)) => {
            let rel = s.relative_precision();
            let noisy = if s.is_noisy() { "~" } else { "" };
            if rel >= 0.01 {
                format!("{noisy}{} ±{:.0}%", BytesPerSec(s.median), rel * 100.0)
            } else {
                format!("{noisy}{}", BytesPerSec(s.median))
            }
        }
        (Status::Unsupported, _) => "n/a".into(),
        _ if r.was_skipped() => "skipped".into(),
        _ => "failed".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, Metric, Subject};

    /// A subject the budget did not reach reads "skipped", a real failure "failed".
    #[test]
    fn skipped_subjects_are_not_called_failed() {
        let rec = |reason: &str| ResultRecord::not_ok(Kind::SshBulk, Subject::default(), Metric::BytesPerSec, Status::Failed, reason);
        let skipped = rec("skipped: the budget was spent first (raise --budget)");
        assert!(skipped.was_skipped());
        assert_eq!(throughput_cell(&skipped), "skipped");
        let failed = rec("ssh exited with status 255");
        assert!(!failed.was_skipped());
        assert_eq!(throughput_cell(&failed), "failed");
    }
}
