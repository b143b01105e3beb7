//! Markdown: the same tables as the terminal, as pipe tables.

use super::table::{fastest, generic_table, primitive_table, Table};
use crate::model::{Document, Kind};
use crate::units::{Bytes, BytesPerSec};

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

fn render_table(t: &Table) -> String {
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
    for kind in [
        Kind::File,
        Kind::TlsBulk,
        Kind::TlsHandshake,
        Kind::TlsAccept,
        Kind::SshBulk,
        Kind::SshHandshake,
        Kind::SshAccept,
    ] {
        if let Some(t) = generic_table(doc, kind) {
            s.push_str(&render_table(&t));
        }
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
    s
}
