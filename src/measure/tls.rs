//! `cipherbench tls`: real handshakes and bulk transfers over real TCP sockets,
//! with the system libssl on both ends.
//!
//! - Loopback (the default): an in-process server (one worker thread per client
//!   thread) on 127.0.0.1, certificates generated at start. Handshakes sweep
//!   group × certificate × key exchange (Kx/Au are paid once per handshake); bulk
//!   sweeps the suites with one fixed key exchange and certificate (Enc/Mac are paid
//!   per byte). `--full-matrix` runs the cross product. Bulk subjects are measured
//!   in interleaved slices (A B C, A B C, …), each a fresh connection, so that
//!   their intervals hold between runs and not only inside one connection
//!   (`bulk_sliced`, `sampler::interleave`).
//! - Remote (`--connect`): which protocols, suites and groups the server accepts
//!   (one suite per handshake), its preference order, handshake rates per accepted
//!   suite and, with `--http-get`, HTTP/1.1 download speed per accepted suite.
//!
//! Every probe checks what was negotiated before it is timed, and the bulk probe can
//! check a SHA-256 of every byte on the far side (`--verify`).

use crate::backend::openssl::certs::{CertType, Identity};
use crate::backend::openssl::tls::{self as ssl, is_ffdhe, Coalesced, ConnectError, Protocol, Settings};
use crate::error::UsageError;
use crate::measure::engine::sampler::{self, thread_cpu_time, Probe, Rate, SamplerConfig};
use crate::measure::tls_wire::{
    self as wire, handshake_records, record_or_fail, serve_commands, Workers, BULK_RECV, BULK_SEND, BULK_TRANSPORT,
};
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use crate::session::Session;
use crate::units::Seconds;
use anyhow::{anyhow, bail, Context, Result};
use openssl::ssl::{Ssl, SslContext, SslSession, SslStream};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// Suites and names

/// A suite as the local libssl knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suite {
    pub iana: String,
    pub openssl: String,
    /// As OpenSSL prints it: `SSLv3`, `TLSv1`, `TLSv1.2`, `TLSv1.3`.
    pub min_protocol: String,
    /// OpenSSL's Kx and Au labels (`any` for TLS 1.3).
    pub kx: String,
    pub au: String,
    pub enc: String,
}

impl Suite {
    pub fn tls13(&self) -> bool {
        self.min_protocol == "TLSv1.3"
    }
    /// PSK and SRP suites need credentials a benchmark does not have.
    fn needs_credentials(&self) -> bool {
        self.kx.contains("PSK") || self.kx == "SRP" || self.au == "PSK" || self.au == "SRP"
    }
    fn fits_cert(&self, c: CertType) -> bool {
        self.tls13() || self.au == c.au() || self.au == "None"
    }
    fn fits_group(&self, g: Option<&str>) -> bool {
        match (self.kx.as_str(), g) {
            ("any", Some(_)) => true,
            ("ECDH", Some(g)) => !is_ffdhe(g),
            ("DH", Some(g)) => is_ffdhe(g),
            ("RSA", None) => true,
            _ => false,
        }
    }
}

/// Every suite the local libssl can offer (`openssl ciphers -V -stdname`).
pub fn local_suites() -> Result<Vec<Suite>> {
    Ok(crate::discover::openssl::tls_suites()?
        .into_iter()
        .map(|i| Suite {
            iana: i.iana,
            openssl: i.openssl,
            min_protocol: i.min_protocol,
            kx: i.kx,
            au: i.au,
            enc: i.enc,
        })
        .collect())
}

/// Resolves IANA or OpenSSL names, case-insensitively, with suggestions for typos.
pub fn resolve_suites(names: &[String], local: &[Suite]) -> Result<Vec<Suite>, UsageError> {
    let mut out: Vec<Suite> = Vec::new();
    for n in names {
        let found = local
            .iter()
            .find(|s| s.iana.eq_ignore_ascii_case(n) || s.openssl.eq_ignore_ascii_case(n));
        match found {
            Some(s) if !out.contains(s) => out.push(s.clone()),
            Some(_) => {}
            None => {
                if let Some(k) = crate::judge::Knowledge::builtin()
                    .ok()
                    .and_then(|k| k.tls_suite(n).map(|s| s.iana.clone()))
                {
                    return Err(UsageError::Invalid(format!(
                        "TLS suite '{n}' ({k}) is not in this build of OpenSSL ({}); `cipherbench list tls` shows what it has",
                        crate::backend::openssl::runtime_version()
                    )));
                }
                let mut known: Vec<String> = Vec::new();
                for s in local {
                    known.push(s.iana.to_ascii_lowercase());
                    known.push(s.openssl.to_ascii_lowercase());
                }
                let sugg = crate::error::closest(n, known.iter().map(String::as_str));
                let sugg = sugg
                    .iter()
                    .filter_map(|l| {
                        local.iter().find_map(|s| {
                            if s.iana.eq_ignore_ascii_case(l) {
                                Some(s.iana.clone())
                            } else if s.openssl.eq_ignore_ascii_case(l) {
                                Some(s.openssl.clone())
                            } else {
                                None
                            }
                        })
                    })
                    .collect();
                return Err(UsageError::Unknown {
                    what: "TLS suite",
                    given: n.clone(),
                    suggestions: sugg,
                });
            }
        }
    }
    Ok(out)
}

