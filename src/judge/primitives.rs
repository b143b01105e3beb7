//! The judge stage for `speed` and `file`: the knowledge base's verdict for every
//! primitive a run measured.

use crate::model::{ResultRecord, VerdictRecord};

/// The verdict of every catalogue primitive in `results`, once each, in the order
/// first measured (none when the knowledge base does not load: said as a warning).
pub fn primitive_verdicts(results: &[ResultRecord]) -> Vec<VerdictRecord> {
    let knowledge = match super::Knowledge::builtin() {
        Ok(k) => k,
        Err(e) => {
            crate::progress::warn(&format!("the security knowledge base did not load: {e}"));
            return Vec::new();
        }
    };
    let mut names: Vec<&str> = Vec::new();
    for r in results {
        if let Some(a) = r.subject.algorithm.as_deref() {
            if crate::catalog::lookup(a).is_some() && !names.contains(&a) {
                names.push(a);
            }
        }
    }
    names
        .into_iter()
        .map(|n| knowledge.judge(super::Domain::Primitive, n).record())
        .collect()
}
