//! The SSH tables: bulk combinations, averages per algorithm, the handshake matrix
//! and the feature check.

use super::{throughput_cell, Table};
use crate::model::{Document, Kind, ResultRecord, Status};

/// Seconds with their uncertainty when that is worth showing (≥ 1%).
fn seconds_cell(r: &ResultRecord) -> String {
    match (r.status, r.summary()) {
        (Status::Ok, Some(s)) => {
            let rel = s.relative_precision();
            let noisy = if s.is_noisy() { "~" } else { "" };
            if rel >= 0.01 {
                format!("{noisy}{} ±{:.0}%", crate::units::Seconds(s.median), rel * 100.0)
            } else {
                format!("{noisy}{}", crate::units::Seconds(s.median))
            }
        }
        (Status::Unsupported, _) => "refused".into(),
        _ if r.was_skipped() => "skipped".into(),
        _ => "failed".into(),
    }
}

/// Harmonic mean of throughputs: the average of the write-up's times at a fixed
/// volume, turned back into a throughput.
fn harmonic(v: &[f64]) -> f64 {
    let v: Vec<f64> = v.iter().copied().filter(|x| *x > 0.0).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.len() as f64 / v.iter().map(|x| 1.0 / x).sum::<f64>()
}

fn ssh_label(s: &crate::model::Subject) -> (String, String, String) {
    (
        s.cipher.clone().unwrap_or_default(),
        s.mac.clone().unwrap_or_else(|| "(implicit)".into()),
        s.kex.clone().unwrap_or_default(),
    )
}

/// The SSH write-up's views: the top combinations, the average per cipher, per
/// MAC and per kex, the handshake matrix, and the feature check.
pub fn ssh_tables(doc: &Document) -> Vec<Table> {
    let mut out = Vec::new();
    // Throughput records (the server CPU per GB records share the kind).
    let bulk: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::SshBulk && r.metric == crate::model::Metric::BytesPerSec)
        .collect();
    let mut ok: Vec<&ResultRecord> = bulk
        .iter()
        .copied()
        .filter(|r| r.status == Status::Ok && r.median.is_some())
        .collect();
    ok.sort_by(|a, b| b.median.partial_cmp(&a.median).unwrap_or(std::cmp::Ordering::Equal));
    if !bulk.is_empty() {
        out.push(top_combinations(doc, &bulk, &ok));
        out.extend(averages(&ok));
    }
    out.extend(handshakes(doc));
    out.extend(features(doc));
    out
}

/// The private sshd's CPU per GB of a pair (absent for a remote server).
fn server_cpu(doc: &Document, r: &ResultRecord) -> String {
    doc.results
        .iter()
        .find(|x| {
            x.kind == Kind::SshBulk
                && x.status == Status::Ok
                && x.subject.mode.as_deref() == Some("server-cpu-per-gb")
                && crate::model::Subject {
                    mode: None,
                    ..x.subject.clone()
                } == r.subject
        })
        .and_then(|x| x.median)
        .map(|m| format!("{m:.2} s"))
        .unwrap_or_default()
}

/// The ten fastest combinations, with the client's CPU and the server's CPU per GB.
fn top_combinations(doc: &Document, bulk: &[&ResultRecord], ok: &[&ResultRecord]) -> Table {
    let lead = ok.first().and_then(|r| r.summary());
    let mut rows = Vec::new();
    for (i, r) in ok.iter().take(10).enumerate() {
        let (c, m, k) = ssh_label(&r.subject);
        let cpu = match (r.median, r.cpu_median) {
            (Some(w), Some(c)) if c > 0.0 => format!("{:.0}%", w / c * 100.0),
            _ => String::new(),
        };
        let sv = server_cpu(doc, r);
        let tie = match (i, &lead, r.summary()) {
            (0, _, _) => "fastest".to_string(),
            (_, Some(l), Some(s)) if s.ties_with(l) => "tied with #1".to_string(),
            _ => String::new(),
        };
        rows.push(vec![format!("{}", i + 1), c, m, k, throughput_cell(r), cpu, sv, tie]);
    }
    let mut notes = vec![
        "client CPU: the ssh client's CPU time over the wall time of the transfer (100% = one core busy).".to_string(),
        "Ties: 95% intervals overlap the fastest one; the instrument cannot order them.".to_string(),
    ];
    if rows.iter().any(|row| !row[6].is_empty()) {
        notes.insert(
            1,
            "server CPU/GB: the private sshd's CPU seconds per GB over the same timed part (median over sessions).".to_string(),
        );
    }
    if ok.len() > 10 {
        notes.push(format!("{} more combination(s) in --json and the exports.", ok.len() - 10));
    }
    let refused: Vec<String> = bulk
        .iter()
        .filter(|r| r.status != Status::Ok)
        .map(|r| {
            let (c, m, k) = ssh_label(&r.subject);
            format!("{c} {m} {k}: {}", r.reason.clone().unwrap_or_default())
        })
        .collect();
    if !refused.is_empty() {
        notes.push(format!("{} combination(s) not measured:", refused.len()));
        notes.extend(refused.into_iter().take(10).map(|s| format!("  {s}")));
    }
    Table {
        title: "SSH bulk transfer: top combinations".into(),
        header: ["#", "cipher", "MAC", "kex", "throughput", "client CPU", "server CPU/GB", ""]
            .map(String::from)
            .to_vec(),
        rows,
        notes,
    }
}

type Pick = fn(&crate::model::Subject) -> Option<String>;

