//! The history as evidence: a run pooled with the same machine's earlier runs
//! before `recommend` ranks it (`recommend` and the main job).

use crate::options::CommonOptions;
use crate::store::{self, Store};

/// How many earlier runs of the same machine a recommendation pools at most.
const POOL_RUNS: usize = 9;

/// `doc` with its figures pooled with the history's comparable runs (the same
/// machine, CPU flags and library versions: `store::same_machine`;
/// `recommend::pool` says how), so that one machine gets one answer that firms
/// up as runs accumulate. `doc` itself with `--no-store`, or when the history
/// cannot be read.
pub(super) fn pooled(c: &CommonOptions, doc: &crate::model::Document) -> crate::model::Document {
    if c.no_store {
        return doc.clone();
    }
    match store::chosen(c.db.as_deref())
        .map_err(anyhow::Error::from)
        .and_then(|db| Store::open_read(&db))
        .and_then(|s| s.comparable(&doc.run, POOL_RUNS))
    {
        Ok(earlier) => crate::recommend::pool::pool(doc, &earlier),
        Err(_) => doc.clone(),
    }
}
