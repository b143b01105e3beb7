//! The main job's answer: what this machine should use, not a pile of numbers.
//! Built from the recommend stage's rankings; the full tables are in the report.

use crate::model::Document;
use crate::recommend::{figure, list_title, Outcome};

fn bold(s: &str) -> String {
    if super::colors_enabled() {
        console::style(s).bold().to_string()
    } else {
        s.to_string()
    }
}

/// Tied TLS 1.2 suites that differ only in the certificate type share one bulk
/// figure (the same Enc and Mac): `TLS_ECDHE_ECDSA_WITH_X` and `TLS_ECDHE_RSA_WITH_X`
/// read as `TLS_ECDHE_{ECDSA,RSA}_WITH_X`. Other names pass through; order is kept.
pub(crate) fn group_auth(names: &[&str]) -> Vec<String> {
    // (key exchange, rest) -> authentications, in order of first appearance.
    type Group<'a> = (Option<(&'a str, &'a str)>, Vec<&'a str>);
    let mut groups: Vec<Group> = Vec::new();
    for &n in names {
        let split = n
            .strip_prefix("TLS_")
            .and_then(|t| t.split_once("_WITH_"))
            .and_then(|(kxau, rest)| kxau.rsplit_once('_').map(|(kx, au)| ((kx, rest), au)));
        match split {
            Some((key, au)) => match groups.iter_mut().find(|(k, _)| *k == Some(key)) {
                Some((_, aus)) => aus.push(au),
                None => groups.push((Some(key), vec![au])),
            },
            None => groups.push((None, vec![n])),
        }
    }
    groups
        .into_iter()
        .map(|(key, aus)| match key {
            Some((kx, rest)) if aus.len() > 1 => format!("TLS_{kx}_{{{}}}_WITH_{rest}", aus.join(",")),
            Some((kx, rest)) => format!("TLS_{kx}_{}_WITH_{rest}", aus[0]),
            None => aus[0].to_string(),
        })
        .collect()
}

/// The width the answer is laid out for: the terminal's, else 80 columns; within
/// 60..=120 so it stays readable.
fn width() -> usize {
    console::Term::stdout()
        .size_checked()
        .map(|(_, cols)| cols as usize)
        .unwrap_or(80)
        .clamp(60, 120)
}

/// Words (never split) filled into lines of at most `width` columns: the first line
/// starts after `first` columns already used, the others with `indent` spaces.
/// A word longer than a line gets a line of its own.
pub(crate) fn fill(words: &[String], width: usize, first: usize, indent: usize) -> Vec<String> {
    crate::text::fill(words.iter().map(String::as_str), width, first, indent, crate::text::Count::Columns)
}

/// Text wrapped at spaces to `width`, continuation lines indented by `indent`.
fn wrap(text: &str, width: usize, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut s = crate::text::lines("", text.split_whitespace(), &pad, width, crate::text::Count::Columns).join("\n");
    s.push('\n');
    s
}

/// Column of the list names, of the figures, and where tied names continue.
const LABEL: usize = 30;
/// Wide enough for `199.43 ms CPU`.
const FIGURE: usize = 13;
const CONT: usize = 6;

/// One row of the answer: label and figure in their columns, then the names; names
/// that do not fit after the figure go on their own lines below, indented, so the
/// columns hold in an 80-column terminal.
fn row(label: &str, figure: &str, names: &[String], suffix: &str, width: usize) -> String {
    let head = format!("  {label:<LABEL$} {figure:>FIGURE$}  ");
    let head_w = console::measure_text_width(&head);
    let mut words: Vec<String> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if i + 1 < names.len() {
            words.push(format!("{n} ="));
        } else {
            words.push(n.clone());
        }
    }
    if !suffix.is_empty() {
        words.extend(suffix.split_whitespace().map(String::from));
    }
    let one_line: usize = words.iter().map(|w| console::measure_text_width(w) + 1).sum();
    let pad = " ".repeat(CONT);
    if head_w + one_line <= width + 1 {
        return format!("{head}{}\n", words.join(" "));
    }
    let lines = fill(&words, width, CONT, CONT);
    let mut s = format!("{}\n", head.trim_end());
    for l in lines {
        s.push_str(&format!("{pad}{l}\n"));
    }
    s
}

