//! Remote (`--connect`): which protocols, suites and groups a server accepts, its
//! preference order, handshake rates per accepted suite and, with `--http-get`,
//! HTTP/1.1 download speed per accepted suite.
//!
//! The client is the `--lib` library's `TlsLibrary` (any registered one). What
//! that library cannot offer (a protocol it does not speak, a suite it lacks, a
//! group it has not) is not tried: `Scan::not_offered`, recorded as unsupported
//! with why.
//!
//! With `--priority`, the library's own configuration text (GnuTLS's priority
//! string, `TlsLibrary::native_suites`) is walked instead: which of its suites
//! the server accepts (each offered alone, one handshake each), then handshake
//! rates per accepted suite ([`walk`]).

use super::probe::{durations, HandshakeProbe, NOT_RESUMED, NO_TICKET};
use super::wire::{handshake_records, record_or_fail};
use super::*;
use crate::backend::openssl::tls::{self as ssl, is_ffdhe, ConnectError, Protocol};
use crate::backend::tls::{NativeSuite, Negotiated, Selection, TlsLibrary};
use crate::catalog::Library;
use crate::error::UsageError;
use crate::measure::engine::sampler::{self, Rate, SamplerConfig};
use crate::measure::sink::Measurements;
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use crate::units::Seconds;
use anyhow::{anyhow, bail, Context, Result};
use serde_json::json;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

/// A server named with `--connect`.
pub struct RemotePlan {
    /// As typed, for messages: `host:port`.
    pub target: String,
    pub host: String,
    pub addr: SocketAddr,
    pub sni: Option<String>,
    pub protocols: Vec<Protocol>,
    /// Candidate suites (all the local libssl can offer, or --suites); those the
    /// client's library lacks are not offered, and said so.
    pub suites: Vec<Suite>,
    pub groups: Vec<&'static str>,
    pub threads: usize,
    pub timeout: Duration,
    pub http_get: Option<String>,
    pub handshakes: bool,
    pub budget: Seconds,
    /// The client's library (the one `--lib`).
    pub lib: Arc<dyn TlsLibrary>,
    /// `--priority`: the library's own configuration text, whose suites are
    /// offered one by one ([`walk`]) instead of the protocols, suites and groups above.
    pub native: Option<Native>,
}

/// A library's own configuration text (`--priority`) and the suites it enables.
pub struct Native {
    pub text: String,
    pub suites: Vec<NativeSuite>,
}

/// `host:port`, `[v6]:port`.
pub(crate) fn split_target(t: &str) -> Result<(String, u16), UsageError> {
    let bad = || UsageError::Invalid(format!("--connect wants HOST:PORT, got '{t}'"));
    let (h, p) = t.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = p.parse().map_err(|_| bad())?;
    let h = h.trim_start_matches('[').trim_end_matches(']');
    if h.is_empty() || port == 0 {
        return Err(bad());
    }
    Ok((h.to_string(), port))
}

/// The address of `host:port` and the SNI to send: `--sni`, else the host name
/// (none for an IP address). Resolving is the first contact with the outside: a
/// failure is exit 1.
pub(crate) fn resolve_target(host: &str, port: u16, sni: Option<&str>) -> Result<(SocketAddr, Option<String>)> {
    let addr = (host, port)
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {host}"))?
        .next()
        .ok_or_else(|| anyhow!("{host} has no address"))?;
    let sni = sni
        .map(str::to_string)
        .or_else(|| host.parse::<std::net::IpAddr>().is_err().then(|| host.to_string()));
    Ok((addr, sni))
}

