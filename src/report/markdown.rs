//! Markdown: the same tables as the terminal, as pipe tables.
//!
//! Every piece of text in the file that the code did not write as a literal (a
//! cell, a title, a note, a host or library string) goes through [`md`], so text
//! from an export or a peer reads as the text it is: it can open no HTML tag, no
//! link or image, no code span, no new table cell and no new line.

use super::table::{fastest, tables, verdict_warnings, Block, Table};
use crate::model::Document;
use crate::units::{Bytes, BytesPerSec};

/// `s` as Markdown text that renders as `s`, on one line:
/// - control and invisible format characters (newlines, ESC, NEL, U+2028, bidi
///   overrides) are written as `\x0a` or `\u{202e}`, as on a terminal;
/// - `&`, `<` and `>` become entities, so no HTML tag, autolink or entity comes
///   through (quotes then matter nowhere: no attribute can be opened);
/// - `|` (a new cell), `` ` `` (code), `[` `]` (links and images) and `\` itself
///   are backslash-escaped.
pub(crate) fn md(s: &str) -> String {
    let shown = crate::untrusted::shown(s);
    let mut out = String::with_capacity(shown.len() + 8);
    for c in shown.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' | '`' | '[' | ']' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// One table row: `| a | b |`.
fn row<S: AsRef<str>>(cells: &[S]) -> String {
    format!("| {} |\n", cells.iter().map(|c| md(c.as_ref())).collect::<Vec<_>>().join(" | "))
}

pub(crate) fn render_table(t: &Table) -> String {
    let mut s = format!("## {}\n\n", md(&t.title));
    s.push_str(&row(&t.header));
    s.push_str(&format!(
        "|{}\n",
        t.header
            .iter()
            .enumerate()
            .map(|(i, _)| if i >= 2 { "---:|" } else { "---|" })
            .collect::<String>()
    ));
    for r in &t.rows {
        s.push_str(&row(r));
    }
    s.push('\n');
    for n in &t.notes {
        s.push_str(&format!("- {}\n", md(n)));
    }
    s.push('\n');
    s
}

pub fn render(doc: &Document) -> String {
    let h = &doc.run.host;
    let mut s = format!("# cipherbench {} — run {}\n\n", md(&doc.run.command), md(&doc.run.id));
    s.push_str(&format!(
        "- Host: {} ({} cores), flags: {}\n- Kernel: {}\n",
        md(&h.cpu_model),
        h.cores,
        md(&h.cpu_flags.join(" ")),
        md(&h.kernel)
    ));
    for (lib, ver) in &doc.run.libraries {
        s.push_str(&format!("- {}: {}\n", md(lib), md(ver)));
    }
    s.push_str(&format!(
        "- Started: {}; status: {}\n\n",
        md(&doc.run.started_at),
        doc.run.status.as_str()
    ));
    for b in tables(doc) {
        match b {
            Block::Table(t) => s.push_str(&render_table(&t)),
            Block::Line(line) => s.push_str(&format!("- {}\n", md(&line))),
        }
    }
    let f = fastest(doc);
    if !f.is_empty() {
        s.push_str(&format!(
            "## Fastest at {} (one thread)\n\n| category | algorithm | median | tied with |\n|---|---|---:|---|\n",
            Bytes(f[0].bytes)
        ));
        for x in f {
            s.push_str(&row(&[
                x.category.to_string(),
                x.algorithm,
                BytesPerSec(x.median).to_string(),
                x.tied_with.join(", "),
            ]));
        }
    }
    let warnings = verdict_warnings(doc);
    if !warnings.is_empty() {
        s.push_str("\n## Security warnings\n\n");
        for w in warnings {
            s.push_str(&format!("- {}\n", md(&w)));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_table_syntax_in_outside_text_are_plain_text() {
        assert_eq!(md("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
        assert_eq!(md("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
        assert_eq!(md("a | b"), "a \\| b");
        assert_eq!(
            md("`code` & [link](javascript:x) ![i](http://t/p.png)"),
            "\\`code\\` &amp; \\[link\\](javascript:x) !\\[i\\](http://t/p.png)"
        );
        assert_eq!(md("&lt; stays text"), "&amp;lt; stays text");
        // A backslash cannot swallow the escape of the pipe after it.
        assert_eq!(md("a\\|b"), "a\\\\\\|b");
    }

    #[test]
    fn line_breaks_and_terminal_controls_are_written_as_escapes() {
        let s = md("one\ntwo\r\x1b[2J\x1b]0;x\x07\u{85}\u{2028}\u{202e}end");
        assert_eq!(
            s,
            "one\\\\x0atwo\\\\x0d\\\\x1b\\[2J\\\\x1b\\]0;x\\\\x07\\\\x85\\\\u{2028}\\\\u{202e}end"
        );
        assert!(!s.contains('\n') && !s.chars().any(crate::untrusted::is_hostile), "{s}");
    }

    #[test]
    fn plain_names_and_figures_are_unchanged() {
        for s in [
            "aes-128-gcm",
            "TLS_AES_128_GCM_SHA256",
            "1.23 GB/s ±2%",
            "OpenSSL 3.0.19 27 Jan 2026",
            "=1+1",
        ] {
            assert_eq!(md(s), s);
        }
    }

    #[test]
    fn a_hostile_table_keeps_its_shape() {
        let t = Table {
            title: "<b>T</b>".into(),
            header: vec!["a|b".into(), "c".into()],
            rows: vec![vec!["x\n| y | z |".into(), "<svg onload=alert(1)>".into()]],
            notes: vec!["n\n## heading".into()],
        };
        let out = render_table(&t);
        assert!(!out.contains('<'), "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "## &lt;b&gt;T&lt;/b&gt;");
        assert_eq!(lines[2], "| a\\|b | c |");
        assert_eq!(lines[4], "| x\\\\x0a\\| y \\| z \\| | &lt;svg onload=alert(1)&gt; |");
        assert!(!out.lines().any(|l| l.starts_with("## heading")), "{out}");
    }
}
