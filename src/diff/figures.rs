//! The figures a diff compares: each measured metric of what is negotiated now and
//! of what the recommendation negotiates, read from the run's results.

use super::negotiate::Negotiated;
use super::{Change, Figure};
use crate::judge::Knowledge;
use crate::model::{Document, Kind, Metric, ResultRecord, Status};
use crate::stats::Ratio;

fn ok(doc: &Document, kind: Kind, metric: Metric) -> impl Iterator<Item = &ResultRecord> + '_ {
    doc.results
        .iter()
        .filter(move |r| r.kind == kind && r.metric == metric && r.status == Status::Ok && r.median.is_some())
}

/// The record with the most samples among `it`.
fn most<'a>(it: impl Iterator<Item = &'a ResultRecord>) -> Option<&'a ResultRecord> {
    it.max_by_key(|r| r.samples.unwrap_or(0))
}

/// A figure and the record it was read from (its index in the document's
/// results), so that one measurement is known as one, and its samples found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sourced {
    pub figure: Figure,
    pub record: usize,
    /// The figure is the record's own (its samples are the figure's samples);
    /// false for a figure derived from it (the client's CPU per GB).
    pub own: bool,
}

/// The figures of a negotiated choice in `doc`: (metric, unit, higher is better, figure).
#[cfg(test)]
pub fn figures(doc: &Document, n: &Negotiated, k: &Knowledge) -> Vec<(&'static str, &'static str, bool, Option<Figure>)> {
    figures_at(doc, n, k)
        .into_iter()
        .map(|(m, u, h, f)| (m, u, h, f.map(|s| s.figure)))
        .collect()
}

fn at(doc: &Document, r: Option<&ResultRecord>) -> Option<Sourced> {
    let r = r?;
    Some(Sourced {
        figure: Figure::of(r)?,
        record: doc.results.iter().position(|x| std::ptr::eq(x, r))?,
        own: true,
    })
}

/// [`figures`], each with its record.
pub fn figures_at(doc: &Document, n: &Negotiated, k: &Knowledge) -> Vec<(&'static str, &'static str, bool, Option<Sourced>)> {
    match n {
        Negotiated::Tls { version, suite, group, .. } => tls_figures(doc, version, suite, group.as_deref(), k),
        Negotiated::Ssh { cipher, mac, kex, .. } => ssh_figures(doc, cipher, mac.as_deref(), kex),
    }
}

/// [`figures_at`] for a negotiated TLS choice.
fn tls_figures(
    doc: &Document,
    version: &str,
    suite: &str,
    group: Option<&str>,
    k: &Knowledge,
) -> Vec<(&'static str, &'static str, bool, Option<Sourced>)> {
    let lib = |r: &&ResultRecord| {
        r.subject.library.as_deref().is_none_or(|l| l == "openssl") && r.subject.server_library.as_deref().is_none_or(|l| l == "openssl")
    };
    let is = |r: &&ResultRecord| {
        r.subject.suite.as_deref().is_some_and(|s| same_alg(s, suite)) && r.subject.protocol.as_deref().is_none_or(|p| p == version)
    };
    // Loopback (or a remote server's downloads): not the figures measured
    // through a private server, which `through_figure` reads.
    let bulk = most(
        ok(doc, Kind::TlsBulk, Metric::BytesPerSec)
            .filter(is)
            .filter(lib)
            .filter(|r| r.subject.threads.unwrap_or(1) == 1 && r.subject.mode.is_none()),
    );
    let cpu = most(
        ok(doc, Kind::TlsBulk, Metric::Seconds)
            .filter(is)
            .filter(lib)
            .filter(|r| r.subject.mode.as_deref() == Some("server-cpu-per-gb")),
    );
    let hs_all: Vec<&ResultRecord> = ok(doc, Kind::TlsHandshake, Metric::HandshakesPerSec)
        .filter(lib)
        .filter(|r| r.subject.protocol.as_deref() == Some(version))
        .filter(|r| !matches!(r.subject.op.as_deref(), Some("resumed" | "hrr")))
        .filter(|r| {
            let g = r.subject.group.as_deref().unwrap_or("");
            match group {
                Some(want) => k
                    .group(g)
                    .map_or(g.eq_ignore_ascii_case(want), |x| x.name.eq_ignore_ascii_case(want)),
                None => g.is_empty(),
            }
        })
        .collect();
    let hs = most(hs_all.iter().copied().filter(is)).or_else(|| most(hs_all.iter().copied()));
    vec![
        ("throughput", "bytes_per_sec", true, at(doc, bulk)),
        ("server CPU per GB", "seconds", false, at(doc, cpu)),
        ("handshakes", "handshakes_per_sec", true, at(doc, hs)),
    ]
}