impl RemotePlan {
    /// A plan for the one library of `--lib` (the app checks there is one): it
    /// offers protocols, suites and groups through its `TlsLibrary`, or with
    /// `--priority`, walks that text's suites (a library that takes its own
    /// configuration text, `libraries::native_text`).
    pub fn new(a: &crate::options::TlsOptions, target: &str, budget: Seconds) -> Result<RemotePlan> {
        let (host, port) = split_target(target)?;
        let chosen = a.libraries.first().copied().unwrap_or(Library::DEFAULT);
        let lib = super::libraries::library(chosen)?;
        // The downloads need the library's streams (`ClientConfig::stream`).
        if let (Some(_), Some(why)) = (&a.http_get, lib.lacks_streams()) {
            return Err(UsageError::Invalid(format!(
                "--http-get with --lib {}: {why}; {} offer it",
                chosen.as_str(),
                crate::backend::libraries::streaming_libs()
            ))
            .into());
        }
        let native = match (&a.priority, crate::backend::libraries::native_text(chosen)) {
            (None, _) => None,
            (Some(_), None) => {
                return Err(UsageError::Invalid(format!(
                    "--priority is a library's own configuration text: use {}",
                    crate::backend::libraries::native_libs()
                ))
                .into())
            }
            (Some(text), Some(what)) => {
                if !a.suites.is_empty() || a.http_get.is_some() {
                    return Err(UsageError::Invalid(format!(
                        "with --priority, --connect takes the suites from {what} (--lib {}); --suites and --http-get are for a run without --priority",
                        chosen.as_str()
                    ))
                    .into());
                }
                let suites = lib
                    .native_suites(text)
                    .unwrap_or_else(|| Err(anyhow!("{} takes no configuration text of its own", lib.version())))?;
                Some(Native {
                    text: text.clone(),
                    suites,
                })
            }
        };
        // Own text walks it; else what the client offers.
        let (protocols, groups, suites) = match native {
            Some(_) => (Vec::new(), Vec::new(), Vec::new()),
            None => {
                let protocols = parse_protocols(&a.protocols, &Protocol::ALL)?;
                // Groups this libssl lacks but the client's library has are offered too.
                let groups = parse_groups(&a.groups, &ssl::PROBE_GROUPS, &lib.groups())?;
                let local = local_suites()?;
                let user = resolve_suites(&a.suites, &local)?;
                let suites: Vec<Suite> = if user.is_empty() { local } else { user }
                    .into_iter()
                    .filter(|s| !s.needs_credentials())
                    .collect();
                (protocols, groups, suites)
            }
        };
        if let Some(p) = &a.http_get {
            if !p.starts_with('/') {
                return Err(UsageError::Invalid(format!("--http-get wants a path starting with '/', got '{p}'")).into());
            }
        }
        let (addr, sni) = resolve_target(&host, port, a.sni.as_deref())?;
        Ok(RemotePlan {
            target: format!("{host}:{port}"),
            host,
            addr,
            sni,
            protocols,
            suites,
            groups,
            threads: a.threads as usize,
            timeout: Duration::from_secs_f64(a.timeout.0),
            http_get: a.http_get.clone(),
            handshakes: !a.no_handshakes,
            budget,
            lib,
            native,
        })
    }

    /// The subject of a suite offered through this plan's library.
    fn subject(&self, p: Protocol, suite: &Suite, threads: usize) -> Subject {
        Subject {
            library: Some(self.lib.name().to_string()),
            ..suite_subject(p, suite, threads)
        }
    }

    /// One handshake offering `s`: what it negotiated.
    pub(super) fn offer(&self, s: &Selection) -> Result<Negotiated, ConnectError> {
        let client = self.lib.client(s, false).map_err(|e| ConnectError::Rejected(format!("{e:#}")))?;
        let mut c = client.connect(self.addr, self.sni.as_deref(), self.timeout, None, false)?;
        let n = c.negotiated();
        c.close();
        Ok(n)
    }
}

/// The server's answer to one protocol's suite order.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Order {
    pub protocol: String,
    /// The server picked the client's first suite in both orders offered.
    pub honours_client_order: bool,
    /// Its own order, found by offering what is left after each pick (empty when it
    /// follows the client).
    pub server_preference: Vec<String>,
}

