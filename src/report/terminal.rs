//! The human summary on a terminal: header, tables, the fastest choices, warnings.
//!
//! Every text printed here that the code did not write as a literal (a cell, a
//! title, a header, a note, a host or library string) goes through
//! [`crate::untrusted::shown`] first; bold and the table's borders are added after.

use super::table::{fastest, tables, verdict_warnings, Block, Table};
use crate::model::{Document, RunStatus};
use crate::units::{Bytes, BytesPerSec};
use crate::untrusted::shown;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, CellAlignment, ContentArrangement};

fn bold(s: &str) -> String {
    if super::colors_enabled() {
        console::style(s).bold().to_string()
    } else {
        s.to_string()
    }
}

/// The terminal's width when stdout is one; in a pipe or a file, tables keep their
/// natural width.
pub(crate) fn term_width() -> Option<usize> {
    console::Term::stdout()
        .size_checked()
        .map(|(_, cols)| cols as usize)
        .filter(|c| *c >= 40)
}

/// A table for a terminal of `width` columns (`None`: any width). Columns with the
/// same value in every row move into one line above the table; if the rest still
/// does not fit, each row becomes a short paragraph of `header value` pairs, so
/// that no cell is ever broken in the middle of a word.
pub(crate) fn render_table(t: &Table, width: Option<usize>) -> String {
    let t = &shown_table(t);
    let mut header = t.header.clone();
    let mut rows = t.rows.clone();
    let mut common: Vec<String> = Vec::new();
    if width.is_some() && rows.len() > 1 {
        let mut i = 0;
        while i < header.len() {
            let v = &rows[0][i];
            if !v.is_empty() && rows.iter().all(|r| r.get(i) == Some(v)) && header.len() > 2 {
                common.push(format!("{} {v}", header[i]));
                header.remove(i);
                for r in &mut rows {
                    r.remove(i);
                }
            } else {
                i += 1;
            }
        }
    }
    let table = boxed(&header, &rows);
    let natural = table.lines().map(console::measure_text_width).max().unwrap_or(0);
    let words = |text: &str| -> Vec<String> { text.split_whitespace().map(String::from).collect() };
    let mut s = format!("{}\n", bold(&t.title));
    if !common.is_empty() {
        s.push_str(&paragraph("  Every row: ", &separated(common), 4, width));
    }
    match width {
        Some(w) if natural > w => {
            // Too wide even so: one paragraph per row, label columns first.
            // Each `header value` pair stays whole on its line.
            for row in &rows {
                let pairs: Vec<String> = header
                    .iter()
                    .zip(row)
                    .filter(|(_, v)| !v.is_empty())
                    .map(|(h, v)| format!("{h} {v}"))
                    .collect();
                s.push_str(&paragraph("  • ", &separated(pairs), 4, width));
            }
        }
        _ => {
            s.push_str(&table);
            s.push('\n');
        }
    }
    for n in &t.notes {
        s.push_str(&paragraph("  ", &words(n), 4, width));
    }
    s
}

/// The table drawn with borders, label columns left and figures right.
fn boxed(header: &[String], rows: &[Vec<String>]) -> String {
    let mut ct = comfy_table::Table::new();
    ct.load_preset(UTF8_BORDERS_ONLY)
        .set_content_arrangement(ContentArrangement::Disabled);
    ct.set_header(header.iter().map(Cell::new));
    for row in rows {
        ct.add_row(row.iter().enumerate().map(|(i, c)| {
            let cell = Cell::new(c);
            if i >= 2 {
                cell.set_alignment(CellAlignment::Right)
            } else {
                cell
            }
        }));
    }
    ct.to_string()
}

/// Every unit but the last followed by ` ·`.
fn separated(units: Vec<String>) -> Vec<String> {
    let n = units.len();
    units
        .into_iter()
        .enumerate()
        .map(|(i, u)| if i + 1 < n { format!("{u} ·") } else { u })
        .collect()
}