/// Averages per algorithm over the others, as the write-up does.
fn averages(ok: &[&ResultRecord]) -> Option<Table> {
    let mut rows = Vec::new();
    let kexes: Vec<String> = {
        let mut v: Vec<String> = ok.iter().filter_map(|r| r.subject.kex.clone()).collect();
        v.sort();
        v.dedup();
        v
    };
    let mut views: Vec<(&str, Pick)> = vec![("cipher", |s| s.cipher.clone()), ("MAC", |s| s.mac.clone())];
    if kexes.len() > 1 {
        views.push(("kex", |s| s.kex.clone()));
    }
    for (view, pick) in views {
        let mut names: Vec<String> = ok.iter().filter_map(|r| pick(&r.subject)).collect();
        names.sort();
        names.dedup();
        let mut avg: Vec<(String, f64, usize)> = names
            .into_iter()
            .map(|n| {
                let v: Vec<f64> = ok
                    .iter()
                    .filter(|r| pick(&r.subject).as_ref() == Some(&n))
                    .filter_map(|r| r.median)
                    .collect();
                (n, harmonic(&v), v.len())
            })
            .collect();
        avg.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
        for (i, (n, a, count)) in avg.into_iter().enumerate() {
            rows.push(vec![
                if i == 0 { view.to_string() } else { String::new() },
                n,
                crate::units::BytesPerSec(a).to_string(),
                count.to_string(),
            ]);
        }
    }
    (!rows.is_empty()).then(|| Table {
        title: "SSH bulk transfer: average per algorithm over the others".into(),
        header: ["view", "algorithm", "average", "combinations"].map(String::from).to_vec(),
        rows,
        notes: vec![
            "average: total volume ÷ total time over the combinations (the write-up's mean time, as a throughput).".into(),
            "The MAC view leaves out AEAD ciphers, whose MAC is implicit.".into(),
        ],
    })
}

/// Handshakes: kex × host key.
fn handshakes(doc: &Document) -> Option<Table> {
    let hs: Vec<&ResultRecord> = doc.results.iter().filter(|r| r.kind == Kind::SshHandshake).collect();
    if hs.is_empty() {
        return None;
    }
    let hostkey = |r: &ResultRecord| r.subject.hostkey.clone().unwrap_or_else(|| "default".into());
    let mut keys: Vec<String> = Vec::new();
    let mut kexes: Vec<String> = Vec::new();
    for r in &hs {
        let h = hostkey(r);
        if !keys.contains(&h) {
            keys.push(h);
        }
        let k = r.subject.kex.clone().unwrap_or_default();
        if !kexes.contains(&k) {
            kexes.push(k);
        }
    }
    let mean_of = |k: &str| {
        let v: Vec<f64> = hs
            .iter()
            .filter(|r| r.subject.kex.as_deref() == Some(k) && r.status == Status::Ok)
            .filter_map(|r| r.median)
            .collect();
        if v.is_empty() {
            f64::INFINITY
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    kexes.sort_by(|a, b| mean_of(a).partial_cmp(&mean_of(b)).unwrap_or(std::cmp::Ordering::Equal));
    let mut header = vec!["kex".to_string()];
    header.extend(keys.iter().cloned());
    header.push("average".into());
    let rows = kexes
        .iter()
        .map(|k| {
            let mut row = vec![k.clone()];
            for h in &keys {
                let cell = hs
                    .iter()
                    .find(|r| r.subject.kex.as_deref() == Some(k.as_str()) && hostkey(r) == *h)
                    .map(|r| seconds_cell(r))
                    .unwrap_or_default();
                row.push(cell);
            }
            let m = mean_of(k);
            row.push(if m.is_finite() {
                crate::units::Seconds(m).to_string()
            } else {
                String::new()
            });
            row
        })
        .collect();
    Some(Table {
        title: "SSH handshake: connect, authenticate, run `true` (median time, lower is better)".into(),
        header,
        rows,
        notes: vec!["Paid once per connection: kex and host key matter for many short sessions, not for bulk speed.".into()],
    })
}

/// The feature check: what both sides accept, per kind of algorithm.
fn features(doc: &Document) -> Option<Table> {
    let acc: Vec<&ResultRecord> = doc.results.iter().filter(|r| r.kind == Kind::SshAccept).collect();
    if acc.is_empty() {
        return None;
    }
    let cats: [(&str, Pick); 4] = [
        ("cipher", |s| s.cipher.clone()),
        ("MAC", |s| s.mac.clone()),
        ("kex", |s| s.kex.clone()),
        ("host key", |s| s.hostkey.clone()),
    ];
    let mut rows = Vec::new();
    for (cat, pick) in cats {
        let of: Vec<&&ResultRecord> = acc.iter().filter(|r| pick(&r.subject).is_some()).collect();
        if of.is_empty() {
            continue;
        }
        let yes = of.iter().filter(|r| r.status == Status::Ok && r.median == Some(1.0)).count();
        let no: Vec<String> = of
            .iter()
            .filter(|r| !(r.status == Status::Ok && r.median == Some(1.0)))
            .filter_map(|r| pick(&r.subject))
            .collect();
        rows.push(vec![cat.to_string(), format!("{yes} of {}", of.len()), no.join(", ")]);
    }
    Some(Table {
        title: "SSH feature check: what both sides accept".into(),
        header: ["algorithms", "accepted", "refused"].map(String::from).to_vec(),
        rows,
        notes: vec![String::from(
            "Each list is negotiated on its own (RFC 4253 §7.1), so a cipher × MAC × kex × host-key combination is accepted when each of its algorithms is (AEAD ciphers take no MAC)."
        )],
    })
}