/// What `--connect` found out before anything was timed.
pub struct Scan {
    pub protocols: Vec<(Protocol, Option<String>)>,
    pub suites: Vec<(Protocol, Suite, Option<String>)>,
    pub groups: Vec<(Protocol, &'static str, Option<String>)>,
    pub orders: Vec<Order>,
    /// Protocols, suites and groups the client's library cannot offer: not
    /// tried (the server's answer to them is unknown), with why.
    pub not_offered: Vec<(Subject, String)>,
}

impl Scan {
    pub fn accepted_suites(&self) -> impl Iterator<Item = (Protocol, &Suite)> {
        self.suites.iter().filter(|(_, _, r)| r.is_none()).map(|(p, s, _)| (*p, s))
    }
}

pub(super) fn refusal(e: ConnectError) -> Result<String> {
    match e {
        ConnectError::Rejected(why) => Ok(why),
        other => Err(anyhow!("{other}")),
    }
}

/// Enumerates protocols, suites and groups, one offer per handshake, and the
/// server's preference order. Errors that concern the connection itself (refused,
/// unreachable, not TLS, no handshake at all) end the run with a message naming
/// the server.
pub fn scan(plan: &RemotePlan, progress: &dyn Fn(&str)) -> Result<Scan> {
    let t = &plan.target;
    let lib = &plan.lib;
    progress(&format!("reaching {t} with {}", lib.version()));
    if let Err(e) = plan.offer(&Selection::default()) {
        return Err(unreachable(t, e, plan.timeout, |e| {
            format!(
                "{t} refused a TLS handshake offering every protocol and suite {} has: {e}",
                lib.version()
            )
        }));
    }
    let with_context = |r: Result<String>| {
        if crate::interrupt::by_user() {
            return Err(crate::error::Interrupted { kept: 0 }.into());
        }
        r.with_context(|| format!("while enumerating {t}"))
    };
    let mut out = Scan {
        protocols: Vec::new(),
        suites: Vec::new(),
        groups: Vec::new(),
        orders: Vec::new(),
        not_offered: Vec::new(),
    };
    let (speaks, has) = (lib.protocols(), lib.suites());
    for &p in &plan.protocols {
        if !speaks.contains(&p) {
            let s = Subject {
                protocol: Some(p.label().into()),
                ..Default::default()
            };
            out.not_offered.push((s, format!("{} does not speak {}", lib.version(), p.label())));
            continue;
        }
        progress(&format!("{t}: {}", p.label()));
        let r = match plan.offer(&Selection::only(p)) {
            Ok(_) => None,
            Err(e) => Some(with_context(refusal(e))?),
        };
        out.protocols.push((p, r));
    }
    for &(p, ref refused) in &out.protocols.clone() {
        if refused.is_some() {
            continue;
        }
        for s in plan.suites.iter().filter(|s| p.can_negotiate(&s.min_protocol)) {
            if crate::interrupt::by_user() {
                return Err(crate::error::Interrupted { kept: 0 }.into());
            }
            if crate::interrupt::cut() {
                return Err(crate::deadline::DeadlinePassed::new(format!("enumerating {t}")).into());
            }
            if !has.contains(&s.iana) {
                let why = lib
                    .lacks(&s.iana)
                    .unwrap_or_else(|| format!("{} does not implement {}", lib.version(), s.iana));
                out.not_offered.push((plan.subject(p, s, 1), why));
                continue;
            }
            let r = match plan.offer(&one(p, s)) {
                Ok((_, got, _)) if got == s.iana => None,
                Ok((_, got, _)) => Some(format!("offered alone, yet {got} was negotiated")),
                Err(e) => Some(with_context(refusal(e))?),
            };
            out.suites.push((p, s.clone(), r));
        }
        let accepted: Vec<Suite> = out
            .suites
            .iter()
            .filter(|(q, _, r)| *q == p && r.is_none())
            .map(|(_, s, _)| s.clone())
            .collect();
        out.groups
            .extend(scan_groups(plan, p, &accepted, &with_context, &mut out.not_offered)?);
        if accepted.len() >= 2 {
            out.orders.push(preference(plan, p, &accepted)?);
        }
    }
    Ok(out)
}

/// Which groups the server accepts with the suites it accepted: TLS 1.3 (key
/// shares) and TLS 1.2 ECDHE.
type Refusal<'a> = &'a dyn Fn(Result<String>) -> Result<String>;

fn scan_groups(
    plan: &RemotePlan,
    p: Protocol,
    accepted: &[Suite],
    with_context: Refusal,
    not_offered: &mut Vec<(Subject, String)>,
) -> Result<Vec<(Protocol, &'static str, Option<String>)>> {
    let kx_suites: Vec<&Suite> = accepted
        .iter()
        .filter(|s| p == Protocol::Tls13 || (p == Protocol::Tls12 && s.kx == "ECDH"))
        .collect();
    let mut out = Vec::new();
    if kx_suites.is_empty() {
        return Ok(out);
    }
    // Only what the client's library has.
    let has = plan.lib.groups();
    for &g in plan
        .groups
        .iter()
        .filter(|g| p == Protocol::Tls13 || !(is_ffdhe(g) || ssl::is_mlkem(g)))
    {
        if !has.iter().any(|h| h == g) {
            let s = Subject {
                protocol: Some(p.label().into()),
                group: Some(g.to_string()),
                ..Default::default()
            };
            not_offered.push((s, format!("{} does not implement the group {g}", plan.lib.version())));
            continue;
        }
        let s = Selection {
            suites: kx_suites.iter().map(|s| s.name()).collect(),
            groups: vec![g.to_string()],
            ..Selection::only(p)
        };
        let r = match plan.offer(&s) {
            Ok(_) => None,
            Err(e) => Some(with_context(refusal(e))?),
        };
        out.push((p, g, r));
    }
    Ok(out)
}

pub(super) fn preference(plan: &RemotePlan, p: Protocol, accepted: &[Suite]) -> Result<Order> {
    let pick = |offer: &[&Suite]| -> Result<String> {
        let s = Selection {
            suites: offer.iter().map(|s| s.name()).collect(),
            ..Selection::only(p)
        };
        plan.offer(&s)
            .map(|(_, suite, _)| suite)
            .map_err(|e| anyhow!("{}: {e} while finding its suite order", plan.target))
    };
    let fwd: Vec<&Suite> = accepted.iter().collect();
    let rev: Vec<&Suite> = accepted.iter().rev().collect();
    let honours = pick(&fwd)? == fwd[0].iana && pick(&rev)? == rev[0].iana;
    let mut server_preference = Vec::new();
    if !honours {
        let mut left = fwd.clone();
        while !left.is_empty() {
            let c = pick(&left)?;
            let before = left.len();
            left.retain(|s| s.iana != c);
            if left.len() == before {
                break;
            }
            server_preference.push(c);
        }
    }
    Ok(Order {
        protocol: p.label().to_string(),
        honours_client_order: honours,
        server_preference,
    })
}

impl RemotePlan {
    pub fn settings(&self, scan: &Scan) -> serde_json::Value {
        json!({
            "mode": "remote",
            "target": self.target,
            "sni": self.sni,
            "library": self.lib.name(),
            "threads": self.threads,
            "timeout_seconds": self.timeout.as_secs_f64(),
            "http_get": self.http_get,
            "budget_seconds": self.budget.0,
            "server_order": scan.orders,
        })
    }
}

// ---------------------------------------------------------------------------
// Remote: timing

/// Records what the scan found, then times handshakes (and HTTP downloads) per
/// accepted suite.
pub fn remote(plan: &RemotePlan, scan: &Scan, session: &mut Measurements) -> Result<()> {
    let accepted: Vec<(Protocol, Suite)> = scan.accepted_suites().map(|(p, s)| (p, s.clone())).collect();
    let per_suite = plan.handshakes as usize * 4 + plan.http_get.is_some() as usize;
    let total = scan.protocols.len() + scan.suites.len() + scan.groups.len() + scan.not_offered.len() + accepted.len() * per_suite;
    session.progress_start(total as u64);
    record_scan(plan, scan, session)?;
    let n = (accepted.len() * (plan.handshakes as usize * 2 + plan.http_get.is_some() as usize)).max(1);
    let (mut gets_tried, mut gets_failed, mut last_get_error) = (0usize, 0usize, String::new());
    // What the scan left of the budget is shared out, not the whole budget: a slow
    // scan (many suites, a far server) must not push the run past its deadline.
    let left = crate::deadline::budget_left().map_or(plan.budget.0, |l| l.0.min(plan.budget.0));
    let cfg = crate::measure::plans::share(Seconds(left * 0.9), n);
    for (p, suite) in &accepted {
        if crate::interrupt::requested() {
            break;
        }
        let subject = plan.subject(*p, suite, plan.threads);
        // Full handshakes, then resumed ones (TLS 1.2 tickets, TLS 1.3 PSK).
        for resumed in [false, true].into_iter().filter(|_| plan.handshakes) {
            remote_handshakes(plan, (*p, suite), resumed, &subject, cfg, session)?;
        }
        if let Some(path) = &plan.http_get {
            session.progress_message(&format!("{} {} GET {path}", p.label(), suite.iana));
            let mut bulk_subject = subject.clone();
            bulk_subject.op = Some("http-get".into());
            bulk_subject.path = Some(path.clone());
            // Over the library's streams (`http.rs`): one without them is said.
            if let Some(why) = plan.lib.lacks_streams() {
                session.record(ResultRecord::not_ok(
                    Kind::TlsBulk,
                    bulk_subject,
                    Metric::BytesPerSec,
                    Status::Unsupported,
                    why,
                ))?;
                continue;
            }
            let r = remote_gets(plan, (*p, suite), path, &mut bulk_subject, cfg);
            gets_tried += 1;
            if let Err(e) = &r {
                gets_failed += 1;
                last_get_error = format!("{e:#}");
            }
            record_or_fail(session, r, &bulk_subject, &[(Metric::BytesPerSec, None)], Kind::TlsBulk)?;
        }
    }
    session.progress_finish();
    if gets_tried > 0 && gets_failed == gets_tried {
        // Exit 3 (could not measure): what was asked for, the download, never worked.
        bail!(
            "every GET {} failed ({gets_failed} of {gets_tried} suites); the last: {last_get_error}",
            plan.http_get.as_deref().unwrap_or("/")
        );
    }
    Ok(())
}

/// What the scan found: one accepted-or-refused record per protocol, suite and
/// group, and one "unsupported" record per one the client's library could not offer.
fn record_scan(plan: &RemotePlan, scan: &Scan, session: &mut Measurements) -> Result<()> {
    for (p, r) in &scan.protocols {
        let s = Subject {
            protocol: Some(p.label().into()),
            ..Default::default()
        };
        session.record(ResultRecord::accepted(Kind::TlsAccept, s, r.is_none(), r.clone()))?;
    }
    for (p, suite, r) in &scan.suites {
        let s = plan.subject(*p, suite, 1);
        session.record(ResultRecord::accepted(Kind::TlsAccept, s, r.is_none(), r.clone()))?;
    }
    for (p, g, r) in &scan.groups {
        let s = Subject {
            protocol: Some(p.label().into()),
            group: Some(g.to_string()),
            ..Default::default()
        };
        session.record(ResultRecord::accepted(Kind::TlsAccept, s, r.is_none(), r.clone()))?;
    }
    for (s, why) in &scan.not_offered {
        session.record(ResultRecord::not_ok(
            Kind::TlsAccept,
            s.clone(),
            Metric::Accepted,
            Status::Unsupported,
            why.clone(),
        ))?;
    }
    Ok(())
}

/// One protocol and suite alone.
fn one(p: Protocol, suite: &Suite) -> Selection {
    Selection {
        suites: vec![suite.name()],
        ..Selection::only(p)
    }
}

/// Full or resumed handshakes with one accepted suite, recorded.
fn remote_handshakes(
    plan: &RemotePlan,
    (p, suite): (Protocol, &Suite),
    resumed: bool,
    subject: &Subject,
    cfg: SamplerConfig,
    session: &mut Measurements,
) -> Result<()> {
    let op = if resumed { "resumed" } else { "full" };
    session.progress_message(&format!("{} {} {op} handshakes", p.label(), suite.iana));
    let mut hs_subject = subject.clone();
    hs_subject.op = Some(op.into());
    let r = (|| -> Result<Vec<ResultRecord>> {
        let client = plan.lib.client(&one(p, suite), resumed)?;
        let want = |n: &Negotiated| check_negotiated((p, &suite.iana, None), (&n.0, &n.1, n.2.as_deref()));
        let mut probes = (0..plan.threads)
            .map(|_| HandshakeProbe::new(&client, plan.addr, plan.sni.as_deref(), plan.timeout, (resumed, false), want))
            .collect::<Result<Vec<_>>>()?;
        let cfg = SamplerConfig { max_units: 10_000, ..cfg };
        let m = sampler::measure(&mut probes, Rate::PerSecond, &cfg)?;
        let mut subject = hs_subject.clone();
        subject.group = probes[0].negotiated.2.clone();
        Ok(handshake_records(Kind::TlsHandshake, subject, &durations(&probes), &m))
    })();
    let metrics = [(Metric::HandshakesPerSec, None), (Metric::Seconds, Some("latency"))];
    match r {
        // A server that does not resume is a property of the server, not a failure.
        Err(e) if resumed && [NOT_RESUMED, NO_TICKET].iter().any(|w| format!("{e:#}").contains(w)) => {
            for (metric, mode) in metrics {
                let mut s = hs_subject.clone();
                s.mode = mode.map(str::to_string);
                session.record(ResultRecord::not_ok(
                    Kind::TlsHandshake,
                    s,
                    metric,
                    Status::Unsupported,
                    format!("{e:#}"),
                ))?;
            }
            Ok(())
        }
        r => record_or_fail(session, r, &hs_subject, &metrics, Kind::TlsHandshake),
    }
}

/// HTTP/1.1 downloads of `path` with one accepted suite, through the plan's
/// library (its streams: every read keeps the timeout and the run's deadline).
fn remote_gets(
    plan: &RemotePlan,
    (p, suite): (Protocol, &Suite),
    path: &str,
    bulk_subject: &mut Subject,
    cfg: SamplerConfig,
) -> Result<Vec<ResultRecord>> {
    let client = plan.lib.client(&one(p, suite), false)?;
    let mut probes: Vec<HttpProbe> = (0..plan.threads)
        .map(|_| {
            let host = plan.sni.clone().unwrap_or_else(|| plan.host.clone());
            HttpProbe::new(&client, plan.addr, plan.sni.clone(), host, path, plan.timeout)
        })
        .collect();
    let cfg = SamplerConfig { max_units: 1000, ..cfg };
    let m = sampler::measure(&mut probes, Rate::PerSecond, &cfg)?;
    // The body size (Content-Length or chunked), as the subject's size.
    bulk_subject.bytes = probes[0].body;
    Ok(vec![match m.wall() {
        Some(w) => ResultRecord::ok(Kind::TlsBulk, bulk_subject.clone(), Metric::BytesPerSec, &w, m.cpu().as_ref()),
        None => ResultRecord::not_ok(
            Kind::TlsBulk,
            bulk_subject.clone(),
            Metric::BytesPerSec,
            Status::Failed,
            "no samples",
        ),
    }])
}

// ---------------------------------------------------------------------------
// Remote: the library's own configuration text (`--priority`)

impl RemotePlan {
    /// The run's settings for a walk of the library's own text.
    pub fn walk_settings(&self) -> serde_json::Value {
        json!({
            "mode": "remote",
            "target": self.target,
            "sni": self.sni,
            "library": self.lib.name(),
            "priority": self.native.as_ref().map(|n| n.text.clone()),
            "threads": self.threads,
            "timeout_seconds": self.timeout.as_secs_f64(),
            "budget_seconds": self.budget.0,
        })
    }

