//! The terminal view of the diff: per software, now → recommended, the measured
//! change, the security findings fixed and introduced, and the unified diff.

use super::{Change, SoftwareDiff};
use std::fmt::Write;

fn fig(c: &Change, v: Option<super::Figure>) -> String {
    match v {
        None => "—".into(),
        Some(f) if c.unit == "seconds" && c.metric.contains("per GB") => format!("{:.2} s", f.median),
        Some(f) => crate::recommend::figure(&c.unit, f.median),
    }
}

/// One software's section.
pub fn one(d: &SoftwareDiff) -> String {
    let mut s = String::new();
    let file = d.file.as_ref().map(|f| f.display().to_string()).unwrap_or_else(|| "no file".into());
    let _ = writeln!(s, "{} — {file} (read with {})", d.software, d.source);
    for n in &d.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    let _ = writeln!(s, "  peer:         {}", d.peer);
    match (&d.now, &d.now_error) {
        (Some(n), _) => {
            let _ = writeln!(s, "  now:          {}", n.label());
        }
        // Its peer could not be read: what it negotiates is not known, which is
        // not negotiating nothing.
        (None, Some(e)) if e.starts_with(super::PEER_UNREAD) => {
            let _ = writeln!(s, "  now:          {e}");
        }
        (None, e) => {
            let _ = writeln!(s, "  now:          negotiates nothing: {}", e.as_deref().unwrap_or("unknown"));
        }
    }
    let same = matches!((&d.now, &d.recommended), (Some(n), Some(r)) if super::same_choice(n, r));
    let _ = writeln!(
        s,
        "  recommended:  {}{}",
        d.recommended.as_ref().map(|n| n.label()).unwrap_or_else(|| "—".into()),
        if same { "  (the same choice)" } else { "" }
    );
    s.push_str(&offered_now(d));
    if d.recommended.is_none() && d.lines.is_empty() {
        let _ = writeln!(s, "  no recommendation to compare with in this run");
        return s;
    }
    if d.nothing_to_change {
        let _ = writeln!(
            s,
            "  nothing to change: no finding under policy {} and no measurable gain",
            d.policy
        );
        return s;
    }
    s.push_str(&measured(d));
    s.push_str(&findings(d));
    match &d.patch {
        Some(p) => {
            let _ = writeln!(s, "  the change (apply with `patch -d / -p1`):");
            for l in p.lines() {
                let _ = writeln!(s, "    {l}");
            }
        }
        None if !d.lines.is_empty() => {
            let _ = writeln!(s, "  lines:");
            for l in &d.lines {
                let _ = writeln!(s, "    {l}");
            }
        }
        None => {}
    }
    s
}

/// What the installed configuration offers now, per list, with each option's level.
fn offered_now(d: &SoftwareDiff) -> String {
    let mut s = String::new();
    let refused = d.offered.iter().filter(|g| !g.allowed).count();
    let _ = writeln!(
        s,
        "  offered now ({} options, {refused} refused by policy {}):",
        d.offered.len(),
        d.policy
    );
    let mut lists: Vec<&str> = Vec::new();
    for g in &d.offered {
        if !lists.contains(&g.list.as_str()) {
            lists.push(&g.list);
        }
    }
    for l in lists {
        // One item per algorithm: its other names offered beside it in brackets.
        let these: Vec<&super::Graded> = d.offered.iter().filter(|g| g.list == l).collect();
        let items: Vec<String> = super::names::folded(these.iter().map(|g| g.name.as_str()))
            .into_iter()
            .filter_map(|(name, also)| {
                let g = these.iter().find(|g| g.name == name)?;
                let also = if also.is_empty() {
                    String::new()
                } else {
                    format!(" (also {})", also.join(", "))
                };
                Some(format!("{name}{also} [{}{}]", g.level, if g.allowed { "" } else { ", refused" }))
            })
            .collect();
        let _ = writeln!(s, "    {:<28} {}", crate::recommend::list_title(l), items.join(", "));
    }
    s
}

/// The measured change, per metric.
fn measured(d: &SoftwareDiff) -> String {
    let mut s = String::new();
    if !d.changes.is_empty() {
        let _ = writeln!(s, "  measured change (95 % intervals):");
        for c in &d.changes {
            if c.verdict == "the same choice" {
                // One measurement: its figure once, no interval.
                let _ = writeln!(s, "    {:<20} {:>12}   the same choice", c.metric, fig(c, c.now));
                continue;
            }
            let _ = writeln!(
                s,
                "    {:<20} {:>12} → {:<12} {}",
                c.metric,
                fig(c, c.now),
                fig(c, c.recommended),
                c.verdict
            );
            if let Some(how) = &c.how {
                let _ = writeln!(s, "    {:<20} (measured {how})", "");
            }
        }
    }
    s
}