/// [`figures_at`] for a negotiated SSH choice.
fn ssh_figures(doc: &Document, cipher: &str, mac: Option<&str>, kex: &str) -> Vec<(&'static str, &'static str, bool, Option<Sourced>)> {
    let pair = |r: &&ResultRecord| {
        r.subject.cipher.as_deref().is_some_and(|c| crate::aliases::same(c, cipher))
            && match (r.subject.mac.as_deref(), mac) {
                (Some(a), Some(b)) => crate::aliases::same(a, b),
                (a, b) => a == b,
            }
    };
    let bulk = most(ok(doc, Kind::SshBulk, Metric::BytesPerSec).filter(pair));
    // The private sshd's CPU per GB, per session, as TLS's server figure.
    let server = most(
        ok(doc, Kind::SshBulk, Metric::Seconds)
            .filter(pair)
            .filter(|r| r.subject.mode.as_deref() == Some("server-cpu-per-gb")),
    );
    // The ssh client's CPU per GB: the ratio of medians, so no interval.
    let cpu = at(doc, bulk).and_then(|s| {
        let c = bulk?.cpu_median?;
        (c > 0.0).then(|| {
            let v = 1e9 / c;
            Sourced {
                figure: Figure {
                    median: v,
                    ci95_low: v,
                    ci95_high: v,
                },
                own: false,
                ..s
            }
        })
    });
    let hs = most(ok(doc, Kind::SshHandshake, Metric::Seconds).filter(|r| r.subject.kex.as_deref().is_some_and(|k| same_alg(k, kex))));
    vec![
        ("throughput", "bytes_per_sec", true, at(doc, bulk)),
        ("server CPU per GB", "seconds", false, at(doc, server)),
        ("client CPU per GB", "seconds", false, cpu),
        ("handshake", "seconds", false, at(doc, hs)),
    ]
}

/// The throughput of a negotiated TLS choice measured through a private
/// `software` (`nginx`, `apache` ...: `measure::tls::through`), when the run has it.
pub fn through_figure(doc: &Document, software: &str, n: &Negotiated) -> Option<Figure> {
    let Negotiated::Tls { version, suite, .. } = n else {
        return None;
    };
    let mode = crate::model::through_mode(software);
    most(ok(doc, Kind::TlsBulk, Metric::BytesPerSec).filter(|r| {
        r.subject.mode.as_deref() == Some(mode.as_str())
            && r.subject.suite.as_deref().is_some_and(|s| same_alg(s, suite))
            && r.subject.protocol.as_deref() == Some(version)
    }))
    .and_then(Figure::of)
}

/// The download rate of a negotiated TLS choice measured through a private
/// NZBGet (`measure::tls::nzbget`), when the run has it.
pub fn through_nzbget_figure(doc: &Document, n: &Negotiated) -> Option<Figure> {
    let Negotiated::Tls { version, suite, .. } = n else {
        return None;
    };
    most(ok(doc, Kind::TlsBulk, Metric::BytesPerSec).filter(|r| {
        r.subject.mode.as_deref() == Some(crate::model::THROUGH_NZBGET)
            && r.subject.suite.as_deref().is_some_and(|s| same_alg(s, suite))
            && r.subject.protocol.as_deref() == Some(version)
    }))
    .and_then(Figure::of)
}

/// The server's CPU per GB for a negotiated TLS choice (nginx's worker, ...),
/// measured through a private `software` (`measure::tls::through`), when the run has it.
pub fn through_cpu_figure(doc: &Document, software: &str, n: &Negotiated) -> Option<Figure> {
    let Negotiated::Tls { version, suite, .. } = n else {
        return None;
    };
    let mode = crate::model::through_cpu_mode(software);
    most(ok(doc, Kind::TlsBulk, Metric::Seconds).filter(|r| {
        r.subject.mode.as_deref() == Some(mode.as_str())
            && r.subject.suite.as_deref().is_some_and(|s| same_alg(s, suite))
            && r.subject.protocol.as_deref() == Some(version)
    }))
    .and_then(Figure::of)
}

