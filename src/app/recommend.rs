//! `recommend`: a stored run (or a fresh default run) → judge → rank → config lines.

use super::{outputs, policy};
use crate::error::UsageError;
use crate::options::{CommonOptions, RecommendOptions};
use crate::progress;
use crate::report::{self, Outputs};
use crate::store::{self, Store};
use anyhow::Result;
use serde_json::json;

/// `recommend`: a stored run (or a fresh default run) → judge → rank → config lines.
pub(super) fn recommend(c: &CommonOptions, a: &RecommendOptions) -> Result<()> {
    let policy = policy(c)?;
    let names = crate::software::names();
    for t in &c.targets {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(t)) {
            return Err(UsageError::unknown("target", t, names.iter().copied()).into());
        }
    }
    let knowledge = crate::judge::Knowledge::builtin()?;
    for problem in policy.validate(&knowledge) {
        progress::warn(&format!("policy {}: {problem}", policy.name));
    }
    let mut doc = recommend_source(c, a)?;
    let evidence = if a.no_pool { doc.clone() } else { super::pool::pooled(c, &doc) };
    let outcome = crate::recommend::recommend(&evidence, &knowledge, &policy, &crate::software::emitters(&c.targets));
    crate::recommend::attach(&outcome, &mut doc.recommendations, &mut doc.verdicts);
    // What to change in the installed configuration, against this run's figures.
    let (installed, installed_notes) = crate::diff::for_stored_run(&c.targets, &knowledge);
    let (diffs, diff_text) = crate::diff::section(&installed, &installed_notes, &doc, &outcome, &knowledge, &policy);
    doc.run.settings["installed_diff"] = serde_json::to_value(&diffs)?;
    crate::diff::annotate(&mut doc.recommendations, &diffs);
    let checked = super::validate::validate(&mut doc.recommendations, c.no_validate);
    if c.json {
        report::print(&report::json::render(&doc)?)?;
    } else if !c.quiet {
        let text = crate::report::rankings::render(&doc, &policy, &knowledge, &outcome);
        report::print_text(&text)?;
        report::print_text(&report::terminal::fit(&diff_text))?;
        if !checked.is_empty() {
            report::print_text(&report::terminal::fit(&format!("\n{checked}")))?;
        }
    }
    let exports = Outputs {
        json: false,
        quiet: true,
        ..outputs(c)
    };
    report::emit(&doc, &exports)
}

/// The run to recommend from: `--run`, else the latest stored run, else a fresh
/// default run measured now (the same code path as `cipherbench run`).
fn recommend_source(c: &CommonOptions, a: &RecommendOptions) -> Result<crate::model::Document> {
    let db = match c.no_store {
        true => None,
        false => Some(store::chosen(c.db.as_deref())?),
    };
    if let Some(db) = &db {
        let store = Store::open(db)?;
        if a.run.is_some() || !store.runs(1)?.is_empty() {
            return store.load(a.run.as_deref().unwrap_or("latest"));
        }
    } else if a.run.is_some() {
        return Err(UsageError::Invalid("--run reads the history; drop --no-store".into()).into());
    }
    let scratch = tempfile::tempdir()?;
    let db = db.unwrap_or_else(|| scratch.path().join("history.sqlite"));
    if !c.quiet && !c.json {
        eprintln!("no stored run: measuring the default run first (as `cipherbench run`)");
    }
    let measure = CommonOptions {
        db: Some(db.clone()),
        no_store: false,
        quiet: true,
        json: false,
        export_json: None,
        export_csv: None,
        export_markdown: None,
        ..c.clone()
    };
    super::main_job::run_main(&measure, json!({}))?;
    Store::open(&db)?.load("latest")
}