/// `prefix` then `units` (never split), continuation lines indented by `indent`.
fn paragraph(prefix: &str, units: &[String], indent: usize, width: Option<usize>) -> String {
    let lines = match width {
        Some(w) => super::answer::fill(units, w, console::measure_text_width(prefix), indent),
        None => vec![units.join(" ")],
    };
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        out.push_str(&if i == 0 { prefix.to_string() } else { " ".repeat(indent) });
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// `t` with every title, header, cell and note [`shown`]: safe to print.
fn shown_table(t: &Table) -> Table {
    let each = |v: &[String]| -> Vec<String> { v.iter().map(|c| shown(c).into_owned()).collect() };
    Table {
        title: shown(&t.title).into_owned(),
        header: each(&t.header),
        rows: t.rows.iter().map(|r| each(r)).collect(),
        notes: each(&t.notes),
    }
}

/// `text` fitted to the terminal (unchanged in a pipe or a file): a line too wide
/// is broken at spaces, and its continuation lines start at the line's value column
/// (where a `label:   value` or `label   value` line's value begins), so two-column
/// layouts keep their columns. Lines meant to be pasted are never broken: those
/// after a `...apply with...:` or `lines:` heading, deeper-indented, and unified-diff
/// lines. A single word wider than the terminal keeps a line of its own.
pub fn fit(text: &str) -> String {
    match term_width() {
        Some(w) => fit_to(text, w),
        None => text.to_string(),
    }
}

/// A value cut into the pieces a line may break between: list items (`a [x, y],`
/// up to a `, ` outside brackets) stay whole when they fit in `room` columns,
/// otherwise they are cut at spaces.
fn units(value: &str, room: usize) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        cur.push(c);
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ',' if depth <= 0 && chars.peek() == Some(&' ') => {
                items.push(std::mem::take(&mut cur));
            }
            _ => {}
        }
    }
    items.push(cur);
    let mut out = Vec::new();
    for item in items {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        if console::measure_text_width(item) <= room {
            out.push(item.to_string());
        } else {
            out.extend(item.split(' ').filter(|w| !w.is_empty()).map(String::from));
        }
    }
    out
}

/// `fit` for a terminal of `width` columns.
pub fn fit_to(text: &str, width: usize) -> String {
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    let mut out = String::new();
    let mut verbatim_under: Option<usize> = None;
    let mut last_column: Option<(usize, usize)> = None;
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let indent = indent_of(body);
        if let Some(level) = verbatim_under {
            if body.trim().is_empty() || indent > level {
                out.push_str(line);
                continue;
            }
            verbatim_under = None;
        }
        let trimmed = body.trim();
        if trimmed.ends_with(':') && (trimmed.contains("apply with") || trimmed == "lines:") {
            verbatim_under = Some(indent);
        }
        let diff_line = ["+++ ", "--- ", "@@ "].iter().any(|p| trimmed.starts_with(p));
        if console::measure_text_width(body) <= width || diff_line {
            out.push_str(line);
            continue;
        }
        // The value column: after the first run of two or more spaces, or after
        // `label: ` when the label ends with a colon; else two more than the indent.
        // A label that fills its column leaves one space: the column of the line
        // above at the same indent says where the value starts.
        let rest = &body[indent..];
        let column = rest
            .find("  ")
            .map(|i| indent + i + rest[i..].len() - rest[i..].trim_start().len())
            .or_else(|| {
                last_column
                    .filter(|(i, c)| *i == indent && body.is_char_boundary(*c) && body[..*c].ends_with(' '))
                    .map(|(_, c)| c)
            })
            .or_else(|| rest.find(": ").map(|i| indent + i + 2))
            .filter(|c| *c < width / 2 && body.is_char_boundary(*c))
            .unwrap_or(indent + 2);
        last_column = Some((indent, column));
        let head = &body[..column.min(body.len())];
        let words = units(&body[column.min(body.len())..], width.saturating_sub(column));
        let lines = super::answer::fill(&words, width, console::measure_text_width(head), column);
        for (i, l) in lines.iter().enumerate() {
            if i == 0 {
                out.push_str(head);
            } else {
                out.push('\n');
                out.push_str(&" ".repeat(column));
            }
            out.push_str(l);
        }
        out.push_str(nl);
    }
    out
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
        .map(|c| format!(" · masked: {}", shown(c)))
        .unwrap_or_default();
    format!(
        "cipherbench {} · run {} · {} ({} cores; {}) · {}{}\n",
        shown(&doc.run.command),
        shown(&doc.run.id),
        shown(&h.cpu_model),
        h.cores,
        if h.cpu_flags.is_empty() {
            "no crypto flags".to_string()
        } else {
            shown(&h.cpu_flags.join(" ")).into_owned()
        },
        shown(&openssl),
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
            format!("  (tied with {}: intervals overlap)", shown(&x.tied_with.join(", ")))
        };
        s.push_str(&format!(
            "  {:<7} {:<20} {:>12}{tie}\n",
            x.category,
            shown(&x.algorithm),
            BytesPerSec(x.median).to_string()
        ));
    }
    s
}

pub fn render(doc: &Document) -> String {
    render_for(doc, term_width())
}