/// The same algorithm under two names (`sntrup761x25519-sha512` and
/// `sntrup761x25519-sha512@openssh.com`, `curve25519-sha256@libssh.org` ...):
/// [`crate::aliases`].
pub fn same_alg(a: &str, b: &str) -> bool {
    crate::aliases::same(a, b)
}

/// Two negotiated choices that are one choice under other names (aliases of the
/// same algorithms): one measurement, not a change.
pub fn same_choice(a: &Negotiated, b: &Negotiated) -> bool {
    let opt = |x: &Option<String>, y: &Option<String>| match (x, y) {
        (Some(x), Some(y)) => same_alg(x, y),
        (x, y) => x == y,
    };
    match (a, b) {
        (
            Negotiated::Tls {
                version: v1,
                suite: s1,
                group: g1,
                ..
            },
            Negotiated::Tls {
                version: v2,
                suite: s2,
                group: g2,
                ..
            },
        ) => v1 == v2 && same_alg(s1, s2) && opt(g1, g2),
        (
            Negotiated::Ssh {
                cipher: c1,
                mac: m1,
                kex: k1,
                hostkey: h1,
            },
            Negotiated::Ssh {
                cipher: c2,
                mac: m2,
                kex: k2,
                hostkey: h2,
            },
        ) => same_alg(c1, c2) && opt(m1, m2) && same_alg(k1, k2) && same_alg(h1, h2),
        _ => false,
    }
}

/// Resamples of [`crate::stats::ratio_bootstrap`] for a diff's gain.
const RESAMPLES: usize = 2000;

impl Change {
    /// The change of one metric from `now` to `rec`, each read from its record in
    /// `doc`. Both read from one record (or `same`: one choice under two names) is
    /// one measurement: "the same choice", no interval. Else the gain is the ratio
    /// of the two medians with a real ratio interval: a bootstrap over both
    /// records' samples when the run still holds them, else the interval made
    /// from the two medians' intervals ([`crate::stats::ratio_of_intervals`]).
    pub(super) fn between(
        metric: &str,
        unit: &str,
        higher: bool,
        (now, rec): (Option<Sourced>, Option<Sourced>),
        same: bool,
        doc: &Document,
    ) -> Change {
        let one = matches!((now, rec), (Some(a), Some(b)) if a.record == b.record);
        let mut c = Change::new(metric, unit, higher, now.map(|s| s.figure), rec.map(|s| s.figure), same || one);
        let (Some(n), Some(r), false) = (now, rec, same || one) else {
            return c;
        };
        let values = |s: Sourced| match doc.results.get(s.record) {
            Some(x) if s.own => x.values.as_slice(),
            _ => &[],
        };
        let (num, den) = if higher { (r, n) } else { (n, r) };
        if let Some(ratio) = crate::stats::ratio_bootstrap(values(num), values(den), RESAMPLES, 0x00c1_9e4b) {
            c.set_ratio(
                ratio,
                &format!("bootstrap over {} and {} samples", values(n).len(), values(r).len()),
            );
        }
        c
    }

    /// The gain from a ratio interval (better over worse): "cannot tell" when it
    /// is wider than [`crate::stats::CANNOT_TELL`] either way, else the gain with
    /// its interval, measurable when the interval excludes no change.
    pub(super) fn set_ratio(&mut self, r: Ratio, how: &str) {
        use super::pct;
        let (g, lo, hi) = (r.ratio - 1.0, r.low - 1.0, r.high - 1.0);
        self.set_gain(g, lo, hi, how);
        if !self.measurable {
            self.verdict = format!(
                "no measurable gain (median {}; 95 % interval {} to {}, {how})",
                pct(g),
                pct(lo),
                pct(hi)
            );
        }
        self.unless_too_wide(r.ratio, r.low, r.high);
    }

    /// "cannot tell" instead of figures when the ratio's interval is wider than
    /// [`crate::stats::CANNOT_TELL`] either way.
    pub(super) fn unless_too_wide(&mut self, ratio: f64, low: f64, high: f64) {
        if (Ratio { ratio, low, high }).cannot_tell() {
            self.measurable = false;
            self.verdict = format!(
                "cannot tell (median {}, but the 95 % interval of the ratio is wider than ×{} either way; a longer --budget or a quieter machine would tell)",
                super::pct(ratio - 1.0),
                crate::stats::CANNOT_TELL
            );
        }
    }