pub(crate) fn parse_protocols(names: &[String], default: &[Protocol]) -> Result<Vec<Protocol>, UsageError> {
    if names.is_empty() {
        return Ok(default.to_vec());
    }
    let mut out = Vec::new();
    for n in names {
        let p = Protocol::parse(n).ok_or_else(|| UsageError::unknown("TLS protocol", n, ["1.0", "1.1", "1.2", "1.3"]))?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

fn parse_groups(names: &[String], default: &[&'static str]) -> Result<Vec<&'static str>, UsageError> {
    if names.is_empty() {
        return Ok(default.to_vec());
    }
    let mut out = Vec::new();
    for n in names {
        let known = ssl::PROBE_GROUPS.iter().map(|g| g.to_ascii_lowercase()).collect::<Vec<_>>();
        let g = ssl::canonical_group(n).ok_or_else(|| UsageError::unknown("group", n, known.iter().map(String::as_str)))?;
        if !out.contains(&g) {
            out.push(g);
        }
    }
    Ok(out)
}

pub(crate) fn parse_certs(names: &[String]) -> Result<Vec<CertType>, UsageError> {
    if names.is_empty() {
        return Ok(CertType::ALL.to_vec());
    }
    let mut out = Vec::new();
    for n in names {
        let c = CertType::parse(n).ok_or_else(|| UsageError::unknown("certificate type", n, CertType::ALL.map(CertType::name)))?;
        if !out.contains(&c) {
            out.push(c);
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// The loopback plan

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Upload,
    Download,
}

impl Direction {
    pub fn label(self) -> &'static str {
        match self {
            Direction::Upload => "client-to-server",
            Direction::Download => "server-to-client",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    Handshake { resumed: bool },
    Bulk(Direction),
}

/// One loopback subject.
#[derive(Debug, Clone)]
pub struct Item {
    pub protocol: Protocol,
    pub suite: Suite,
    pub group: Option<&'static str>,
    pub cert: CertType,
    pub work: Work,
}

fn kex_label(group: Option<&str>) -> &'static str {
    match group {
        Some(g) if is_ffdhe(g) => "DHE",
        Some(_) => "ECDHE",
        None => "RSA",
    }
}

impl Item {
    pub(crate) fn settings(&self) -> Settings {
        let mut s = Settings::only(self.protocol);
        if self.suite.tls13() {
            s.ciphersuites = Some(self.suite.iana.clone());
        } else {
            s.cipher_list = Some(self.suite.openssl.clone());
        }
        s.groups = self.group.map(str::to_string);
        // TLS 1.2 serves an ECDSA certificate only when its curve is among the
        // client's groups; listing it second keeps the measured group first.
        let curve = match self.cert {
            CertType::EcdsaP256 => Some("P-256"),
            CertType::EcdsaP384 => Some("P-384"),
            _ => None,
        };
        if let (Some(g), Some(c), false) = (self.group, curve, self.suite.tls13()) {
            if g != c {
                s.groups = Some(format!("{g}:{c}"));
            }
        }
        s
    }

    pub fn subject(&self, plan: &LoopbackPlan) -> Subject {
        let mut s = suite_subject(self.protocol, &self.suite, plan.threads);
        s.group = self.group.map(str::to_string);
        s.cert = Some(self.cert.name().to_string());
        s.kex = Some(kex_label(self.group).to_string());
        match self.work {
            Work::Handshake { resumed } => s.op = Some(if resumed { "resumed" } else { "full" }.into()),
            Work::Bulk(d) => {
                s.op = Some(d.label().into());
                s.bytes = Some(plan.write_size as u64);
            }
        }
        s
    }

    pub(crate) fn label(&self) -> String {
        let what = match self.work {
            Work::Handshake { resumed: false } => "handshake".to_string(),
            Work::Handshake { resumed: true } => "resumed handshake".to_string(),
            Work::Bulk(d) => format!("bulk {}", d.label()),
        };
        format!(
            "{} {} {} {} {what}",
            self.protocol.label(),
            self.suite.iana,
            self.group.unwrap_or("-"),
            self.cert.name()
        )
    }

    /// The records this item produces, for failures and progress.
    pub(crate) fn records(&self) -> Vec<(Kind, Metric, Option<&'static str>)> {
        match self.work {
            Work::Handshake { .. } => vec![
                (Kind::TlsHandshake, Metric::HandshakesPerSec, None),
                (Kind::TlsHandshake, Metric::Seconds, Some("latency")),
            ],
            Work::Bulk(_) => vec![
                (Kind::TlsBulk, Metric::BytesPerSec, None),
                (Kind::TlsBulk, Metric::Seconds, Some("client-cpu-per-gb")),
                (Kind::TlsBulk, Metric::Seconds, Some("server-cpu-per-gb")),
            ],
        }
    }
}

pub(crate) fn suite_subject(p: Protocol, suite: &Suite, threads: usize) -> Subject {
    Subject {
        protocol: Some(p.label().to_string()),
        suite: Some(suite.iana.clone()),
        openssl_name: Some(suite.openssl.clone()),
        library: Some("openssl".into()),
        threads: Some(threads),
        ..Default::default()
    }
}

/// What the loopback run measures and how hard.
pub struct LoopbackPlan {
    pub items: Vec<Item>,
    /// Subjects that cannot run here, with the reason.
    pub skipped: Vec<(Kind, Subject, String)>,
    pub threads: usize,
    pub write_size: usize,
    pub volume: Option<u64>,
    pub verify: bool,
    pub timeout: Duration,
    pub budget: Seconds,
    pub certs: Vec<CertType>,
}

/// The suite a handshake subject uses for a key exchange and certificate: the
/// user's first fitting suite, or an AES-128 one (GCM where the protocol has it).
fn handshake_suite<'a>(p: Protocol, kx: &str, cert: CertType, user: &'a [Suite], local: &'a [Suite]) -> Option<&'a Suite> {
    let fits = |s: &&Suite| s.kx == kx && s.fits_cert(cert) && s.au != "None" && p.can_negotiate(&s.min_protocol);
    if !user.is_empty() {
        return user.iter().find(fits);
    }
    let pool: Vec<&Suite> = local.iter().filter(fits).collect();
    pool.iter()
        .find(|s| s.openssl.contains("AES128-GCM-SHA256"))
        .or_else(|| pool.iter().find(|s| s.openssl.ends_with("AES128-SHA")))
        .or_else(|| pool.first())
        .copied()
}

impl LoopbackPlan {
    pub fn new(a: &crate::cli::TlsArgs, budget: Seconds) -> Result<LoopbackPlan> {
        let protocols = parse_protocols(&a.protocols, &[Protocol::Tls12, Protocol::Tls13])?;
        let groups = parse_groups(&a.groups, &ssl::GROUPS)?;
        let certs = parse_certs(&a.certs)?;
        let local = local_suites()?;
        let user = resolve_suites(&a.suites, &local)?;
        if let Some(s) = user.iter().find(|s| s.needs_credentials()) {
            return Err(UsageError::Invalid(format!(
                "{} needs a pre-shared key or SRP password; cipherbench cannot measure it",
                s.iana
            ))
            .into());
        }
        let mut plan = LoopbackPlan {
            items: Vec::new(),
            skipped: Vec::new(),
            threads: a.threads as usize,
            write_size: a.write_size.0 as usize,
            volume: a.bytes.map(|b| b.0),
            verify: a.verify,
            timeout: Duration::from_secs_f64(a.timeout.0),
            budget,
            certs: certs.clone(),
        };
        let for_protocol = |p: Protocol| -> Vec<Suite> {
            let base: Vec<Suite> = if user.is_empty() {
                local
                    .iter()
                    .filter(|s| {
                        if p == Protocol::Tls13 {
                            s.tls13()
                        } else {
                            s.kx == "ECDH" && s.au == certs[0].au() && s.enc != "None" && p.can_negotiate(&s.min_protocol)
                        }
                    })
                    .cloned()
                    .collect()
            } else {
                user.clone()
            };
            base.into_iter().filter(|s| p.can_negotiate(&s.min_protocol)).collect()
        };
        let groups_for = |s: &Suite| -> Vec<Option<&'static str>> {
            if s.kx == "RSA" {
                return vec![None];
            }
            groups.iter().map(|g| Some(*g)).filter(|g| s.fits_group(*g)).collect()
        };
        let directions: &[Direction] = if a.both_directions {
            &[Direction::Upload, Direction::Download]
        } else {
            &[Direction::Upload]
        };

        for &p in &protocols {
            let suites = for_protocol(p);
            if a.full_matrix {
                for s in &suites {
                    for &c in certs.iter().filter(|c| s.fits_cert(**c)) {
                        for g in groups_for(s) {
                            let mut works: Vec<Work> = Vec::new();
                            if !a.no_handshakes {
                                works.extend([Work::Handshake { resumed: false }, Work::Handshake { resumed: true }]);
                            }
                            if !a.no_bulk {
                                works.extend(directions.iter().map(|d| Work::Bulk(*d)));
                            }
                            for work in works {
                                plan.items.push(Item {
                                    protocol: p,
                                    suite: s.clone(),
                                    group: g,
                                    cert: c,
                                    work,
                                });
                            }
                        }
                    }
                }
                continue;
            }
            // Handshakes: group × certificate × key exchange, one suite each.
            if !a.no_handshakes {
                let kxs: &[&str] = if p == Protocol::Tls13 { &["any"] } else { &["ECDH", "DH", "RSA"] };
                let mut first: Option<Item> = None;
                for kx in kxs {
                    for &c in &certs {
                        let Some(s) = handshake_suite(p, kx, c, &user, &local) else {
                            continue;
                        };
                        for g in groups_for(s) {
                            let item = Item {
                                protocol: p,
                                suite: s.clone(),
                                group: g,
                                cert: c,
                                work: Work::Handshake { resumed: false },
                            };
                            first.get_or_insert_with(|| item.clone());
                            plan.items.push(item);
                        }
                    }
                }
                // Resumption skips Kx/Au (1.2 tickets) or the certificate (1.3 PSK):
                // once per protocol.
                if let Some(f) = first {
                    plan.items.push(Item {
                        work: Work::Handshake { resumed: true },
                        ..f
                    });
                }
            }
            // Bulk: every suite with one fixed key exchange and certificate.
            if !a.no_bulk {
                for s in &suites {
                    let cert = certs.iter().copied().find(|c| s.fits_cert(*c));
                    let group = groups_for(s).into_iter().next();
                    match (cert, group) {
                        (Some(cert), Some(group)) => {
                            for d in directions {
                                plan.items.push(Item {
                                    protocol: p,
                                    suite: s.clone(),
                                    group,
                                    cert,
                                    work: Work::Bulk(*d),
                                });
                            }
                        }
                        _ => {
                            let why = if cert.is_none() {
                                format!("needs an {} certificate (not among --certs, or none can be generated)", s.au)
                            } else {
                                "no key-exchange group among --groups fits it".to_string()
                            };
                            plan.skipped.push((Kind::TlsBulk, suite_subject(p, s, plan.threads), why));
                        }
                    }
                }
            }
        }
        if plan.items.is_empty() && plan.skipped.is_empty() {
            return Err(UsageError::Invalid(
                "nothing to measure: the protocols, suites, groups and certificates given have no combination in common".into(),
            )
            .into());
        }
        Ok(plan)
    }

    pub fn settings(&self) -> serde_json::Value {
        json!({
            "mode": "loopback",
            "threads": self.threads,
            "write_size": self.write_size,
            "volume_bytes": self.volume,
            "verify": self.verify,
            "bulk_transport": BULK_TRANSPORT,
            "subjects": self.items.len(),
            "certs": self.certs.iter().map(|c| c.name()).collect::<Vec<_>>(),
            "budget_seconds": self.budget.0,
        })
    }

    /// The sampler for one subject's work, the budget shared among `n` runs.
    pub(crate) fn sampler(&self, work: Work, n: usize) -> SamplerConfig {
        let mut cfg = crate::measure::plans::share(Seconds(self.budget.0 * 0.9), n);
        match work {
            Work::Handshake { .. } => cfg.max_units = 100_000,
            Work::Bulk(_) => {
                if let Some(v) = self.volume {
                    // A fixed volume per sample: grow to it and no further.
                    cfg.max_units = (v / self.write_size as u64).max(1);
                    cfg.sample_time = Seconds(f64::MAX / 4.0);
                    cfg.min_samples = cfg.min_samples.min(5);
                }
            }
        }
        cfg
    }
}

// ---------------------------------------------------------------------------
// The loopback server

/// An in-process TLS server on 127.0.0.1: one worker thread per client thread.
/// It answers every handshake with one byte, then serves bulk commands.
fn start_server(ctx: SslContext, workers: usize, timeout: Duration, bulk: bool) -> Result<Workers> {
    let listener = TcpListener::bind("127.0.0.1:0").context("binding a loopback port")?;
    Workers::start(listener, workers, move |tcp, _, _| serve_one(&ctx, tcp, timeout, bulk))
}

fn serve_one(ctx: &SslContext, tcp: TcpStream, timeout: Duration, bulk: bool) -> Result<()> {
    let _ = tcp.set_nodelay(true);
    tcp.set_read_timeout(Some(timeout))?;
    tcp.set_write_timeout(Some(timeout))?;
    let mut ssl = Ssl::new(ctx)?;
    let tcp = if bulk {
        ssl::plain_reads(&mut ssl);
        Coalesced::new(tcp, BULK_SEND, BULK_RECV)
    } else {
        Coalesced::new(tcp, 0, 0)
    };
    let mut s = match ssl.accept(tcp) {
        Ok(s) => s,
        // A client that gave up (or was only waking us) is not a server error.
        Err(openssl::ssl::HandshakeError::Failure(m)) if m.error().ssl_error().is_none() => return Ok(()),
        Err(e) => return Err(anyhow!("server handshake: {e}")),
    };
    serve_commands(&mut s)
}

// ---------------------------------------------------------------------------
// Probes

/// Why a resumed-handshake subject could not run against a server.
const NOT_RESUMED: &str = "the server did not resume the session it issued (no ticket or PSK resumption)";
const NO_TICKET: &str = "the server issued no session ticket (TLS 1.2 ticket or TLS 1.3 PSK), so there is nothing to resume";

/// Full or resumed handshakes, one TCP connection each.
struct HandshakeProbe {
    ctx: SslContext,
    addr: SocketAddr,
    sni: Option<String>,
    timeout: Duration,
    resumed: bool,
    /// Loopback: wait for the server's byte, so its side of the handshake is done too.
    ack: bool,
    session: Option<SslSession>,
    durations: Vec<f64>,
    /// The group the first connection negotiated, when libssl reports it.
    group: Option<String>,
}

impl HandshakeProbe {
    /// Connects once (twice when resuming) and checks that what was negotiated is
    /// what was asked for, before anything is timed.
    fn new(
        ctx: &SslContext,
        addr: SocketAddr,
        sni: Option<&str>,
        timeout: Duration,
        resumed: bool,
        ack: bool,
        expect: (Protocol, &str, Option<&str>),
    ) -> Result<Self> {
        let mut p = HandshakeProbe {
            ctx: ctx.clone(),
            addr,
            sni: sni.map(str::to_string),
            timeout,
            resumed,
            ack,
            session: None,
            durations: Vec::new(),
            group: None,
        };
        let (version, suite, group) = p.once()?;
        check_negotiated(expect, (&version, &suite, group.as_deref()))?;
        p.group = group;
        if resumed {
            p.once()?;
        }
        p.durations.clear();
        Ok(p)
    }

    fn once(&mut self) -> Result<(String, String, Option<String>)> {
        let offer = if self.resumed { self.session.clone() } else { None };
        let (mut s, elapsed) = wire::timed_handshake(self.ack, || {
            ssl::connect(&self.ctx, self.addr, self.sni.as_deref(), self.timeout, offer.as_deref())
                .map_err(|e| anyhow!("{}: {e}", self.addr))
        })?;
        if self.resumed {
            if offer.is_some() && !s.ssl().session_reused() {
                bail!("{NOT_RESUMED}");
            }
            // Loopback: the server's tickets came before its byte. A remote server's
            // TLS 1.3 tickets follow the handshake; the wait is part of the run's
            // wall time (handshakes/s), not of the handshake's latency.
            if !self.ack && !ssl::await_ticket(&mut s, self.timeout) {
                bail!("{NO_TICKET}");
            }
            self.session = s.ssl().session().map(|x| x.to_owned());
        }
        let (version, suite) = ssl::negotiated(&s);
        let group = ssl::negotiated_group(&s);
        let _ = s.shutdown();
        self.durations.push(elapsed);
        Ok((version, suite, group))
    }
}

/// Fails unless the connection negotiated the protocol, suite and (when libssl
/// reports it) group that were asked for.
pub(crate) fn check_negotiated(want: (Protocol, &str, Option<&str>), got: (&str, &str, Option<&str>)) -> Result<()> {
    let group_ok = match (want.2, got.2) {
        (Some(w), Some(g)) => w == g,
        _ => true,
    };
    if got.0 != want.0.label() || got.1 != want.1 || !group_ok {
        bail!(
            "asked for {} {} {} but negotiated {} {} {}",
            want.0.label(),
            want.1,
            want.2.unwrap_or("-"),
            got.0,
            got.1,
            got.2.unwrap_or("-")
        );
    }
    Ok(())
}

impl Probe for HandshakeProbe {
    fn run(&mut self, units: u64) -> Result<f64> {
        for _ in 0..units {
            self.once()?;
        }
        Ok(units as f64)
    }
}

/// One long-lived OpenSSL connection with the bulk transport (`tls_wire`'s protocol).
type BulkProbe = wire::BulkProbe<SslStream<Coalesced>>;

impl wire::BulkProbe<SslStream<Coalesced>> {
    /// Connects, checks what was negotiated and waits for the server's byte.
    fn connect(
        ctx: &SslContext,
        addr: SocketAddr,
        timeout: Duration,
        item: &Item,
        plan: &LoopbackPlan,
        direction: Direction,
    ) -> Result<Self> {
        let tcp = Coalesced::new(ssl::tcp(addr, timeout).map_err(|e| anyhow!("{addr}: {e}"))?, BULK_SEND, BULK_RECV);
        let s = ssl::handshake(ctx, tcp, None, None, true).map_err(|e| anyhow!("{addr}: {e}"))?;
        let (version, suite) = ssl::negotiated(&s);
        let group = ssl::negotiated_group(&s);
        check_negotiated((item.protocol, &item.suite.iana, item.group), (&version, &suite, group.as_deref()))?;
        BulkProbe::new(s, direction, plan.write_size, plan.verify)
    }
}

// ---------------------------------------------------------------------------
// Loopback measurement

pub(crate) fn identity(ids: &mut BTreeMap<CertType, Identity>, c: CertType) -> Result<&Identity> {
    if let std::collections::btree_map::Entry::Vacant(e) = ids.entry(c) {
        e.insert(Identity::generate(c)?);
    }
    Ok(&ids[&c])
}

/// Each probe's handshake latencies, for `handshake_records`.
fn durations(probes: &[HandshakeProbe]) -> Vec<&[f64]> {
    probes.iter().map(|p| p.durations.as_slice()).collect()
}

/// Measures one handshake item in one stretch: a server, `plan.threads` probes, the sampler.
fn measure_item(plan: &LoopbackPlan, item: &Item, id: &Identity) -> Result<Vec<ResultRecord>> {
    let Work::Handshake { resumed } = item.work else {
        bail!("bulk subjects are measured in slices (bulk_sliced)");
    };
    let settings = item.settings();
    let server = start_server(ssl::server_context(&settings, id)?, plan.threads, plan.timeout, false)?;
    let subject = item.subject(plan);
    let cfg = plan.sampler(item.work, plan.items.len());
    let ctx = ssl::client_context(&settings, resumed)?;
    let mut probes = (0..plan.threads)
        .map(|_| {
            HandshakeProbe::new(
                &ctx,
                server.addr,
                None,
                plan.timeout,
                resumed,
                true,
                (item.protocol, &item.suite.iana, item.group),
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let m = sampler::measure(&mut probes, Rate::PerSecond, &cfg)?;
    let out = handshake_records(Kind::TlsHandshake, subject, &durations(&probes), &m);
    if let Some(e) = server.error() {
        bail!("the loopback server failed: {e}");
    }
    Ok(out)
}

/// What the run's settings say about how bulk is measured (`bulk_slices`).
pub(crate) const BULK_SLICES: &str = "interleaved: rounds of one slice per bulk subject (A B C, A B C, ...), each slice a fresh connection (new TCP connection and full handshake, not timed) with a short untimed warm-up, then samples for the slice's share of the subject's budget; each slice is one sample (its bytes over its wall time, its CPU per GB), so median, 95% interval, min, max and n are over slices; with fewer than 3 slices the interval is widened to cover every sample seen and at least +-10% of the median";

/// One bulk subject of `bulk_sliced`: its server stays up for all its slices.
struct BulkSubject<'a> {
    item: &'a Item,
    direction: Direction,
    ctx: SslContext,
    server: Workers,
    cfg: SamplerConfig,
    /// Per slice: server CPU seconds and bytes of each sampled run.
    server_cpu: Vec<Vec<(f64, f64)>>,
}

/// Measures the bulk items in interleaved slices (`sampler::interleave`): one
/// round after another, each subject a slice per round, every slice a fresh
/// connection (TCP connect and full handshake, checked, not timed) to the subject's
/// server. `progress` hears of every slice before it starts. Per item: `None` when
/// Ctrl-C came before its first slice, else its records or why it failed.
fn bulk_sliced(
    plan: &LoopbackPlan,
    items: &[&Item],
    ids: &mut BTreeMap<CertType, Identity>,
    mut progress: impl FnMut(&Item, &sampler::SliceSpec),
) -> Vec<Option<Result<Vec<ResultRecord>>>> {
    let mut out: Vec<Option<Result<Vec<ResultRecord>>>> = items.iter().map(|_| None).collect();
    let mut ready: Vec<(usize, BulkSubject)> = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let Work::Bulk(direction) = item.work else {
            out[k] = Some(Err(anyhow!("not a bulk subject")));
            continue;
        };
        let setup = (|| -> Result<BulkSubject> {
            let settings = item.settings();
            let id = identity(ids, item.cert)?;
            let server = start_server(ssl::server_context(&settings, id)?, plan.threads, plan.timeout, true)?;
            Ok(BulkSubject {
                item,
                direction,
                ctx: ssl::client_context(&settings, false)?,
                server,
                cfg: plan.sampler(item.work, plan.items.len()),
                server_cpu: Vec::new(),
            })
        })();
        match setup {
            Ok(b) => ready.push((k, b)),
            Err(e) => out[k] = Some(Err(e)),
        }
    }
    let cfgs: Vec<SamplerConfig> = ready.iter().map(|(_, b)| b.cfg).collect();
    let measured = sampler::interleave(&cfgs, |spec| {
        let b = &mut ready[spec.subject].1;
        progress(b.item, spec);
        let mut probes = (0..plan.threads)
            .map(|_| BulkProbe::connect(&b.ctx, b.server.addr, plan.timeout, b.item, plan, b.direction))
            .collect::<Result<Vec<_>>>()?;
        let m = spec.measure(&mut probes, Rate::PerSecond)?;
        if !m.samples.is_empty() {
            b.server_cpu.push(wire::server_samples(&probes, m.samples.len()));
        }
        Ok(m)
    });
    for ((k, b), r) in ready.into_iter().zip(measured) {
        out[k] = match r {
            Ok(None) => None,
            Ok(Some(m)) => Some(match b.server.error() {
                Some(e) => Err(anyhow!("the loopback server failed: {e}")),
                None => Ok(wire::sliced_bulk_records(b.item.subject(plan), &m, &b.server_cpu)),
            }),
            Err(e) => Some(Err(e)),
        };
    }
    out
}

/// Records one item's outcome: its records, or one failed record per metric.
fn record_item(session: &mut Session, plan: &LoopbackPlan, item: &Item, r: Result<Vec<ResultRecord>>) -> Result<()> {
    match r {
        Ok(records) => {
            for r in records {
                session.record(r)?;
            }
        }
        Err(e) => {
            let subject = item.subject(plan);
            for (kind, metric, mode) in item.records() {
                let mut s = subject.clone();
                s.mode = mode.map(str::to_string);
                session.record(ResultRecord::not_ok(kind, s, metric, Status::Failed, format!("{e:#}")))?;
            }
        }
    }
    Ok(())
}

/// Runs the loopback plan; results go to the session as they are made. Handshake
/// items are measured one after another; then the bulk items, in interleaved
/// slices (`bulk_sliced`).
pub fn loopback(plan: &LoopbackPlan, session: &mut Session) -> Result<()> {
    let total: usize = plan.skipped.len() + plan.items.iter().map(|i| i.records().len()).sum::<usize>();
    session.progress_start(total as u64);
    for (kind, subject, why) in &plan.skipped {
        let metric = if *kind == Kind::TlsBulk {
            Metric::BytesPerSec
        } else {
            Metric::HandshakesPerSec
        };
        session.record(ResultRecord::not_ok(
            *kind,
            subject.clone(),
            metric,
            Status::Unsupported,
            why.clone(),
        ))?;
    }
    let mut ids = BTreeMap::new();
    let (bulk, handshakes): (Vec<&Item>, Vec<&Item>) = plan.items.iter().partition(|i| matches!(i.work, Work::Bulk(_)));
    for item in handshakes {
        if crate::interrupt::requested() {
            break;
        }
        session.progress_message(&item.label());
        let id = identity(&mut ids, item.cert)?;
        let r = measure_item(plan, item, id);
        record_item(session, plan, item, r)?;
    }
    if !bulk.is_empty() && !crate::interrupt::requested() {
        session.set_setting("bulk_slices", json!(BULK_SLICES));
        let results = {
            let s = &*session;
            bulk_sliced(plan, &bulk, &mut ids, |item, spec| {
                s.progress_message(&format!("{} (slice {}/{})", item.label(), spec.index + 1, spec.of))
            })
        };
        for (item, r) in bulk.iter().zip(results) {
            if let Some(r) = r {
                record_item(session, plan, item, r)?;
            }
        }
    }
    session.progress_finish();
    Ok(())
}

// ---------------------------------------------------------------------------
// Remote: enumeration

/// A server named with `--connect`.
pub struct RemotePlan {
    /// As typed, for messages: `host:port`.
    pub target: String,
    pub host: String,
    pub addr: SocketAddr,
    pub sni: Option<String>,
    pub protocols: Vec<Protocol>,
    /// Candidate suites (all the local libssl can offer, or --suites).
    pub suites: Vec<Suite>,
    pub groups: Vec<&'static str>,
    pub threads: usize,
    pub timeout: Duration,
    pub http_get: Option<String>,
    pub handshakes: bool,
    pub budget: Seconds,
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
    pub fn new(a: &crate::cli::TlsArgs, target: &str, budget: Seconds) -> Result<RemotePlan> {
        let (host, port) = split_target(target)?;
        let protocols = parse_protocols(&a.protocols, &Protocol::ALL)?;
        let groups = parse_groups(&a.groups, &ssl::PROBE_GROUPS)?;
        let local = local_suites()?;
        let user = resolve_suites(&a.suites, &local)?;
        let suites: Vec<Suite> = if user.is_empty() { local } else { user }
            .into_iter()
            .filter(|s| !s.needs_credentials())
            .collect();
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
        })
    }

    fn offer(&self, s: &Settings) -> Result<(String, String), ConnectError> {
        let ctx = ssl::client_context(s, false).map_err(|e| ConnectError::Rejected(format!("{e:#}")))?;
        let mut st = ssl::connect(&ctx, self.addr, self.sni.as_deref(), self.timeout, None)?;
        let n = ssl::negotiated(&st);
        let _ = st.shutdown();
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
}

impl Scan {
    pub fn accepted_suites(&self) -> impl Iterator<Item = (Protocol, &Suite)> {
        self.suites.iter().filter(|(_, _, r)| r.is_none()).map(|(p, s, _)| (*p, s))
    }
}

fn refusal(e: ConnectError) -> Result<String> {
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
    progress(&format!("reaching {t}"));
    match plan.offer(&Settings::default()) {
        Ok(_) => {}
        Err(ConnectError::Tcp(e)) => bail!("cannot connect to {t}: {e}"),
        Err(ConnectError::NotTls(e)) => bail!("{t} does not speak TLS: {e}"),
        Err(ConnectError::Timeout) => bail!(
            "{t} accepted the TCP connection but gave no TLS answer within {:.1} s (not TLS, or TLS only after a STARTTLS command?)",
            plan.timeout.as_secs_f64()
        ),
        Err(ConnectError::Rejected(e)) => {
            bail!("{t} refused a TLS handshake offering every protocol and suite this OpenSSL has: {e}")
        }
    }
    let with_context = |r: Result<String>| {
        if crate::interrupt::requested() {
            return Err(crate::error::Interrupted { kept: 0 }.into());
        }
        r.with_context(|| format!("while enumerating {t}"))
    };
    let mut out = Scan {
        protocols: Vec::new(),
        suites: Vec::new(),
        groups: Vec::new(),
        orders: Vec::new(),
    };
    for &p in &plan.protocols {
        progress(&format!("{t}: {}", p.label()));
        let r = match plan.offer(&Settings::only(p)) {
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
            if crate::interrupt::requested() {
                return Err(crate::error::Interrupted { kept: 0 }.into());
            }
            let item = Item {
                protocol: p,
                suite: s.clone(),
                group: None,
                cert: CertType::Rsa2048,
                work: Work::Handshake { resumed: false },
            };
            let mut settings = item.settings();
            settings.groups = None;
            let r = match plan.offer(&settings) {
                Ok((_, got)) if got == s.iana => None,
                Ok((_, got)) => Some(format!("offered alone, yet {got} was negotiated")),
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
        // Groups: TLS 1.3 (key shares) and TLS 1.2 ECDHE.
        let kx_suites: Vec<&Suite> = accepted
            .iter()
            .filter(|s| p == Protocol::Tls13 || (p == Protocol::Tls12 && s.kx == "ECDH"))
            .collect();
        if !kx_suites.is_empty() {
            for &g in plan.groups.iter().filter(|g| p == Protocol::Tls13 || !is_ffdhe(g)) {
                let mut s = Settings::only(p);
                if p == Protocol::Tls13 {
                    s.ciphersuites = Some(kx_suites.iter().map(|s| s.iana.as_str()).collect::<Vec<_>>().join(":"));
                } else {
                    s.cipher_list = Some(kx_suites.iter().map(|s| s.openssl.as_str()).collect::<Vec<_>>().join(":"));
                }
                s.groups = Some(g.to_string());
                if ssl::client_context(&s, false).is_err() {
                    continue; // this libssl lacks the group
                }
                let r = match plan.offer(&s) {
                    Ok(_) => None,
                    Err(e) => Some(with_context(refusal(e))?),
                };
                out.groups.push((p, g, r));
            }
        }
        if accepted.len() >= 2 {
            out.orders.push(preference(plan, p, &accepted)?);
        }
    }
    Ok(out)
}

fn preference(plan: &RemotePlan, p: Protocol, accepted: &[Suite]) -> Result<Order> {
    let pick = |offer: &[&Suite]| -> Result<String> {
        let mut s = Settings::only(p);
        if p == Protocol::Tls13 {
            s.ciphersuites = Some(offer.iter().map(|s| s.iana.as_str()).collect::<Vec<_>>().join(":"));
        } else {
            s.cipher_list = Some(offer.iter().map(|s| s.openssl.as_str()).collect::<Vec<_>>().join(":"));
        }
        plan.offer(&s)
            .map(|(_, suite)| suite)
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

/// HTTP/1.1 GETs of one path over one suite; times request to last body byte.
struct HttpProbe {
    ctx: SslContext,
    plan_addr: SocketAddr,
    sni: Option<String>,
    host: String,
    path: String,
    timeout: Duration,
    stream: Option<SslStream<TcpStream>>,
    buf: Vec<u8>,
    timed: (Seconds, Seconds),
    /// The size of the last body.
    body: Option<u64>,
}

impl HttpProbe {
    fn get(&mut self) -> Result<u64> {
        if self.stream.is_none() {
            let s = ssl::connect(&self.ctx, self.plan_addr, self.sni.as_deref(), self.timeout, None)
                .map_err(|e| anyhow!("{}: {e}", self.host))?;
            self.stream = Some(s);
        }
        let s = self.stream.as_mut().expect("connected");
        let (t0, c0) = (Instant::now(), thread_cpu_time());
        let req = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: cipherbench/{}\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n",
            self.path,
            self.host,
            env!("CARGO_PKG_VERSION")
        );
        s.write_all(req.as_bytes())?;
        // Headers.
        let mut head: Vec<u8> = Vec::new();
        let body_start = loop {
            let k = s.read(&mut self.buf)?;
            if k == 0 {
                bail!("the server closed the connection before answering GET {}", self.path);
            }
            head.extend_from_slice(&self.buf[..k]);
            if let Some(i) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if head.len() > 64 << 10 {
                bail!("no end of HTTP headers in 64 KiB");
            }
        };
        let text = String::from_utf8_lossy(&head[..body_start]).to_ascii_lowercase();
        let status = text.split_whitespace().nth(1).unwrap_or("");
        if status != "200" {
            let line = String::from_utf8_lossy(&head[..body_start]);
            bail!("GET {} answered '{}'", self.path, line.lines().next().unwrap_or(""));
        }
        let header = |name: &str| text.lines().find_map(|l| l.strip_prefix(name)).map(str::trim);
        // RFC 9112 6.3: chunked framing wins over any Content-Length.
        let chunked = header("transfer-encoding:").is_some_and(|v| v.split(',').any(|c| c.trim() == "chunked"));
        let length: Option<u64> = header("content-length:").and_then(|v| v.parse().ok());
        let close =
            header("connection:").is_some_and(|v| v.contains("close")) || text.starts_with("http/1.0") || (length.is_none() && !chunked);
        let got = if chunked {
            read_chunked(s, &mut self.buf, head[body_start..].to_vec())?
        } else {
            let mut got = (head.len() - body_start) as u64;
            loop {
                if length.is_some_and(|l| got >= l) {
                    break;
                }
                let k = s.read(&mut self.buf)?;
                if k == 0 {
                    if let Some(l) = length {
                        bail!("the body ended after {got} of {l} bytes");
                    }
                    break;
                }
                got += k as u64;
            }
            got
        };
        self.body = Some(got);
        self.timed.0 .0 += t0.elapsed().as_secs_f64();
        self.timed.1 .0 += thread_cpu_time().0 - c0.0;
        if close {
            self.stream = None;
        }
        Ok(got)
    }
}

/// Reads one `Transfer-Encoding: chunked` body (RFC 9112 7.1: hex size lines with
/// optional extensions, data, CRLF, a last chunk of size 0, optional trailers, an
/// empty line). `pending` holds what was already read past the headers. Returns the
/// number of body bytes (chunk data only).
fn read_chunked<R: Read>(s: &mut R, buf: &mut [u8], mut pending: Vec<u8>) -> Result<u64> {
    let mut total = 0u64;
    loop {
        let line = take_line(s, buf, &mut pending)?;
        let hex = line.split(';').next().unwrap_or("").trim();
        let size = u64::from_str_radix(hex, 16)
            .ok()
            .filter(|_| !hex.is_empty() && hex.len() <= 16)
            .ok_or_else(|| anyhow!("bad chunk-size line '{}' in a chunked body", line.escape_default()))?;
        if size == 0 {
            // Trailer fields, then the empty line that ends the message.
            while !take_line(s, buf, &mut pending)?.is_empty() {}
            return Ok(total);
        }
        let mut left = size;
        let k = (pending.len() as u64).min(left) as usize;
        pending.drain(..k);
        left -= k as u64;
        while left > 0 {
            let n = s.read(buf)?;
            if n == 0 {
                bail!("the chunked body ended {left} bytes into a {size}-byte chunk");
            }
            let used = (n as u64).min(left) as usize;
            left -= used as u64;
            pending.extend_from_slice(&buf[used..n]);
        }
        total += size;
        if !take_line(s, buf, &mut pending)?.is_empty() {
            bail!("a {size}-byte chunk is not followed by CRLF");
        }
    }
}

/// One CRLF-terminated line of a chunked body, without the CRLF.
fn take_line<R: Read>(s: &mut R, buf: &mut [u8], pending: &mut Vec<u8>) -> Result<String> {
    loop {
        if let Some(i) = pending.windows(2).position(|w| w == b"\r\n") {
            let line = String::from_utf8_lossy(&pending[..i]).into_owned();
            pending.drain(..i + 2);
            return Ok(line);
        }
        if pending.len() > 8 << 10 {
            bail!("a line of more than 8 KiB in a chunked body");
        }
        let n = s.read(buf)?;
        if n == 0 {
            bail!("the chunked body ended before its last chunk");
        }
        pending.extend_from_slice(&buf[..n]);
    }
}

impl Probe for HttpProbe {
    fn run(&mut self, units: u64) -> Result<f64> {
        self.timed = (Seconds(0.0), Seconds(0.0));
        let mut total = 0;
        for _ in 0..units {
            total += self.get()?;
        }
        Ok(total as f64)
    }
    fn timed_region(&self) -> Option<(Seconds, Seconds)> {
        Some(self.timed)
    }
}

/// Records what the scan found, then times handshakes (and HTTP downloads) per
/// accepted suite.
pub fn remote(plan: &RemotePlan, scan: &Scan, session: &mut Session) -> Result<()> {
    let accepted: Vec<(Protocol, Suite)> = scan.accepted_suites().map(|(p, s)| (p, s.clone())).collect();
    let per_suite = plan.handshakes as usize * 4 + plan.http_get.is_some() as usize;
    let total = scan.protocols.len() + scan.suites.len() + scan.groups.len() + accepted.len() * per_suite;
    session.progress_start(total as u64);
    for (p, r) in &scan.protocols {
        let s = Subject {
            protocol: Some(p.label().into()),
            ..Default::default()
        };
        session.record(ResultRecord::accepted(Kind::TlsAccept, s, r.is_none(), r.clone()))?;
    }
    for (p, suite, r) in &scan.suites {
        let s = suite_subject(*p, suite, 1);
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
    let n = (accepted.len() * (plan.handshakes as usize * 2 + plan.http_get.is_some() as usize)).max(1);
    let cfg = crate::measure::plans::share(Seconds(plan.budget.0 * 0.9), n);
    for (p, suite) in &accepted {
        if crate::interrupt::requested() {
            break;
        }
        let mut settings = Settings::only(*p);
        if suite.tls13() {
            settings.ciphersuites = Some(suite.iana.clone());
        } else {
            settings.cipher_list = Some(suite.openssl.clone());
        }
        let subject = suite_subject(*p, suite, plan.threads);
        // Full handshakes, then resumed ones (TLS 1.2 tickets, TLS 1.3 PSK).
        for resumed in [false, true].into_iter().filter(|_| plan.handshakes) {
            let op = if resumed { "resumed" } else { "full" };
            session.progress_message(&format!("{} {} {op} handshakes", p.label(), suite.iana));
            let mut hs_subject = subject.clone();
            hs_subject.op = Some(op.into());
            let r = (|| -> Result<Vec<ResultRecord>> {
                let ctx = ssl::client_context(&settings, resumed)?;
                let mut probes = (0..plan.threads)
                    .map(|_| {
                        HandshakeProbe::new(
                            &ctx,
                            plan.addr,
                            plan.sni.as_deref(),
                            plan.timeout,
                            resumed,
                            false,
                            (*p, &suite.iana, None),
                        )
                    })
                    .collect::<Result<Vec<_>>>()?;
                let cfg = SamplerConfig { max_units: 10_000, ..cfg };
                let m = sampler::measure(&mut probes, Rate::PerSecond, &cfg)?;
                let mut subject = hs_subject.clone();
                subject.group = probes[0].group.clone();
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
                }
                r => record_or_fail(session, r, &hs_subject, &metrics, Kind::TlsHandshake)?,
            }
        }
        if let Some(path) = &plan.http_get {
            session.progress_message(&format!("{} {} GET {path}", p.label(), suite.iana));
            let mut bulk_subject = subject.clone();
            bulk_subject.op = Some("http-get".into());
            bulk_subject.path = Some(path.clone());
            let r = (|| -> Result<Vec<ResultRecord>> {
                let ctx = ssl::client_context(&settings, false)?;
                let mut probes: Vec<HttpProbe> = (0..plan.threads)
                    .map(|_| HttpProbe {
                        ctx: ctx.clone(),
                        plan_addr: plan.addr,
                        sni: plan.sni.clone(),
                        host: plan.sni.clone().unwrap_or_else(|| plan.host.clone()),
                        path: path.clone(),
                        timeout: plan.timeout,
                        stream: None,
                        buf: vec![0u8; 1 << 16],
                        timed: (Seconds(0.0), Seconds(0.0)),
                        body: None,
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
            })();
            record_or_fail(session, r, &bulk_subject, &[(Metric::BytesPerSec, None)], Kind::TlsBulk)?;
        }
    }
    session.progress_finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_split() {
        assert_eq!(split_target("example.org:563").unwrap(), ("example.org".into(), 563));
        assert_eq!(split_target("[::1]:443").unwrap(), ("::1".into(), 443));
        assert!(split_target("example.org").is_err());
        assert!(split_target("example.org:0").is_err());
        assert!(split_target("example.org:https").is_err());
    }

    #[test]
    fn names_resolve_with_suggestions() {
        let local = local_suites().unwrap();
        let r = resolve_suites(&["ecdhe-rsa-aes128-gcm-sha256".into(), "TLS_AES_128_GCM_SHA256".into()], &local).unwrap();
        assert_eq!(r[0].iana, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
        assert_eq!(r[1].openssl, "TLS_AES_128_GCM_SHA256");
        let e = resolve_suites(&["TLS_AES_128_GCM_SHA265".into()], &local).unwrap_err().to_string();
        assert!(e.contains("TLS_AES_128_GCM_SHA256"), "{e}");
    }

    impl LoopbackPlan {
        fn clone_for_test(&self, write_size: usize) -> LoopbackPlan {
            LoopbackPlan {
                items: Vec::new(),
                skipped: Vec::new(),
                certs: self.certs.clone(),
                write_size,
                ..*self
            }
        }
    }

    /// Hands out a fixed text a few bytes at a time, so lines and chunks straddle reads.
    struct Dribble(Vec<u8>, usize);
    impl Read for Dribble {
        fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
            let k = b.len().min(3).min(self.0.len() - self.1);
            b[..k].copy_from_slice(&self.0[self.1..self.1 + k]);
            self.1 += k;
            Ok(k)
        }
    }

    #[test]
    fn chunked_bodies() {
        let body = b"4;ext=1\r\nWiki\r\n5\r\npedia\r\n0E\r\n in\r\n\r\nchunks.\r\n0\r\nX-Trailer: 1\r\n\r\n";
        let mut buf = [0u8; 7];
        // All of it already read with the headers, or arriving in small pieces.
        assert_eq!(read_chunked(&mut Dribble(Vec::new(), 0), &mut buf, body.to_vec()).unwrap(), 23);
        assert_eq!(
            read_chunked(&mut Dribble(body[5..].to_vec(), 0), &mut buf, body[..5].to_vec()).unwrap(),
            23
        );
        for bad in [&b"zz\r\nab\r\n0\r\n\r\n"[..], b"5\r\nab", b"2\r\nabc\r\n0\r\n\r\n", b"2\r\nab\r\n"] {
            assert!(
                read_chunked(&mut Dribble(bad.to_vec(), 0), &mut buf, Vec::new()).is_err(),
                "{bad:?}"
            );
        }
    }

    /// Two TLS 1.2 suites' bulk in interleaved slices, each a fresh verified
    /// connection: A B A B A B, and every figure over at least 3 slices.
    #[test]
    fn loopback_bulk_is_measured_in_interleaved_slices() {
        let local = local_suites().unwrap();
        let suite = |n: &str| local.iter().find(|s| s.openssl == n).unwrap().clone();
        let item = |s: Suite| Item {
            protocol: Protocol::Tls12,
            suite: s,
            group: Some("X25519"),
            cert: CertType::EcdsaP256,
            work: Work::Bulk(Direction::Upload),
        };
        let plan = LoopbackPlan {
            items: vec![
                item(suite("ECDHE-ECDSA-AES128-GCM-SHA256")),
                item(suite("ECDHE-ECDSA-CHACHA20-POLY1305")),
            ],
            skipped: Vec::new(),
            threads: 1,
            write_size: 16 << 10,
            volume: None,
            verify: true,
            timeout: Duration::from_secs(5),
            // 0.9 s per subject: three slices each.
            budget: Seconds(2.0),
            certs: vec![CertType::EcdsaP256],
        };
        assert_eq!(sampler::slice_count(plan.sampler(plan.items[0].work, 2).budget), 3);
        let items: Vec<&Item> = plan.items.iter().collect();
        let mut order = Vec::new();
        let t0 = Instant::now();
        let out = bulk_sliced(&plan, &items, &mut BTreeMap::new(), |it, spec| {
            order.push((it.suite.openssl.clone(), spec.index, spec.of))
        });
        let spent = t0.elapsed().as_secs_f64();
        assert!(spent < plan.budget.0 * 1.3, "{spent} s for a {} s budget", plan.budget.0);
        let (a, b) = ("ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305");
        let want: Vec<(String, usize, usize)> = (0..3).flat_map(|i| [(a.to_string(), i, 3), (b.to_string(), i, 3)]).collect();
        assert_eq!(order, want);
        for (it, r) in plan.items.iter().zip(out) {
            let records = r.expect("measured").expect("ok");
            assert_eq!(records.len(), 3, "throughput, client and server CPU per GB");
            for r in &records {
                assert_eq!(r.status, Status::Ok, "{r:?}");
                assert_eq!(r.subject.suite.as_deref(), Some(it.suite.iana.as_str()));
                let n = r.samples.unwrap();
                assert!(n >= 3, "{n} slices: {r:?}");
                let (lo, med, hi) = (r.ci95_low.unwrap(), r.median.unwrap(), r.ci95_high.unwrap());
                assert!(lo <= med && med <= hi && med > 0.0, "{r:?}");
            }
            assert_eq!(records[0].metric, Metric::BytesPerSec);
            assert!(records[0].median.unwrap() > 1e6, "{:?}", records[0]);
        }
        // A flipped byte still fails the subject: `loopback_bulk_is_verified_by_the_far_side`
        // (tests/tls.rs) runs that in a process of its own (the hook is an environment variable).
    }

    /// A real loopback handshake and an upload whose hash the server checks.
    #[test]
    fn loopback_handshake_and_verified_bulk() {
        let local = local_suites().unwrap();
        let suite = local.iter().find(|s| s.iana == "TLS_AES_128_GCM_SHA256").unwrap().clone();
        let id = Identity::generate(CertType::EcdsaP256).unwrap();
        let plan = LoopbackPlan {
            items: Vec::new(),
            skipped: Vec::new(),
            threads: 1,
            write_size: 4096,
            volume: None,
            verify: true,
            timeout: Duration::from_secs(5),
            budget: Seconds(1.0),
            certs: vec![CertType::EcdsaP256],
        };
        let item = Item {
            protocol: Protocol::Tls13,
            suite,
            group: Some("X25519"),
            cert: CertType::EcdsaP256,
            work: Work::Bulk(Direction::Upload),
        };
        let server = start_server(ssl::server_context(&item.settings(), &id).unwrap(), 1, plan.timeout, true).unwrap();
        let ctx = ssl::client_context(&item.settings(), true).unwrap();
        let mut hs = HandshakeProbe::new(
            &ctx,
            server.addr,
            None,
            plan.timeout,
            true,
            true,
            (Protocol::Tls13, "TLS_AES_128_GCM_SHA256", Some("X25519")),
        )
        .unwrap();
        assert_eq!(hs.run(3).unwrap(), 3.0);
        assert_eq!(hs.durations.len(), 3);
        let mut bulk = BulkProbe::connect(&ctx, server.addr, plan.timeout, &item, &plan, Direction::Upload).unwrap();
        let sends = bulk.s.get_ref().sends;
        assert_eq!(bulk.run(5).unwrap(), 5.0 * 4096.0);
        assert!(bulk.history[0].0 > 0.0, "server CPU is measured");
        // The command and five 4 KiB records went out in one send(2), before the read
        // of the receipt.
        assert_eq!(bulk.s.get_ref().sends - sends, 1);
        bulk.tamper = true;
        let e = bulk.run(2).unwrap_err().to_string();
        assert!(e.contains("SHA-256 mismatch"), "{e}");
        // The server has one worker: one connection at a time.
        drop(bulk);
        // 40 large runs: records of 16 KiB, gathered 256 KiB at a time, checked on the far side.
        let mut big = plan.clone_for_test(16 << 10);
        big.verify = true;
        let mut up = BulkProbe::connect(&ctx, server.addr, plan.timeout, &item, &big, Direction::Upload).unwrap();
        let sends = up.s.get_ref().sends;
        assert_eq!(up.run(40).unwrap(), 40.0 * 16384.0);
        let sent = up.s.get_ref().sends - sends;
        assert!((3..=6).contains(&sent), "{sent} send(2) calls for 40 records of 16 KiB");
        drop(up);
        let mut down = BulkProbe::connect(&ctx, server.addr, plan.timeout, &item, &big, Direction::Download).unwrap();
        assert_eq!(down.run(40).unwrap(), 40.0 * 16384.0);
        assert!(
            down.s.get_ref().recvs < 40,
            "{} recv(2) calls for 40 records",
            down.s.get_ref().recvs
        );
        drop(down);
        // Asking for a suite the server does not have fails before timing.
        let mut other = item.settings();
        other.ciphersuites = Some("TLS_AES_256_GCM_SHA384".into());
        let ctx2 = ssl::client_context(&other, false).unwrap();
        assert!(HandshakeProbe::new(
            &ctx2,
            server.addr,
            None,
            plan.timeout,
            false,
            true,
            (Protocol::Tls13, "TLS_AES_256_GCM_SHA384", None)
        )
        .is_err());
        drop(hs);
        drop(server);
    }
}
