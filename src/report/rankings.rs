//! The `recommend` subcommand's terminal view: each ranking, the price of safety,
//! then the config lines.

use crate::judge::{Knowledge, Level, Policy};
use crate::model::Document;
use crate::recommend::evidence::{FEW, NOISY, POOLED};
use crate::recommend::rank::{self, Ranking, Tier};
use crate::recommend::{disputed_by, figure, list_domain, list_title, tier, Outcome};

/// ` (post-quantum)` or ` (disputed: ssh-audit fails it)` after an option's name.
fn tier_mark(k: &Knowledge, list: &str, name: &str) -> String {
    let Some(d) = list_domain(list) else { return String::new() };
    let v = k.judge(d, name);
    match tier(k, &v) {
        Tier::PostQuantum => " (post-quantum)".to_string(),
        Tier::Disputed => format!(" (after the rest: {} fails it)", disputed_by(&v).join(", ")),
        Tier::Normal => String::new(),
    }
}

/// The terminal view: each ranking, the price of safety, then the config lines.
pub fn render(doc: &Document, policy: &Policy, knowledge: &Knowledge, outcome: &Outcome) -> String {
    let mut s = format!(
        "cipherbench recommend · run {} ({}) · policy {} · knowledge {}\n",
        doc.run.id,
        doc.run.command,
        policy.name,
        knowledge.revision()
    );
    if outcome.protocols.is_empty() {
        s.push_str("\nThis run measured nothing a recommendation can be made from (primitives, TLS or SSH).\n");
        return s;
    }
    s.push_str(&format!("{}\n", rank::RULE));
    // The runs pooled and the noise that left leaders tied, first (hyperfine-style).
    let notes = outcome
        .protocols
        .iter()
        .flat_map(|(_, rs, _)| rs)
        .flat_map(|r| r.notes.iter().cloned());
    for n in crate::recommend::evidence::headline(notes) {
        s.push_str(&format!("{}{}\n", if n.starts_with(POOLED) { "" } else { "warning: " }, n));
    }
    for (_, rankings, _) in &outcome.protocols {
        for r in rankings {
            s.push_str(&ranking(r, policy, knowledge));
        }
    }
    let warned = warnings(policy, outcome);
    for r in &outcome.recommendations {
        s.push_str(&format!("\n{} ({}):\n", r.target, r.location));
        for l in &r.lines {
            s.push_str(&format!("    {l}\n"));
        }
    }
    if !warned.is_empty() {
        s.push('\n');
        for w in warned {
            s.push_str(&format!("warning: {w}\n"));
        }
    }
    s
}

/// One ranking: its options, its notes, and what the policy refuses.
fn ranking(r: &Ranking, policy: &Policy, knowledge: &Knowledge) -> String {
    let mut s = format!(
        "\n{} (policy {}, {})\n",
        list_title(&r.list),
        policy.name,
        if r.higher_is_better { "fastest first" } else { "cheapest first" }
    );
    if r.ranked.is_empty() {
        if r.unmeasured.is_empty() {
            s.push_str("  nothing measured passes the policy\n");
        } else {
            s.push_str(&format!(
                "  not measured in this run; the policy's order: {}\n",
                r.unmeasured.join(", ")
            ));
        }
    } else {
        s.push_str(&ranked(r, knowledge));
    }
    for note in r.notes.iter().filter(|n| ![NOISY, FEW, POOLED].iter().any(|p| n.starts_with(p))) {
        s.push_str(&format!("  {note}\n"));
    }
    s.push_str(&refused(r));
    s
}

/// The measured options that pass the policy, as a table, with what ties mean.
fn ranked(r: &Ranking, knowledge: &Knowledge) -> String {
    let mut s = String::new();
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header(["rank", "option", "level", "median", "95% CI", "measured as"]);
    for x in &r.ranked {
        t.add_row([
            format!("{}{}", x.rank, if x.tied { "=" } else { "" }),
            format!("{}{}", x.name, tier_mark(knowledge, &r.list, &x.name)),
            x.level.to_string(),
            figure(&r.metric, x.median),
            format!("{} – {}", figure(&r.metric, x.ci95_low), figure(&r.metric, x.ci95_high)),
            x.basis.clone(),
        ]);
    }
    for line in t.to_string().lines() {
        s.push_str(&format!("  {}\n", line.trim_end()));
    }
    if r.ranked.iter().any(|x| x.tied) {
        s.push_str(&format!(
            "  =: not measurably different (95% intervals overlap, or less than {:.0}% apart); the better level, then the policy's order, comes first.\n",
            rank::PRACTICAL * 100.0
        ));
    }
    if !r.unmeasured.is_empty() {
        s.push_str(&format!(
            "  not measured in this run (still configured, after the measured options, in the policy's order): {}\n",
            r.unmeasured.join(", ")
        ));
    }
    s
}

/// The fastest refused and the fastest insecure option, and what safety costs.
fn refused(r: &Ranking) -> String {
    let mut s = String::new();
    let refused = [
        ("fastest refused", &r.fastest_refused, r.safety_cost),
        ("fastest insecure", &r.fastest_insecure, r.insecure_cost),
    ];
    for (label, f, cost) in refused {
        let Some(f) = f else { continue };
        let cost = match cost {
            Some(_) if f.tied_with_best => "; tied with the best accepted option: no measurable cost".to_string(),
            Some(c) if c > 1.0 => format!("; it is {c:.2}× faster: safety costs {:.0}% here", (1.0 - 1.0 / c) * 100.0),
            Some(_) => "; safety costs nothing here".to_string(),
            None => String::new(),
        };
        s.push_str(&format!(
            "  {label}: {} ({}) {}{cost}\n    why: {}\n",
            f.name,
            f.level,
            figure(&r.metric, f.median),
            f.refusals.join("; ")
        ));
    }
    s
}

/// The policy's warnings for weak or caveated options that made a config line.
fn warnings(policy: &Policy, outcome: &Outcome) -> Vec<String> {
    let mut warned: Vec<String> = Vec::new();
    for v in &outcome.verdicts {
        if outcome
            .recommendations
            .iter()
            .any(|r| r.choice.values().any(|l| l.contains(&v.subject.name)))
            && (v.level < Level::Secure || v.caveats().next().is_some())
        {
            for w in policy.allows(v).warnings {
                if !warned.contains(&w) {
                    warned.push(w);
                }
            }
        }
    }
    warned
}
