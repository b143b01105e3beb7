//! The stored runs: `history`, `report` and `compare`.

use super::{history_store, outputs, policy};
use crate::error::UsageError;
use crate::options::{CommonOptions, CompareOptions, HistoryOptions, ReportOptions};
use crate::report::{self, Outputs};
use crate::store::Store;
use anyhow::Result;

pub(super) fn history(c: &CommonOptions, a: &HistoryOptions) -> Result<()> {
    let store = history_store(c)?;
    let runs = store.runs(a.limit)?;
    if c.json {
        return report::print(&serde_json::to_vec_pretty(&runs)?);
    }
    if runs.is_empty() {
        println!("no runs stored in {} yet", store.path().display());
        return Ok(());
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    t.set_header(["run", "started", "command", "status", "results", "cpu"]);
    for r in runs {
        t.add_row([r.id, r.started_at, r.command, r.status, r.results.to_string(), r.cpu_model]);
    }
    report::print_text(&format!("{t}\n"))
}

pub(super) fn show(c: &CommonOptions, a: &ReportOptions) -> Result<()> {
    // A folder that is missing, or a directory given as the file: bad input (exit 2),
    // like an export path, before anything is read.
    if let Some(o) = &a.output {
        report::check_writable(o, "-o")?;
    }
    let store = history_store(c)?;
    let doc = store.load(&a.run)?;
    let format = a.format.or_else(|| a.output.as_deref().and_then(report::Format::from_path));
    let Some(format) = format else {
        if let Some(o) = &a.output {
            return Err(UsageError::Invalid(format!(
                "cannot tell the format of {} from its name; add --format html|md|json|csv|text",
                o.display()
            ))
            .into());
        }
        return report::emit(&doc, &outputs(c));
    };
    let doc = if format == report::Format::Html {
        with_recommendations(c, doc)?
    } else {
        doc
    };
    let bytes = report::render(&doc, format)?;
    let to_stdout = match (&a.output, format) {
        (Some(p), _) => {
            report::write_output(p, &bytes)?;
            p.as_os_str() == "-"
        }
        (None, report::Format::Html) => {
            let path = report::html::write_report(&doc)?;
            if !c.quiet && !c.json {
                println!("Report: {}", path.display());
            }
            false
        }
        (None, _) => {
            report::print(&bytes)?;
            true
        }
    };
    // The common exports still work beside the report; --json only when stdout is free.
    let exports = Outputs {
        json: c.json && !to_stdout,
        quiet: true,
        ..outputs(c)
    };
    report::emit(&doc, &exports)
}

/// `doc` with recommendations and verdicts under the policy, when it has none yet
/// (runs stored by `speed` or `file` before `recommend` looked at them).
fn with_recommendations(c: &CommonOptions, mut doc: crate::model::Document) -> Result<crate::model::Document> {
    if !doc.recommendations.is_empty() {
        return Ok(doc);
    }
    let policy = policy(c)?;
    let knowledge = crate::judge::Knowledge::builtin()?;
    let outcome = crate::recommend::recommend(&doc, &knowledge, &policy, &crate::software::emitters(&c.targets));
    crate::recommend::attach(&outcome, &mut doc.recommendations, &mut doc.verdicts);
    Ok(doc)
}

pub(super) fn compare(c: &CommonOptions, a: &CompareOptions) -> Result<()> {
    let mut store = None;
    let (da, db) = (compare_side(c, &a.a, &mut store)?, compare_side(c, &a.b, &mut store)?);
    let cmp = report::compare::compare(&a.a, &da, &a.b, &db, a.threshold);
    if c.json {
        report::print(&serde_json::to_vec_pretty(&cmp)?)?;
    } else if !c.quiet {
        report::print_text(&report::compare::terminal::render(&cmp))?;
    }
    // Findings (exit 1): nothing compared is not "no regression", so a CI gate
    // must not pass on it.
    if a.fail_on_regression && cmp.rows.is_empty() {
        return Err(crate::error::Finding(format!(
            "nothing to compare: {} and {} share no measured result (kind, subject and metric), so no regression can be ruled out",
            a.a, a.b
        ))
        .into());
    }
    if a.fail_on_regression && cmp.regressions > 0 {
        return Err(crate::error::Finding(format!(
            "{} regression(s): B ({}) is slower than A ({}) beyond both runs' intervals and the {:.1}% threshold",
            cmp.regressions,
            a.b,
            a.a,
            cmp.threshold * 100.0
        ))
        .into());
    }
    Ok(())
}

/// A run for `compare`: an exported JSON file when `spec` names one, else a run
/// id, prefix or `latest` in the history.
fn compare_side(c: &CommonOptions, spec: &str, store: &mut Option<Store>) -> Result<crate::model::Document> {
    let path = std::path::Path::new(spec);
    if path.is_file() {
        // A file that is not a cipherbench document is bad input (exit 2).
        return report::compare::export::load_json(path).map_err(|e| UsageError::Invalid(format!("{e:#}")).into());
    }
    if spec.ends_with(".json") || spec.contains(std::path::MAIN_SEPARATOR) {
        return Err(UsageError::Invalid(format!("no such file: {spec}")).into());
    }
    if store.is_none() {
        *store = Some(history_store(c)?);
    }
    store.as_ref().expect("opened above").load(spec)
}