/// The options the change removes (grouped by reason) and the ones it introduces.
fn findings(d: &SoftwareDiff) -> String {
    let mut s = String::new();
    // Grouped by reason: one cited reason, then every option it removes (a reason
    // that names its option, "policy `x` does not list group NAME", with "…").
    let _ = writeln!(s, "  fixes ({} option(s) the policy refuses are no longer offered):", d.fixed.len());
    if d.fixed.is_empty() {
        let _ = writeln!(s, "    none");
    }
    let mut by_reason: Vec<(String, Vec<&super::Finding>)> = Vec::new();
    for f in &d.fixed {
        for r in &f.reasons {
            let r = r.replace(&f.name, "…");
            match by_reason.iter_mut().find(|(x, _)| *x == r) {
                Some((_, these)) => these.push(f),
                None => by_reason.push((r, vec![f])),
            }
        }
    }
    for (reason, these) in by_reason {
        // One name per algorithm: its aliases in brackets after it.
        let names: Vec<String> = super::names::folded(these.iter().map(|f| f.name.as_str()))
            .into_iter()
            .filter_map(|(name, also)| {
                let f = these.iter().find(|f| f.name == name)?;
                let also = if also.is_empty() {
                    String::new()
                } else {
                    format!(", also {}", also.join(", "))
                };
                Some(format!("{name} ({}{also})", f.level))
            })
            .collect();
        let _ = writeln!(s, "    {reason}");
        let _ = writeln!(s, "      {}", names.join(", "));
    }
    let _ = writeln!(
        s,
        "  introduces: {}",
        if d.introduced.is_empty() {
            "none".to_string()
        } else {
            d.introduced
                .iter()
                .map(|f| format!("{} ({})", f.name, f.level))
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    for (what, v) in [("adds", &d.adds), ("removes", &d.removes)] {
        let _ = writeln!(s, "  {what}: {}", if v.is_empty() { "nothing".to_string() } else { v.join(", ") });
    }
    s
}

/// The whole section, as the main job and `recommend` end with it.
pub fn section(diffs: &[SoftwareDiff], notes: &[String]) -> String {
    let mut s = String::from("\nWhat to change here (the installed configuration against the recommendation)\n");
    if diffs.is_empty() {
        // Installed but unreadable software (sshd without /run/sshd) is not "none
        // found": the lines after say what could not be read, and why.
        s.push_str(if notes.is_empty() {
            "  no installed configuration found\n"
        } else {
            "  no installed configuration could be read\n"
        });
    }
    for d in diffs {
        s.push('\n');
        s.push_str(&one(d));
    }
    for n in notes {
        let _ = writeln!(s, "  not read: {n}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::Finding;
    use crate::judge::Level;

    /// Software whose peer could not be read: what it negotiates is not known,
    /// never "negotiates nothing"; and installed software that could not be read
    /// is never "no installed configuration found". (The texts the main job
    /// printed as root with sshd installed and /run/sshd impossible to make.)
    #[test]
    fn what_could_not_be_read_is_said_as_such() {
        let why = "this machine's sshd could not be read (sshd as root needs its privilege-separation directory /run/sshd, and it cannot be created: Read-only file system (os error 30))";
        let d = SoftwareDiff {
            now_error: Some(format!("{}{why}", super::super::PEER_UNREAD)),
            ..SoftwareDiff::blank("ssh")
        };
        let text = one(&d);
        assert!(text.contains(&format!("  now:          not known: {why}\n")), "{text}");
        assert!(!text.contains("negotiates nothing"), "{text}");
        let d = SoftwareDiff {
            now_error: Some("no cipher in common".into()),
            ..SoftwareDiff::blank("ssh")
        };
        assert!(one(&d).contains("now:          negotiates nothing: no cipher in common"));
        let text = section(&[], &[format!("sshd: {why}")]);
        assert!(!text.contains("no installed configuration found"), "{text}");
        assert!(text.contains("no installed configuration could be read"), "{text}");
        assert!(section(&[], &[]).contains("no installed configuration found"));
    }

    /// A reason that names its option groups the options it refuses ("…").
    #[test]
    fn fixes_group_reasons_that_name_their_option() {
        let fix = |name: &str| Finding {
            list: "groups".into(),
            name: name.into(),
            level: Level::Secure,
            reasons: vec![format!("policy `intermediate` does not list group {name} in groups.only")],
        };
        let d = SoftwareDiff {
            now_error: Some("x".into()),
            fixed: vec![fix("x448"), fix("secp521r1")],
            lines: vec!["ssl_ecdh_curve X25519;".into()],
            ..SoftwareDiff::blank("nginx")
        };
        let text = one(&d);
        assert!(
            text.contains("    policy `intermediate` does not list group … in groups.only\n      x448 (secure), secp521r1 (secure)\n"),
            "{text}"
        );
    }
}
