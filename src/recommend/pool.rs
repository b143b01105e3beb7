//! The history is evidence: a run's figures pooled with the same subjects'
//! figures from earlier runs of the same machine, so that answers firm up as runs
//! accumulate instead of following whichever kind of second a run hit.
//!
//! Which runs: the caller's choice (`store::Store::comparable`: the same host,
//! CPU model and flags and library versions, the same target and masked CPU features; a change of
//! any of them starts afresh). This module stays pure: it gets the documents.
//!
//! **Same subject**: the same kind, metric and the whole subject (sizes,
//! library, MAC partner, mode, threads ...), so that a figure only ever pools
//! with figures of the same thing measured the same way. Only what the current
//! run set out to measure is pooled (the history firms up its figures; it does
//! not add options the run left out); a subject whose budget ended before it
//! was measured takes the earlier runs' figure alone, said. Only figures of at
//! least `MIN_SAMPLES` (3) samples: a single session's widened range is not evidence to pool. SSH
//! handshakes are ranked by CPU per login (a mean per run), which is not pooled.
//!
//! **How**: per run, one figure (its median) with its own 95% interval, which
//! the run's noise already widened to what usually moves between runs. Runs
//! differ in the machine's state, so they are not pooled as one set of samples
//! but as k measurements of one figure, the way a random-effects meta-analysis
//! pools studies (DerSimonian–Laird, in logs: the figures are rates and times):
//! each run weighs `1 / (seᵢ² + τ²)`, with `seᵢ` its interval's half-width / 1.96
//! and `τ²` the between-run variance, estimated from how far the runs' medians
//! disagree beyond what their own intervals allow (Cochran's Q; zero when they
//! agree). The pooled figure is the weighted mean, its interval ±1.96 / √Σw. So
//! k runs that agree narrow the interval by about √k, and runs that disagree
//! widen it again: between-run variation counts whenever it is there.
//!
//! The pooled noise per kind is the largest of the runs' noises over √k. The
//! ordering rule is unchanged (`rank::apart`).

use crate::model::{Document, Kind, Metric, ResultRecord, Status};

/// The least samples a run's figure needs to be pooled.
const MIN_SAMPLES: usize = 3;

/// A record that may be pooled: ok, positive, finite, enough samples, not a
/// per-login CPU figure.
fn poolable(r: &ResultRecord) -> bool {
    let pos = |v: Option<f64>| v.is_some_and(|x| x.is_finite() && x > 0.0);
    r.status == Status::Ok
        && r.metric != Metric::Accepted
        && r.kind != Kind::SshHandshake
        && r.samples.unwrap_or(0) >= MIN_SAMPLES
        && pos(r.median)
        && pos(r.ci95_low)
        && pos(r.ci95_high)
}

/// The pooled figure of the same subject's records, one per run (see the module's note).
pub fn pooled_record(records: &[&ResultRecord]) -> Option<ResultRecord> {
    let first = *records.first()?;
    if records.len() < 2 || !records.iter().all(|r| poolable(r)) {
        return None;
    }
    let k = records.len() as f64;
    let x: Vec<f64> = records.iter().map(|r| r.median.unwrap_or(1.0).ln()).collect();
    let se2: Vec<f64> = records
        .iter()
        .map(|r| {
            let se = (r.ci95_high.unwrap_or(1.0).ln() - r.ci95_low.unwrap_or(1.0).ln()) / 2.0 / 1.96;
            se.max(1e-6).powi(2)
        })
        .collect();
    let w: Vec<f64> = se2.iter().map(|v| 1.0 / v).collect();
    let sw: f64 = w.iter().sum();
    let fixed = w.iter().zip(&x).map(|(w, x)| w * x).sum::<f64>() / sw;
    let q: f64 = w.iter().zip(&x).map(|(w, x)| w * (x - fixed).powi(2)).sum();
    let c = sw - w.iter().map(|w| w * w).sum::<f64>() / sw;
    let tau2 = if c > 0.0 { ((q - (k - 1.0)) / c).max(0.0) } else { 0.0 };
    let ws: Vec<f64> = se2.iter().map(|v| 1.0 / (v + tau2)).collect();
    let sws: f64 = ws.iter().sum();
    let mean = ws.iter().zip(&x).map(|(w, x)| w * x).sum::<f64>() / sws;
    let half = 1.96 / sws.sqrt();
    let mut out = first.clone();
    out.median = Some(mean.exp());
    out.ci95_low = Some((mean - half).exp());
    out.ci95_high = Some((mean + half).exp());
    out.mean = Some(records.iter().filter_map(|r| r.mean).sum::<f64>() / k);
    out.min = records.iter().filter_map(|r| r.min).reduce(f64::min);
    out.max = records.iter().filter_map(|r| r.max).reduce(f64::max);
    out.samples = Some(records.iter().filter_map(|r| r.samples).sum());
    out.cv = records.iter().filter_map(|r| r.cv).reduce(f64::max);
    out.cpu_median = None;
    out.wall_median = None;
    out.values = Vec::new();
    out.pooled_runs = records.len();
    Some(out)
}