/// The summary laid out for a terminal of `width` columns (`None`: a pipe or file).
pub fn render_for(doc: &Document, width: Option<usize>) -> String {
    let mut s = match width {
        Some(w) => crate::progress::wrap_words(&header(doc), w, 2).join("\n") + "\n",
        None => header(doc),
    };
    s.push('\n');
    // The noise that left a run's leaders tied, said before the figures.
    let notes = doc
        .recommendations
        .iter()
        .flat_map(|r| r.rankings.iter())
        .flat_map(|r| r.notes.iter().cloned());
    for n in crate::recommend::evidence::headline(notes)
        .iter()
        .filter(|n| !n.starts_with(crate::recommend::evidence::POOLED))
    {
        let line = format!("warning: {}", shown(n));
        for l in crate::progress::wrap_words(&line, width.unwrap_or(usize::MAX), 2) {
            s.push_str(&l);
            s.push('\n');
        }
    }
    for b in tables(doc) {
        match b {
            Block::Table(t) => {
                s.push_str(&render_table(&t, width));
                s.push('\n');
            }
            Block::Line(line) => s.push_str(&format!("{}\n", shown(&line))),
        }
    }
    s.push_str(&fastest_lines(doc));
    let warnings = verdict_warnings(doc);
    if !warnings.is_empty() {
        s.push('\n');
        for w in warnings {
            let line = format!("warning: {}", shown(&w));
            match width {
                Some(cols) => {
                    for l in crate::progress::wrap_words(&line, cols, 2) {
                        s.push_str(&l);
                        s.push('\n');
                    }
                }
                None => {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        }
    }
    let noisy = doc.results.iter().filter(|r| r.summary().is_some_and(|x| x.is_noisy())).count();
    if noisy > 0 {
        let line =
            format!("warning: {noisy} result(s) had a coefficient of variation above 5%: the machine was busy. Rerun, or raise --budget.");
        s.push('\n');
        for l in crate::progress::wrap_words(&line, width.unwrap_or(usize::MAX), 2) {
            s.push_str(&l);
            s.push('\n');
        }
    }
    match doc.run.status {
        RunStatus::Interrupted => s.push_str(&format!("\nInterrupted: {} result(s) kept.\n", doc.results.len())),
        RunStatus::Partial => s.push_str(&format!(
            "\nCut at the run's deadline: {} result(s) kept (status partial).\n",
            doc.results.len()
        )),
        RunStatus::Failed => s.push_str("\nThe run failed; the results above were kept.\n"),
        _ => {}
    }
    s
}

#[cfg(test)]
mod tests {
    use super::{fit_to, render_table, Table};

    /// A stored run whose leaders the noise left tied says so before its tables,
    /// once however many recommendations carry the note; the pooled note is not
    /// a warning.
    #[test]
    fn the_noise_that_left_leaders_tied_is_a_warning_before_the_tables() {
        use crate::model::{RankingRecord, RecommendationRecord};
        let mut doc: crate::model::Document = serde_json::from_value(serde_json::json!({
            "schema": "cipherbench/1",
            "run": {"id": "t", "started_at": "2026-01-01T00:00:00Z", "status": "complete", "command": "ssh",
                    "host": {"cpu_model": "x", "cores": 1, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h"},
                    "libraries": {}, "settings": {}},
            "results": [],
        }))
        .unwrap();
        let noisy =
            "this machine's speed varied ±24% during the run: too noisy to order a and b; a longer --budget or a quieter machine would.";
        let ranking = RankingRecord {
            list: "ssh_ciphers".into(),
            notes: vec!["pooled 3 runs since 2026-11-20 (x)".into(), noisy.into()],
            ..Default::default()
        };
        let rec = RecommendationRecord {
            rankings: vec![ranking],
            ..Default::default()
        };
        doc.recommendations = vec![rec.clone(), rec];
        let text = super::render_for(&doc, None);
        assert_eq!(text.matches("warning: this machine's speed varied ±24%").count(), 1, "{text}");
        assert!(!text.contains("warning: pooled"), "{text}");
        doc.recommendations.clear();
        assert!(!super::render_for(&doc, None).contains("speed varied"));
    }

    #[test]
    fn fit_keeps_the_value_column_and_never_breaks_lines_to_paste() {
        let text = concat!(
            "sshd — /etc/ssh/sshd_config\n",
            "  now:          chacha20-poly1305@openssh.com (implicit MAC) · sntrup761x25519-sha512 · ssh-ed25519\n",
            "    SSH MACs (bulk)              umac-64-etm@openssh.com [weak, refused], umac-128-etm@openssh.com [recommended], hmac-sha2-256-etm@openssh.com [recommended]\n",
            "  the change (apply with `patch -d / -p1`):\n",
            "    --- a/etc/ssh/sshd_config\n",
            "    +++ b/etc/ssh/sshd_config\n",
            "    +Ciphers aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr,aes256-ctr\n",
            "    +MACs hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,umac-128-etm@openssh.com x y\n",
            "  introduces: none\n"
        );
        let out = fit_to(text, 80);
        let lines: Vec<&str> = out.lines().collect();
        // Prose and lists wrap at spaces, continuing at their value column.
        assert!(
            lines[1].starts_with("  now:          chacha20") && lines[1].chars().count() <= 80,
            "{out}"
        );
        assert!(
            lines[2].starts_with("                ") && !lines[2].starts_with("                 "),
            "{out}"
        );
        let macs = lines.iter().position(|l| l.starts_with("    SSH MACs (bulk)")).unwrap();
        assert!(lines[macs + 1].starts_with(&" ".repeat(33)), "{out}");
        // Every word survives, in order.
        let words = |t: &str| t.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(words(&out), words(text));
        // The patch is untouched, even where it is wider than the terminal.
        for l in text.lines().filter(|l| l.starts_with("    +") || l.starts_with("    ---")) {
            assert!(lines.contains(&l), "{l} was broken:\n{out}");
        }
        assert!(lines.contains(&"  introduces: none"), "{out}");
        // A list item stays whole; a label that fills its column keeps the column.
        assert!(
            lines.iter().any(|l| l.contains("umac-64-etm@openssh.com [weak, refused],")),
            "{out}"
        );
        let text = concat!(
            "    SSH MACs (bulk)              hmac-sha2-256-etm@openssh.com [recommended], umac-128-etm@openssh.com [recommended]\n",
            "    SSH key exchange (handshake) sntrup761x25519-sha512 [recommended], curve25519-sha256 [recommended], ecdh-sha2-nistp256 [secure]\n",
        );
        let out = fit_to(text, 80);
        let kex = out.lines().position(|l| l.starts_with("    SSH key exchange")).unwrap();
        let next = out.lines().nth(kex + 1).unwrap();
        assert!(next.starts_with(&" ".repeat(33)) && !next.starts_with(&" ".repeat(34)), "{out}");
    }

    fn table() -> Table {
        let row = |g: &str, c: &str, v: &str| {
            ["TLSv1.3", "ECDHE", g, c, "TLS_AES_128_GCM_SHA256", v, "1"]
                .map(String::from)
                .to_vec()
        };
        Table {
            title: "TLS handshakes".into(),
            header: ["protocol", "kex", "group", "cert", "suite", "handshakes/s", "threads"]
                .map(String::from)
                .to_vec(),
            rows: vec![row("X25519", "rsa-2048", "1001 ±11%"), row("ffdhe3072", "ecdsa-p256", "70 ±6%")],
            notes: vec!["latency: median per handshake, TCP connect included; p95 over the same handshakes, every one of them.".into()],
        }
    }

    #[test]
    fn a_wide_table_keeps_whole_cells_in_80_columns() {
        let text = render_table(&table(), Some(80));
        assert!(text.lines().all(|l| console::measure_text_width(l) <= 80), "{text}");
        // Columns equal in every row are said once; every other cell is whole.
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("Every row: protocol TLSv1.3 · kex ECDHE · suite TLS_AES_128_GCM_SHA256 · threads 1"),
            "{text}"
        );
        assert!(text.lines().any(|l| l.contains("threads 1")), "{text}");
        for cell in ["X25519", "rsa-2048", "1001 ±11%", "ffdhe3072", "70 ±6%"] {
            assert!(text.lines().any(|l| l.contains(cell)), "{cell} broken in {text}");
        }
        // Still too wide without the common columns: one paragraph per row.
        let mut wide = table();
        wide.rows[0][4] = "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256".into();
        wide.rows[1][4] = "TLS_ECDHE_RSA_WITH_CAMELLIA_256_CBC_SHA384".into();
        for r in &mut wide.rows {
            r.push("a long latency column".into());
        }
        wide.header.push("latency".into());
        let text = render_table(&wide, Some(80));
        assert!(text.lines().all(|l| console::measure_text_width(l) <= 80), "{text}");
        assert_eq!(text.lines().filter(|l| l.starts_with("  • ")).count(), 2, "{text}");
        for cell in [
            "suite TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            "handshakes/s 1001 ±11%",
            "latency a long latency column",
            "group ffdhe3072",
        ] {
            assert!(text.lines().any(|l| l.contains(cell)), "{cell} broken in {text}");
        }
    }

    #[test]
    fn in_a_pipe_the_table_keeps_every_column() {
        let text = render_table(&table(), None);
        assert!(
            text.contains("│ protocol") && text.contains("TLSv1.3") && !text.contains("Every row"),
            "{text}"
        );
    }
}