/// The answer for `cipherbench` / `cipherbench run`.
pub fn render(doc: &Document, outcome: &Outcome, targets: &[String], note: Option<&str>, report: Option<&str>, stored: bool) -> String {
    let width = width();
    let mut s = machine(doc, width);
    let policy = doc.run.settings.get("policy").and_then(|v| v.as_str()).unwrap_or("intermediate");
    for n in headline(outcome) {
        s.push_str(&wrap(&n, width, 2));
    }
    s.push_str(&bold(&format!("Fastest secure choices (policy: {policy})")));
    s.push('\n');
    s.push_str(&choices(outcome, width));
    if let Some(n) = note {
        s.push_str("  ");
        s.push_str(&wrap(&format!("({n})"), width, 3));
    } else if doc.run.command == "run" && !outcome.protocols.iter().any(|(p, _, _)| p == "ssh") {
        s.push_str("  ");
        s.push_str(&wrap("(SSH: the budget ran out before any SSH result; raise --budget)", width, 3));
    }
    s.push_str(&raced(doc, width));
    s.push_str(&config(outcome, targets));
    if let Some(p) = report {
        s.push_str(&format!("Report: {p}\n"));
    }
    if stored {
        // The command on a line of its own, so that it is never broken.
        s.push_str(&format!(
            "Run {} stored; every figure:\n  cipherbench report --run {}\n",
            doc.run.id, doc.run.id
        ));
    }
    s
}

/// What the answer says first: the noise that left leaders tied, and the runs
/// the figures were pooled from (the rankings' notes that say so, each once).
fn headline(outcome: &Outcome) -> Vec<String> {
    let notes = outcome
        .protocols
        .iter()
        .flat_map(|(_, rankings, _)| rankings)
        .flat_map(|r| r.notes.iter().cloned());
    let mut out = crate::recommend::evidence::headline(notes);
    // The pooled runs first, then the noise.
    out.sort_by_key(|n| !n.starts_with(crate::recommend::evidence::POOLED));
    out.into_iter().map(|n| crate::untrusted::shown(&n).to_string()).collect()
}

/// The machine in one (wrapped) line: CPU, cores, crypto instructions, libraries.
fn machine(doc: &Document, width: usize) -> String {
    let h = &doc.run.host;
    let libs = super::library_versions(doc);
    wrap(
        &format!(
            "This machine: {}, {} cores, {} · {}",
            h.cpu_model,
            h.cores,
            if h.cpu_flags.is_empty() {
                "no crypto instructions".to_string()
            } else {
                h.cpu_flags.join(" ")
            },
            libs.join(" · ")
        ),
        width,
        2,
    )
}

/// The best of each ranking (ties named, what post-quantum costs), then the
/// fastest insecure options for comparison.
fn choices(outcome: &Outcome, width: usize) -> String {
    let mut s = String::new();
    let mut insecure: Vec<String> = Vec::new();
    for r in outcome.protocols.iter().flat_map(|(_, rankings, _)| rankings) {
        let best: Vec<_> = r.ranked.iter().filter(|x| x.rank == 1).collect();
        let Some(first) = best.first() else {
            if !r.unmeasured.is_empty() {
                s.push_str(&format!("  {:<LABEL$} not measured in this run\n", list_title(&r.list)));
            }
            continue;
        };
        let names = group_auth(&best.iter().map(|x| x.name.as_str()).collect::<Vec<_>>());
        let tie = if best.len() > 1 { "(tied)" } else { "" };
        s.push_str(&row(list_title(&r.list), &figure(&r.metric, first.median), &names, tie, width));
        // The ordering rule keeps post-quantum first: what that costs here, said.
        // ... and what ordered tied figures: the primitives of the same run.
        let said = |n: &&String| {
            n.starts_with("post-quantum")
                || n.starts_with(crate::recommend::evidence::PHYSICS)
                || n.starts_with(crate::recommend::paired::PAIRED)
        };
        for n in r.notes.iter().filter(said) {
            let words: Vec<String> = n.split_whitespace().map(String::from).collect();
            for l in fill(&words, width, CONT, CONT) {
                s.push_str(&format!("{}{l}\n", " ".repeat(CONT)));
            }
        }
        if let (Some(bad), Some(cost)) = (&r.fastest_insecure, r.insecure_cost) {
            let verdict = if bad.tied_with_best {
                "no measurable gain: not worth it".to_string()
            } else {
                format!("{:+.0}%", (cost - 1.0) * 100.0)
            };
            insecure.push(row(
                list_title(&r.list),
                &figure(&r.metric, bad.median),
                &[format!("{} ({})", bad.name, bad.level.as_str())],
                &format!("— {verdict}"),
                width,
            ));
        }
    }
    if !insecure.is_empty() {
        s.push_str(&bold("Fastest insecure options, for comparison"));
        s.push('\n');
        for l in insecure {
            s.push_str(&l);
        }
    }
    s
}