    /// [`Change::new`]'s gain from the two figures' intervals.
    pub(super) fn gain_from_intervals(&mut self, n: Figure, r: Figure) {
        let t = |f: Figure| (f.median, f.ci95_low, f.ci95_high);
        let (num, den) = if self.higher_is_better { (t(r), t(n)) } else { (t(n), t(r)) };
        match crate::stats::ratio_of_intervals(num, den) {
            Some(ratio) => self.set_ratio(ratio, "from the two medians' intervals"),
            None => {
                self.gain = Some(num.0 / den.0 - 1.0);
                self.verdict = format!(
                    "cannot tell (median {}, but an interval reaches zero: the figures bound nothing)",
                    super::pct(num.0 / den.0 - 1.0)
                );
            }
        }
    }

    /// Within a tie of the recommendation's own ranking, the order is the
    /// policy's, not a measured one: a gain there is no finding, whatever the
    /// two figures alone say (`check` agrees with `recommend`).
    pub(super) fn within_tie(&mut self) {
        if self.measurable {
            self.measurable = false;
            self.verdict = format!(
                "{}, but tied in the recommendation's ranking (policy order decides within a tie)",
                self.verdict
            );
        }
    }
}

/// Whether the recommendation's own ranking ties what is negotiated now with what
/// it recommends: each list where they differ ranks both, at one rank.
pub fn tied_in_ranking(rec: &crate::recommend::Recommendation, now: &Negotiated, r: &Negotiated) -> bool {
    let rank = |list: &str, name: &str| {
        rec.rankings
            .iter()
            .filter(|x| x.list == list)
            .flat_map(|x| x.ranked.iter())
            .find(|x| same_alg(&x.name, name))
            .map(|x| x.rank)
    };
    let tied = |list: &str, a: &str, b: &str| same_alg(a, b) || matches!((rank(list, a), rank(list, b)), (Some(x), Some(y)) if x == y);
    match (now, r) {
        (Negotiated::Ssh { cipher: c1, mac: m1, .. }, Negotiated::Ssh { cipher: c2, mac: m2, .. }) => {
            tied("ssh_ciphers", c1, c2)
                && match (m1, m2) {
                    (Some(a), Some(b)) => tied("ssh_macs", a, b),
                    (a, b) => a == b,
                }
        }
        (
            Negotiated::Tls {
                version: v1, suite: s1, ..
            },
            Negotiated::Tls {
                version: v2, suite: s2, ..
            },
        ) => {
            let list = if v1 == "TLSv1.3" { "tls13_suites" } else { "tls12_suites" };
            v1 == v2 && tied(list, s1, s2)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Subject;

    use crate::testing::doc_of as doc;

    fn bulk(cipher: &str, v: &[f64]) -> ResultRecord {
        let subject = Subject {
            cipher: Some(cipher.into()),
            kex: Some("curve25519-sha256".into()),
            ..Default::default()
        };
        let mut r = ResultRecord::ok(
            Kind::SshBulk,
            subject,
            Metric::BytesPerSec,
            &crate::model::Summary::of(v).unwrap(),
            None,
        );
        r.values = v.to_vec();
        r
    }

    fn ssh(cipher: &str, kex: &str) -> Negotiated {
        Negotiated::Ssh {
            cipher: cipher.into(),
            mac: None,
            kex: kex.into(),
            hostkey: "ssh-ed25519".into(),
        }
    }

    fn throughput(d: &Document, now: &Negotiated, rec: &Negotiated) -> Change {
        let k = Knowledge::builtin().unwrap();
        let (n, r) = (figures_at(d, now, &k).remove(0), figures_at(d, rec, &k).remove(0));
        Change::between(n.0, n.1, n.2, (n.3, r.3), same_choice(now, rec), d)
    }

    /// One algorithm under two names is one choice; one record on both sides is
    /// one measurement: "the same choice", no interval, whatever else differs.
    #[test]
    fn one_measurement_is_the_same_choice() {
        let d = doc(vec![bulk("aes128-gcm@openssh.com", &[2.7e8, 2.8e8, 2.9e8, 2.75e8, 2.85e8, 2.8e8])]);
        let (a, b) = (
            ssh("aes128-gcm@openssh.com", "sntrup761x25519-sha512"),
            ssh("aes128-gcm@openssh.com", "sntrup761x25519-sha512@openssh.com"),
        );
        assert!(same_choice(&a, &b));
        assert!(!same_choice(&a, &ssh("aes256-gcm@openssh.com", "sntrup761x25519-sha512")));
        let c = throughput(&d, &a, &b);
        assert_eq!((c.verdict.as_str(), c.gain_low, c.measurable), ("the same choice", None, false));
        // Another key exchange, the same cipher: the throughput is one record.
        let c = throughput(&d, &a, &ssh("aes128-gcm@openssh.com", "curve25519-sha256"));
        assert_eq!((c.verdict.as_str(), c.gain_low), ("the same choice", None));
        let text = super::super::render::one(&super::super::SoftwareDiff {
            now: Some(a.clone()),
            recommended: Some(b.clone()),
            changes: vec![c],
            lines: vec!["Ciphers aes128-gcm@openssh.com".into()],
            ..super::super::SoftwareDiff::blank("sshd")
        });
        assert!(text.contains("(the same choice)\n"), "{text}");
        assert!(
            text.contains("\n    throughput             280.0 MB/s   the same choice\n"),
            "{text}"
        );
        assert!(!text.contains('→') && !text.contains("overlap") && !text.contains("+0 %"), "{text}");
    }

    /// Two records with samples: the gain's interval is a bootstrap over them,
    /// and a 25 % gain with tight samples is measurable; wide samples cannot tell.
    #[test]
    fn two_records_get_a_ratio_interval_over_their_samples() {
        let tight = |m: f64| (0..10).map(|i| m * (1.0 + 0.01 * (i as f64 - 4.5) / 4.5)).collect::<Vec<_>>();
        let d = doc(vec![
            bulk("chacha20-poly1305@openssh.com", &tight(2.0e8)),
            bulk("aes128-gcm@openssh.com", &tight(2.5e8)),
        ]);
        let (now, rec) = (ssh("chacha20-poly1305@openssh.com", "x"), ssh("aes128-gcm@openssh.com", "x"));
        let c = throughput(&d, &now, &rec);
        assert!(c.measurable && c.verdict.starts_with("+25 %"), "{c:?}");
        assert!(c.gain_low.unwrap() > 0.2 && c.gain_high.unwrap() < 0.3, "{c:?}");
        let wide = |m: f64| (0..10).map(|i| m * [0.05, 1.0, 3.0][i % 3]).collect::<Vec<_>>();
        let d = doc(vec![
            bulk("chacha20-poly1305@openssh.com", &wide(2.0e8)),
            bulk("aes128-gcm@openssh.com", &wide(2.5e8)),
        ]);
        let c = throughput(&d, &now, &rec);
        assert!(!c.measurable && c.verdict.starts_with("cannot tell"), "{c:?}");
    }

    /// Within a tie of the recommendation's ranking, a reordering is no gain.
    #[test]
    fn a_permutation_within_a_tie_is_no_finding() {
        let ranked = |name: &str, rank: usize| {
            serde_json::json!({"name": name, "rank": rank, "tied": true, "level": "recommended",
                               "median": 1.0, "ci95_low": 0.9, "ci95_high": 1.1, "basis": "b"})
        };
        let rec: crate::recommend::Recommendation = serde_json::from_value(serde_json::json!({
            "protocol": "ssh", "target": "sshd", "location": "l", "policy": "intermediate", "choice": {}, "lines": [],
            "rankings": [{"list": "ssh_ciphers", "metric": "bytes_per_sec", "higher_is_better": true,
                          "ranked": [ranked("aes256-gcm@openssh.com", 1), ranked("aes128-gcm@openssh.com", 1),
                                     ranked("chacha20-poly1305@openssh.com", 3)]}]
        }))
        .unwrap();
        let (a, b, c) = (
            ssh("aes256-gcm@openssh.com", "x"),
            ssh("aes128-gcm@openssh.com", "x"),
            ssh("chacha20-poly1305@openssh.com", "x"),
        );
        assert!(tied_in_ranking(&rec, &a, &b));
        assert!(!tied_in_ranking(&rec, &c, &a), "ranked apart");
        assert!(!tied_in_ranking(&rec, &a, &ssh("aes128-ctr", "x")), "not ranked");
        let mut g = Change::new("throughput", "bytes_per_sec", true, None, None, false);
        g.set_ratio(
            Ratio {
                ratio: 1.08,
                low: 1.02,
                high: 1.15,
            },
            "x",
        );
        assert!(g.measurable);
        g.within_tie();
        assert!(!g.measurable && g.verdict.contains("tied in the recommendation's ranking"), "{g:?}");
    }
}
