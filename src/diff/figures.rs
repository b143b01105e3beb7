//! The figures a diff compares: each measured metric of what is negotiated now and
//! of what the recommendation negotiates, read from the run's results.

use super::negotiate::Negotiated;
use super::Figure;
use crate::judge::Knowledge;
use crate::model::{Document, Kind, Metric, ResultRecord, Status};

fn ok(doc: &Document, kind: Kind, metric: Metric) -> impl Iterator<Item = &ResultRecord> + '_ {
    doc.results
        .iter()
        .filter(move |r| r.kind == kind && r.metric == metric && r.status == Status::Ok && r.median.is_some())
}

/// The record with the most samples among `it`.
fn most<'a>(it: impl Iterator<Item = &'a ResultRecord>) -> Option<&'a ResultRecord> {
    it.max_by_key(|r| r.samples.unwrap_or(0))
}

/// The figures of a negotiated choice in `doc`: (metric, unit, higher is better, figure).
pub fn figures(doc: &Document, n: &Negotiated, k: &Knowledge) -> Vec<(&'static str, &'static str, bool, Option<Figure>)> {
    let lib = |r: &&ResultRecord| {
        r.subject.library.as_deref().is_none_or(|l| l == "openssl") && r.subject.server_library.as_deref().is_none_or(|l| l == "openssl")
    };
    match n {
        Negotiated::Tls { version, suite, group, .. } => {
            let is = |r: &&ResultRecord| {
                r.subject.suite.as_deref() == Some(suite.as_str()) && r.subject.protocol.as_deref().is_none_or(|p| p == version)
            };
            // Loopback (or a remote server's downloads): not the figures measured
            // through a private nginx, which `through_figure` reads.
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
                .filter(|r| r.subject.protocol.as_deref() == Some(version.as_str()))
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
                ("throughput", "bytes_per_sec", true, bulk.and_then(Figure::of)),
                ("server CPU per GB", "seconds", false, cpu.and_then(Figure::of)),
                ("handshakes", "handshakes_per_sec", true, hs.and_then(Figure::of)),
            ]
        }
        Negotiated::Ssh { cipher, mac, kex, .. } => {
            let pair =
                |r: &&ResultRecord| r.subject.cipher.as_deref() == Some(cipher.as_str()) && r.subject.mac.as_deref() == mac.as_deref();
            let bulk = most(ok(doc, Kind::SshBulk, Metric::BytesPerSec).filter(pair));
            // The private sshd's CPU per GB, per session, as TLS's server figure.
            let server = most(
                ok(doc, Kind::SshBulk, Metric::Seconds)
                    .filter(pair)
                    .filter(|r| r.subject.mode.as_deref() == Some("server-cpu-per-gb")),
            );
            // The ssh client's CPU per GB: the ratio of medians, so no interval.
            let cpu = bulk.and_then(|r| {
                let c = r.cpu_median?;
                (c > 0.0).then(|| {
                    let v = 1e9 / c;
                    Figure {
                        median: v,
                        ci95_low: v,
                        ci95_high: v,
                    }
                })
            });
            let hs =
                most(ok(doc, Kind::SshHandshake, Metric::Seconds).filter(|r| r.subject.kex.as_deref().is_some_and(|k| same_alg(k, kex))));
            vec![
                ("throughput", "bytes_per_sec", true, bulk.and_then(Figure::of)),
                ("server CPU per GB", "seconds", false, server.and_then(Figure::of)),
                ("client CPU per GB", "seconds", false, cpu),
                ("handshake", "seconds", false, hs.and_then(Figure::of)),
            ]
        }
    }
}

/// The throughput of a negotiated TLS choice measured through a private nginx
/// (`measure::tls::through`), when the run has it.
pub fn through_figure(doc: &Document, n: &Negotiated) -> Option<Figure> {
    let Negotiated::Tls { version, suite, .. } = n else {
        return None;
    };
    most(ok(doc, Kind::TlsBulk, Metric::BytesPerSec).filter(|r| {
        r.subject.mode.as_deref() == Some(crate::measure::tls::through::MODE)
            && r.subject.suite.as_deref() == Some(suite.as_str())
            && r.subject.protocol.as_deref() == Some(version.as_str())
    }))
    .and_then(Figure::of)
}

/// The nginx worker's CPU per GB for a negotiated TLS choice, measured through a
/// private nginx (`measure::tls::through`), when the run has it.
pub fn through_cpu_figure(doc: &Document, n: &Negotiated) -> Option<Figure> {
    let Negotiated::Tls { version, suite, .. } = n else {
        return None;
    };
    most(ok(doc, Kind::TlsBulk, Metric::Seconds).filter(|r| {
        r.subject.mode.as_deref() == Some(crate::model::THROUGH_NGINX_CPU)
            && r.subject.suite.as_deref() == Some(suite.as_str())
            && r.subject.protocol.as_deref() == Some(version.as_str())
    }))
    .and_then(Figure::of)
}

/// The same SSH algorithm under its two names (`sntrup761x25519-sha512` and
/// `sntrup761x25519-sha512@openssh.com`, `curve25519-sha256@libssh.org` ...).
pub fn same_alg(a: &str, b: &str) -> bool {
    a == b || a.split('@').next() == b.split('@').next()
}