/// True for a subject the run set out to measure but whose budget ended first
/// (`measure` records it as skipped, saying so).
fn budget_skipped(r: &ResultRecord) -> bool {
    r.status == Status::Failed && r.reason.as_deref() == Some(crate::model::BUDGET_SKIPPED)
}

/// `current` with each figure pooled with the same subject's figure in each of
/// `earlier` (runs the caller found comparable), its settings saying so
/// (`pooled`: runs, since, ids, and `filled`: how many subjects the run's
/// budget did not reach take the earlier runs' figure alone) and its noise per
/// kind the pooled one. With no earlier run, or none sharing a subject,
/// `current` as it is.
pub fn pool(current: &Document, earlier: &[Document]) -> Document {
    let mut out = current.clone();
    let mut used: Vec<&Document> = Vec::new();
    let mut filled = 0;
    for (i, r) in current.results.iter().enumerate() {
        let skipped = budget_skipped(r);
        if !poolable(r) && !skipped {
            continue;
        }
        let mut same: Vec<&ResultRecord> = if skipped { Vec::new() } else { vec![r] };
        for d in earlier {
            if let Some(o) = d.results.iter().find(|o| o.same_subject(r) && poolable(o)) {
                same.push(o);
                if !used.iter().any(|u| u.run.id == d.run.id) {
                    used.push(d);
                }
            }
        }
        // A subject the budget did not reach takes what the earlier runs
        // measured of it (pooled when two or more did): the same machine, so the
        // answer need not fall back on the policy's order for want of time.
        let p = match same.as_slice() {
            [one] if skipped => Some((*one).clone()),
            _ => pooled_record(&same),
        };
        if let Some(p) = p {
            filled += usize::from(skipped);
            out.results[i] = p;
        }
    }
    if used.is_empty() {
        return out;
    }
    let runs = used.len() + 1;
    let since = used
        .iter()
        .map(|d| d.run.started_at.as_str())
        .chain(std::iter::once(current.run.started_at.as_str()))
        .min()
        .unwrap_or_default()
        .to_string();
    let mut noise = current.run.settings.get("noise").cloned().unwrap_or_else(|| serde_json::json!({}));
    if let Some(m) = noise.as_object_mut() {
        for (kind, v) in m.iter_mut() {
            let most = used
                .iter()
                .filter_map(|d| d.run.settings.get("noise")?.get(kind)?.as_f64())
                .fold(v.as_f64().unwrap_or(0.0), f64::max);
            *v = serde_json::json!(most / (runs as f64).sqrt());
        }
    }
    if out.run.settings.is_object() {
        out.run.settings["noise"] = noise;
        out.run.settings["pooled"] = serde_json::json!({
            "runs": runs,
            "since": since,
            "ids": used.iter().map(|d| d.run.id.clone()).collect::<Vec<_>>(),
            "filled": filled,
        });
    }
    out
}

/// How many runs a (pooled) document's figures come from, and since when.
pub fn pooled_runs(doc: &Document) -> Option<(u64, String)> {
    let p = doc.run.settings.get("pooled")?;
    let runs = p.get("runs")?.as_u64().filter(|&n| n >= 2)?;
    let since = p.get("since")?.as_str()?;
    Some((runs, since.chars().take(10).collect()))
}