    /// The subject of a suite that the library's own text names.
    fn native_subject(&self, protocol: &str, iana: &str, threads: usize) -> Subject {
        let local = crate::discover::openssl::tls_suites().unwrap_or_default();
        Subject {
            protocol: Some(protocol.to_string()),
            suite: Some(iana.to_string()),
            openssl_name: local.iter().find(|l| l.iana == iana).map(|l| l.openssl.clone()),
            library: Some(self.lib.name().to_string()),
            threads: Some(threads),
            ..Default::default()
        }
    }
}

/// A selection that is exactly the library's own text.
fn native(text: &str) -> Selection {
    Selection {
        native: Some(text.to_string()),
        ..Default::default()
    }
}

/// `--priority`: which suites of the library's own text the server accepts (each
/// offered alone, one handshake each), then handshake rates per accepted suite.
pub fn walk(plan: &RemotePlan, session: &mut Measurements, progress: &dyn Fn(&str)) -> Result<()> {
    let t = &plan.target;
    let own = plan
        .native
        .as_ref()
        .ok_or_else(|| anyhow!("no configuration text of the library's own to walk"))?;
    progress(&format!("reaching {t} with {}", plan.lib.version()));
    if let Err(e) = plan.offer(&native(&own.text)) {
        return Err(unreachable(t, e, plan.timeout, |e| {
            format!("{t} refused a {} handshake with '{}': {e}", plan.lib.version(), own.text)
        }));
    }
    session.progress_start((own.suites.len() * (1 + 2 * plan.handshakes as usize)) as u64);
    let mut accepted: Vec<(String, &NativeSuite, &str)> = Vec::new();
    for s in &own.suites {
        if crate::interrupt::requested() {
            break;
        }
        session.progress_message(&format!("{t}: {}", s.iana));
        let family = s.protocol.label().to_string();
        let (protocol, refusal) = match &s.alone {
            Err(e) => (family, Some(e.clone())),
            Ok(text) => match plan.offer(&native(text)) {
                Ok((v, got, _)) if got == s.iana => {
                    accepted.push((v.clone(), s, text));
                    (v, None)
                }
                Ok((v, got, _)) => (v, Some(format!("offered alone, yet {got} was negotiated"))),
                Err(ConnectError::Rejected(e)) => (family, Some(e)),
                Err(e) => bail!("{t}: {e} while enumerating its suites"),
            },
        };
        let subject = plan.native_subject(&protocol, &s.iana, 1);
        session.record(ResultRecord::accepted(Kind::TlsAccept, subject, refusal.is_none(), refusal))?;
    }
    if plan.handshakes {
        let cfg = crate::measure::plans::share(Seconds(plan.budget.0 * 0.9), accepted.len().max(1));
        let cfg = SamplerConfig { max_units: 10_000, ..cfg };
        for (protocol, s, text) in &accepted {
            if crate::interrupt::requested() {
                break;
            }
            session.progress_message(&format!("{protocol} {} handshakes", s.iana));
            let mut subject = plan.native_subject(protocol, &s.iana, plan.threads);
            subject.op = Some("full".into());
            let r = (|| -> Result<Vec<ResultRecord>> {
                let client = plan.lib.client(&native(text), false)?;
                let any = |_: &Negotiated| Ok(());
                let mut probes = (0..plan.threads)
                    .map(|_| HandshakeProbe::new(&client, plan.addr, plan.sni.as_deref(), plan.timeout, (false, false), any))
                    .collect::<Result<Vec<_>>>()?;
                let m = sampler::measure(&mut probes, Rate::PerSecond, &cfg)?;
                let mut s = subject.clone();
                s.group = probes.last().and_then(|p| p.negotiated.2.clone());
                Ok(handshake_records(Kind::TlsHandshake, s, &durations(&probes), &m))
            })();
            let metrics = [(Metric::HandshakesPerSec, None), (Metric::Seconds, Some("latency"))];
            record_or_fail(session, r, &subject, &metrics, Kind::TlsHandshake)?;
        }
    }
    session.progress_finish();
    Ok(())
}
