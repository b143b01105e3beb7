//! Remote (`--connect`): which protocols, suites and groups a server accepts, its
//! preference order, handshake rates per accepted suite and, with `--http-get`,
//! HTTP/1.1 download speed per accepted suite.

use super::wire::{handshake_records, record_or_fail};
use super::*;
use crate::backend::openssl::certs::CertType;
use crate::backend::openssl::tls::{self as ssl, is_ffdhe, ConnectError, Protocol, Settings};
use crate::error::UsageError;
use crate::measure::engine::sampler::{self, thread_cpu_time, Probe, Rate, SamplerConfig};
use crate::measure::sink::Sink;
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use crate::units::Seconds;
use anyhow::{anyhow, bail, Context, Result};
use openssl::ssl::{SslContext, SslStream};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

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
    pub fn new(a: &crate::options::TlsOptions, target: &str, budget: Seconds) -> Result<RemotePlan> {
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

    pub(super) fn offer(&self, s: &Settings) -> Result<(String, String), ConnectError> {
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
    progress(&format!("reaching {t}"));
    if let Err(e) = plan.offer(&Settings::default()) {
        return Err(unreachable(t, e, plan.timeout, |e| {
            format!("{t} refused a TLS handshake offering every protocol and suite this OpenSSL has: {e}")
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
            if crate::interrupt::by_user() {
                return Err(crate::error::Interrupted { kept: 0 }.into());
            }
            if crate::interrupt::cut() {
                return Err(crate::deadline::DeadlinePassed::new(format!("enumerating {t}")).into());
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

pub(super) fn preference(plan: &RemotePlan, p: Protocol, accepted: &[Suite]) -> Result<Order> {
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
pub(super) struct HttpProbe {
    pub(super) ctx: SslContext,
    pub(super) plan_addr: SocketAddr,
    pub(super) sni: Option<String>,
    pub(super) host: String,
    pub(super) path: String,
    pub(super) timeout: Duration,
    pub(super) stream: Option<SslStream<TcpStream>>,
    pub(super) buf: Vec<u8>,
    pub(super) timed: (Seconds, Seconds),
    /// The size of the last body.
    pub(super) body: Option<u64>,
    /// When set, every body byte is hashed into it (a known-answer check of what
    /// was served, outside the timed samples; `Content-Length` bodies only).
    pub(super) digest: Option<openssl::sha::Sha256>,
}

impl HttpProbe {
    /// A probe that connects on its first GET of `path` (`host` for the Host header).
    pub(super) fn new(ctx: &SslContext, addr: SocketAddr, sni: Option<String>, host: String, path: &str, timeout: Duration) -> HttpProbe {
        HttpProbe {
            ctx: ctx.clone(),
            plan_addr: addr,
            sni,
            host,
            path: path.to_string(),
            timeout,
            stream: None,
            buf: vec![0u8; 1 << 16],
            timed: (Seconds(0.0), Seconds(0.0)),
            body: None,
            digest: None,
        }
    }

    pub(super) fn get(&mut self) -> Result<u64> {
        if self.stream.is_none() {
            let s = ssl::connect(&self.ctx, self.plan_addr, self.sni.as_deref(), self.timeout, None)
                .map_err(|e| anyhow!("{}: {e}", self.host))?;
            self.stream = Some(s);
        }
        // Reads keep the run's deadline: a server dripping its body cannot hold the run.
        let s = &mut ssl::Bounded::new(self.stream.as_mut().expect("connected"), self.timeout);
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
            let first = line.lines().next().unwrap_or("");
            bail!(
                "GET {} answered '{}'",
                self.path,
                crate::untrusted::shown(&crate::untrusted::bounded(first, 200))
            );
        }
        let header = |name: &str| text.lines().find_map(|l| l.strip_prefix(name)).map(str::trim);
        // RFC 9112 6.3: chunked framing wins over any Content-Length.
        let chunked = header("transfer-encoding:").is_some_and(|v| v.split(',').any(|c| c.trim() == "chunked"));
        let length: Option<u64> = header("content-length:").and_then(|v| v.parse().ok());
        let close =
            header("connection:").is_some_and(|v| v.contains("close")) || text.starts_with("http/1.0") || (length.is_none() && !chunked);
        let got = if chunked {
            if self.digest.is_some() {
                bail!("GET {} answered with a chunked body, which this check cannot hash", self.path);
            }
            read_chunked(s, &mut self.buf, head[body_start..].to_vec())?
        } else {
            let mut got = (head.len() - body_start) as u64;
            if let Some(d) = self.digest.as_mut() {
                d.update(&head[body_start..]);
            }
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
                if let Some(d) = self.digest.as_mut() {
                    d.update(&self.buf[..k]);
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
pub(super) fn read_chunked<R: Read>(s: &mut R, buf: &mut [u8], mut pending: Vec<u8>) -> Result<u64> {
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
pub(super) fn take_line<R: Read>(s: &mut R, buf: &mut [u8], pending: &mut Vec<u8>) -> Result<String> {
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
pub fn remote(plan: &RemotePlan, scan: &Scan, session: &mut dyn Sink) -> Result<()> {
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
    let (mut gets_tried, mut gets_failed, mut last_get_error) = (0usize, 0usize, String::new());
    // What the scan left of the budget is shared out, not the whole budget: a slow
    // scan (many suites, a far server) must not push the run past its deadline.
    let left = crate::deadline::budget_left().map_or(plan.budget.0, |l| l.0.min(plan.budget.0));
    let cfg = crate::measure::plans::share(Seconds(left * 0.9), n);
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
                    .map(|_| {
                        let host = plan.sni.clone().unwrap_or_else(|| plan.host.clone());
                        HttpProbe::new(&ctx, plan.addr, plan.sni.clone(), host, path, plan.timeout)
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