/// Which lists the race settled, and for how long it ran.
fn raced(doc: &Document, width: usize) -> String {
    let Some(race) = doc.run.settings.get("race") else {
        return String::new();
    };
    let lists: Vec<&str> = race["contests"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["list"].as_str()).map(list_title).collect())
        .unwrap_or_default();
    if lists.is_empty() {
        return String::new();
    }
    let text = format!(
        "(raced for {:.0} s where the leaders were tied after the first pass: {}; ties left are shown as ties: the intervals overlap)",
        race["seconds"].as_f64().unwrap_or(0.0),
        lists.join(", ")
    );
    format!("  {}", wrap(&text, width, 3))
}

/// The config lines for this machine's software (never wrapped: they are pasted as they are).
fn config(outcome: &Outcome, targets: &[String]) -> String {
    let recs: Vec<_> = outcome
        .recommendations
        .iter()
        .filter(|r| targets.iter().any(|t| t.eq_ignore_ascii_case(&r.target)))
        .collect();
    if recs.is_empty() {
        return String::new();
    }
    let mut s = bold(&format!(
        "Config for this machine's software ({}; or --for TARGET)",
        targets.join(", ")
    ));
    s.push('\n');
    for r in recs {
        s.push_str(&format!("  {} — {}:\n", r.target, r.location));
        for l in &r.lines {
            s.push_str(&format!("    {l}\n"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::{fill, group_auth, row};

    #[test]
    fn rows_keep_their_columns_in_80_columns() {
        let names: Vec<String> = [
            "TLS_ECDHE_{ECDSA,RSA}_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_{ECDSA,RSA}_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_{ECDSA,RSA}_WITH_CHACHA20_POLY1305_SHA256",
        ]
        .map(String::from)
        .to_vec();
        let text = row("TLS 1.2 suites", "1.05 GB/s", &names, "(tied)", 80);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.iter().all(|l| l.chars().count() <= 80), "{text}");
        // The figure stays in its column; every name is there, none split.
        assert!(
            lines[0].starts_with("  TLS 1.2 suites") && lines[0].ends_with("1.05 GB/s"),
            "{text}"
        );
        assert_eq!(lines[0].chars().count(), 2 + 30 + 1 + 13);
        for n in &names {
            assert!(lines[1..].iter().any(|l| l.contains(n.as_str())), "{n} in {text}");
        }
        assert!(
            lines[1..].iter().all(|l| l.starts_with("      ") && !l.starts_with("       ")),
            "{text}"
        );
        // A short answer stays on one line.
        let one = row("TLS groups", "1434.7/s", &["x25519".to_string()], "", 80);
        assert_eq!(one, format!("  {:<30} {:>13}  x25519\n", "TLS groups", "1434.7/s"));
    }

    #[test]
    fn fill_never_splits_a_word_and_respects_the_width() {
        let words: Vec<String> = "aaaa bbbb cccc dddd eeee".split(' ').map(String::from).collect();
        assert_eq!(fill(&words, 14, 0, 2), ["aaaa bbbb cccc", "dddd eeee"]);
        let long = vec!["x".repeat(30), "y".to_string()];
        assert_eq!(fill(&long, 10, 0, 0), ["x".repeat(30), "y".to_string()]);
    }

    #[test]
    fn suites_that_differ_only_in_the_certificate_are_grouped() {
        let names = [
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_AES_128_GCM_SHA256",
            "aes128-gcm@openssh.com",
        ];
        assert_eq!(
            group_auth(&names),
            [
                "TLS_ECDHE_{ECDSA,RSA}_WITH_AES_128_GCM_SHA256",
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
                "TLS_AES_128_GCM_SHA256",
                "aes128-gcm@openssh.com",
            ]
        );
    }
}
