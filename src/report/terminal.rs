//! The human summary on a terminal: header, tables, the fastest choices, warnings.

use super::table::{fastest, file_tables, kdf_lines, primitive_table, ssh_tables, tls_tables, verdict_warnings, Table};
use crate::model::{Document, RunStatus};
use crate::units::{Bytes, BytesPerSec};
use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, CellAlignment, ContentArrangement};

fn bold(s: &str) -> String {
    if super::colors_enabled() {
        console::style(s).bold().to_string()
    } else {
        s.to_string()
    }
}

pub(crate) fn render_table(t: &Table) -> String {
    let mut ct = comfy_table::Table::new();
    ct.load_preset(UTF8_BORDERS_ONLY)
        .set_content_arrangement(ContentArrangement::Dynamic);
    ct.set_header(t.header.iter().map(Cell::new));
    for row in &t.rows {
        ct.add_row(row.iter().enumerate().map(|(i, c)| {
            let cell = Cell::new(c);
            if i >= 2 {
                cell.set_alignment(CellAlignment::Right)
            } else {
                cell
            }
        }));
    }
    let mut s = format!("{}\n{ct}\n", bold(&t.title));
    for n in &t.notes {
        s.push_str(&format!("  {n}\n"));
    }
    s
}

/// Header line describing where and with what the numbers were made.
pub fn header(doc: &Document) -> String {
    let h = &doc.run.host;
    let openssl = doc.run.libraries.get("openssl").cloned().unwrap_or_default();
    let caps = doc
        .run
        .settings
        .get("cpu_caps")
        .and_then(|v| v.as_str())
        .map(|c| format!(" · masked: {c}"))
        .unwrap_or_default();
    format!(
        "cipherbench {} · run {} · {} ({} cores; {}) · {}{}\n",
        doc.run.command,
        doc.run.id,
        h.cpu_model,
        h.cores,
        if h.cpu_flags.is_empty() {
            "no crypto flags".to_string()
        } else {
            h.cpu_flags.join(" ")
        },
        openssl,
        caps
    )
}

/// The "which is fastest" lines.
pub fn fastest_lines(doc: &Document) -> String {
    let f = fastest(doc);
    if f.is_empty() {
        return String::new();
    }
    let mut s = format!("{}\n", bold(&format!("Fastest at {} (one thread)", Bytes(f[0].bytes))));
    for x in f {
        let tie = if x.tied_with.is_empty() {
            String::new()
        } else {
            format!("  (tied with {}: intervals overlap)", x.tied_with.join(", "))
        };
        s.push_str(&format!(
            "  {:<7} {:<20} {:>12}{tie}\n",
            x.category,
            x.algorithm,
            BytesPerSec(x.median).to_string()
        ));
    }
    s
}

pub fn render(doc: &Document) -> String {
    let mut s = header(doc);
    s.push('\n');
    if let Some(t) = primitive_table(doc) {
        s.push_str(&render_table(&t));
        s.push('\n');
    }
    for t in file_tables(doc) {
        s.push_str(&render_table(&t));
        s.push('\n');
    }
    for line in kdf_lines(doc) {
        s.push_str(&format!("{line}\n"));
    }
    for t in tls_tables(doc) {
        s.push_str(&render_table(&t));
        s.push('\n');
    }
    for t in ssh_tables(doc) {
        s.push_str(&render_table(&t));
        s.push('\n');
    }
    s.push_str(&fastest_lines(doc));
    let warnings = verdict_warnings(doc);
    if !warnings.is_empty() {
        s.push('\n');
        for w in warnings {
            s.push_str(&format!("warning: {w}\n"));
        }
    }
    let noisy = doc.results.iter().filter(|r| r.summary().is_some_and(|x| x.is_noisy())).count();
    if noisy > 0 {
        s.push_str(&format!(
            "\nwarning: {noisy} result(s) had a coefficient of variation above 5%: the machine was busy. Rerun, or raise --budget.\n"
        ));
    }
    match doc.run.status {
        RunStatus::Interrupted => s.push_str(&format!("\nInterrupted: {} result(s) kept.\n", doc.results.len())),
        RunStatus::Failed => s.push_str("\nThe run failed; the results above were kept.\n"),
        _ => {}
    }
    s
}