/// A ranking's notes with what pooling means for it: the pooled runs stated
/// first (when the ranking has figures), and a noise note about those runs, not
/// one run.
pub fn said(doc: &Document, notes: Vec<String>, measured: bool) -> Vec<String> {
    let Some((runs, since)) = pooled_runs(doc) else {
        return notes;
    };
    let mut out = Vec::new();
    if measured {
        let filled = doc.run.settings["pooled"]["filled"].as_u64().unwrap_or(0);
        let reached = match filled {
            0 => String::new(),
            1 => " One subject this run's budget did not reach has the earlier runs' figure alone.".to_string(),
            n => format!(" {n} subjects this run's budget did not reach have the earlier runs' figures alone."),
        };
        out.push(format!(
            "{}{runs} runs since {since} (this host, the same CPU flags and library versions): the figures are the runs' pooled figures.{reached}",
            super::evidence::POOLED
        ));
    }
    out.extend(notes.into_iter().map(|n| {
        if n.starts_with(super::evidence::NOISY) {
            n.replacen("during the run", &format!("over the {runs} pooled runs"), 1)
        } else {
            n
        }
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Subject, Summary};

    fn rec(median: f64, noise: f64) -> ResultRecord {
        let s = Summary {
            median,
            mean: median,
            min: median,
            max: median,
            ci95_low: median / (1.0 + noise),
            ci95_high: median * (1.0 + noise),
            samples: 10,
            cv: 0.0,
        };
        ResultRecord::ok(Kind::SshBulk, Subject::default(), Metric::BytesPerSec, &s, None)
    }

    fn half(r: &ResultRecord) -> f64 {
        (r.ci95_high.unwrap() / r.ci95_low.unwrap()).ln() / 2.0
    }

    /// Runs that agree narrow the interval by about √k; runs that disagree beyond
    /// their own intervals widen it (the between-run variance counts); one run, or
    /// a run of too few samples, is not pooled.
    #[test]
    fn agreeing_runs_narrow_and_disagreeing_runs_widen() {
        let one = rec(100.0, 0.12);
        let agree = [rec(100.0, 0.12), rec(101.0, 0.12), rec(99.0, 0.12)];
        let p = pooled_record(&agree.iter().collect::<Vec<_>>()).unwrap();
        assert!((half(&p) - half(&one) / 3f64.sqrt()).abs() < 0.002, "{} {}", half(&p), half(&one));
        assert!((p.median.unwrap() - 100.0).abs() < 0.5);
        assert_eq!(p.samples, Some(30));
        let disagree = [rec(100.0, 0.03), rec(150.0, 0.03), rec(220.0, 0.03)];
        let p = pooled_record(&disagree.iter().collect::<Vec<_>>()).unwrap();
        assert!(half(&p) > 0.2, "{}", half(&p));
        assert!(p.ci95_low.unwrap() < 120.0 && p.ci95_high.unwrap() > 180.0, "{p:?}");
        assert!(pooled_record(&[&one]).is_none());
        let mut few = rec(100.0, 0.12);
        few.samples = Some(1);
        assert!(pooled_record(&[&one, &few]).is_none());
    }

    fn run(id: &str, results: Vec<ResultRecord>) -> Document {
        let mut d = crate::testing::doc_of(results);
        d.run.id = id.into();
        d.run.started_at = format!("2026-11-2{}T00:00:00Z", id.len());
        d.run.settings = serde_json::json!({});
        d
    }

    /// A subject this run's budget did not reach takes the earlier runs' figure
    /// (pooled when two have it), said in the pooled note; one no earlier run
    /// measured stays skipped; a subject that failed for another reason is not
    /// filled; and the figures the run measured pool as before.
    #[test]
    fn what_the_budget_did_not_reach_comes_from_the_earlier_runs() {
        let subject = |c: &str| Subject {
            cipher: Some(c.into()),
            ..Subject::default()
        };
        let at = |c: &str, median: f64| {
            let mut r = rec(median, 0.05);
            r.subject = subject(c);
            r
        };
        let skipped = |c: &str| {
            ResultRecord::not_ok(
                Kind::SshBulk,
                subject(c),
                Metric::BytesPerSec,
                Status::Failed,
                crate::model::BUDGET_SKIPPED,
            )
        };
        let refused = ResultRecord::not_ok(Kind::SshBulk, subject("d"), Metric::BytesPerSec, Status::Failed, "sshd refused it");
        let now = run("now", vec![at("a", 100.0), skipped("b"), skipped("c"), refused]);
        let earlier = [
            run("e1", vec![at("a", 104.0), at("b", 200.0), at("d", 50.0)]),
            run("e22", vec![at("a", 98.0), at("b", 210.0), at("d", 55.0)]),
        ];
        let p = pool(&now, &earlier);
        let b = &p.results[1];
        assert_eq!(b.status, Status::Ok, "{b:?}");
        assert!((200.0..210.0).contains(&b.median.unwrap()), "{b:?}");
        assert_eq!(b.samples, Some(20));
        assert_eq!(
            p.results[2].reason.as_deref(),
            Some(crate::model::BUDGET_SKIPPED),
            "nothing to fill c with"
        );
        assert_eq!(p.results[3].status, Status::Failed, "a refusal is not a missing figure");
        assert_eq!(p.results[0].samples, Some(30), "a pooled as before");
        assert_eq!(p.run.settings["pooled"]["filled"], 1);
        let notes = said(&p, Vec::new(), true);
        assert!(notes[0].contains("One subject this run's budget did not reach"), "{notes:?}");
        // One earlier run with it: its figure as it is.
        let p = pool(&now, &earlier[..1]);
        assert_eq!(p.results[1].median, Some(200.0));
        // Without the skip, nothing is added.
        let p = pool(&run("now", vec![at("a", 100.0)]), &earlier);
        assert_eq!(p.results.len(), 1);
        assert_eq!(p.run.settings["pooled"]["filled"], 0);
    }
}
