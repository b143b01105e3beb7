//! Markdown: the same tables as the terminal, as pipe tables.

use super::table::{fastest, file_tables, kdf_lines, primitive_table, ssh_tables, tls_tables, verdict_warnings, Table};
use crate::model::Document;
use crate::units::{Bytes, BytesPerSec};

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

pub(crate) fn render_table(t: &Table) -> String {
    let mut s = format!("## {}\n\n", t.title);
    s.push_str(&format!(
        "| {} |\n",
        t.header.iter().map(|h| escape(h)).collect::<Vec<_>>().join(" | ")
    ));
    s.push_str(&format!(
        "|{}\n",
        t.header
            .iter()
            .enumerate()
            .map(|(i, _)| if i >= 2 { "---:|" } else { "---|" })
            .collect::<String>()
    ));
    for row in &t.rows {
        s.push_str(&format!("| {} |\n", row.iter().map(|c| escape(c)).collect::<Vec<_>>().join(" | ")));
    }
    s.push('\n');
    for n in &t.notes {
        s.push_str(&format!("- {}\n", escape(n)));
    }
    s.push('\n');
    s
}

pub fn render(doc: &Document) -> String {
    let h = &doc.run.host;
    let mut s = format!("# cipherbench {} — run {}\n\n", doc.run.command, doc.run.id);
    s.push_str(&format!(
        "- Host: {} ({} cores), flags: {}\n- Kernel: {}\n",
        h.cpu_model,
        h.cores,
        h.cpu_flags.join(" "),
        h.kernel
    ));
    for (lib, ver) in &doc.run.libraries {
        s.push_str(&format!("- {lib}: {ver}\n"));
    }
    s.push_str(&format!(
        "- Started: {}; status: {}\n\n",
        doc.run.started_at,
        doc.run.status.as_str()
    ));
    if let Some(t) = primitive_table(doc) {
        s.push_str(&render_table(&t));
    }
    for t in file_tables(doc) {
        s.push_str(&render_table(&t));
    }
    for line in kdf_lines(doc) {
        s.push_str(&format!("- {line}\n"));
    }
    for t in tls_tables(doc) {
        s.push_str(&render_table(&t));
    }
    for t in ssh_tables(doc) {
        s.push_str(&render_table(&t));
    }
    let f = fastest(doc);
    if !f.is_empty() {
        s.push_str(&format!(
            "## Fastest at {} (one thread)\n\n| category | algorithm | median | tied with |\n|---|---|---:|---|\n",
            Bytes(f[0].bytes)
        ));
        for x in f {
            s.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                x.category,
                x.algorithm,
                BytesPerSec(x.median),
                x.tied_with.join(", ")
            ));
        }
    }
    let warnings = verdict_warnings(doc);
    if !warnings.is_empty() {
        s.push_str("\n## Security warnings\n\n");
        for w in warnings {
            s.push_str(&format!("- {}\n", escape(&w)));
        }
    }
    s
}
