//! `cipherbench tls --lib gnutls` and library pairs (`--lib openssl,gnutls`):
//! the same loopback subjects as `loopback.rs` (protocol × suite × group × certificate,
//! handshakes and bulk), with GnuTLS sessions on one or both ends of real TCP
//! sockets on 127.0.0.1.
//!
//! - Each GnuTLS end gets a priority string built for the subject (one protocol,
//!   one suite, one group), or exactly the user's `--priority`.
//! - With two libraries every pair runs: OpenSSL→OpenSSL, OpenSSL→GnuTLS,
//!   GnuTLS→OpenSSL and GnuTLS→GnuTLS (client→server). Results carry the client's
//!   library in `subject.library` and the server's in `subject.server_library`, so
//!   the report shows the interop matrix; a refused handshake is a failed record
//!   with the library's reason.
//! - Bulk runs the wire protocol of `wire.rs` (command header, SHA-256 receipts with
//!   `--verify`), so any client interoperates with any server.
//! - `--connect` with GnuTLS: which suites of the priority string the server
//!   accepts (one per handshake) and handshake rates per accepted suite.
//! - `--serve ADDR`: the benchmark server alone, for a peer such as `gnutls-cli`.

use crate::backend::gnutls::session::{self as gs, Credentials, HandshakeError, Priority, PriorityError, SuiteInfo, TicketKey, TlsStream};
use crate::backend::openssl::certs::{CertType, Identity};
use crate::backend::openssl::tls::{self as ssl, Coalesced, ConnectError, Protocol};
use crate::error::UsageError;
use crate::measure::engine::sampler::{self, Probe, Rate, SamplerConfig};
use crate::measure::primitive::Library;
use crate::measure::sink::Sink;
use crate::measure::tls::wire::{
    self as wire, bulk_records, handshake_records, record_or_fail, serve_commands, Workers, BULK_RECV, BULK_SEND,
};
use crate::measure::tls::{check_negotiated, Direction, Item, LoopbackPlan, Work};
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use crate::units::Seconds;
use anyhow::{anyhow, bail, Context, Result};
use openssl::ssl::{Ssl, SslContext, SslSession, SslStream};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// Names

/// GnuTLS's suite table with IANA names (from the local OpenSSL's list by code,
/// else the knowledge base, else GnuTLS's own name).
pub struct Names {
    suites: Vec<(SuiteInfo, String)>,
}

fn code_text(c: [u8; 2]) -> String {
    format!("0x{:02X},0x{:02X}", c[0], c[1])
}

impl Names {
    pub fn load() -> Result<Names> {
        let table = gs::all_suites().map_err(|e| anyhow!("GnuTLS is unavailable: {e}"))?;
        let local = crate::discover::openssl::tls_suites().unwrap_or_default();
        let kb = crate::judge::Knowledge::builtin().ok();
        let suites = table
            .into_iter()
            .map(|s| {
                let code = code_text(s.code);
                let iana = local
                    .iter()
                    .find(|l| l.code.eq_ignore_ascii_case(&code))
                    .map(|l| l.iana.clone())
                    .or_else(|| kb.as_ref().and_then(|k| k.tls_suite(&code)).map(|t| t.iana.clone()))
                    .unwrap_or_else(|| s.name.clone());
                (s, iana)
            })
            .collect();
        Ok(Names { suites })
    }

    /// The IANA name of a suite GnuTLS names (`TLS_ECDHE_RSA_AES_128_GCM_SHA256`).
    pub fn iana(&self, gnutls_name: &str) -> String {
        self.suites
            .iter()
            .find(|(s, _)| s.name == gnutls_name)
            .map(|(_, i)| i.clone())
            .unwrap_or_else(|| gnutls_name.to_string())
    }

    pub fn iana_of(&self, s: &SuiteInfo) -> String {
        self.iana(&s.name)
    }

    /// GnuTLS's entry for an IANA suite, when GnuTLS implements it.
    pub fn by_iana(&self, iana: &str) -> Option<&SuiteInfo> {
        self.suites.iter().find(|(_, i)| i.eq_ignore_ascii_case(iana)).map(|(s, _)| s)
    }
}

/// Our group spelling → GnuTLS's priority keyword.
fn gnutls_group(g: &str) -> String {
    match g {
        "P-256" => "GROUP-SECP256R1".into(),
        "P-384" => "GROUP-SECP384R1".into(),
        "P-521" => "GROUP-SECP521R1".into(),
        g => format!("GROUP-{}", g.to_ascii_uppercase()),
    }
}

fn gnutls_version(p: Protocol) -> &'static str {
    match p {
        Protocol::Tls10 => "VERS-TLS1.0",
        Protocol::Tls11 => "VERS-TLS1.1",
        Protocol::Tls12 => "VERS-TLS1.2",
        Protocol::Tls13 => "VERS-TLS1.3",
    }
}

/// The priority string that makes a GnuTLS end offer exactly one subject: one
/// protocol, one suite (cipher, MAC and key exchange), and the subject's group
/// (plus the certificate's curve for TLS 1.2 ECDSA, as the OpenSSL side does).
pub fn item_priority(item: &Item, g: &SuiteInfo) -> String {
    let mut p = format!("NORMAL:-VERS-ALL:+{}:-CIPHER-ALL:+{}", gnutls_version(item.protocol), g.cipher);
    if item.protocol != Protocol::Tls13 {
        p.push_str(&format!(":-MAC-ALL:+{}:-KX-ALL:+{}", g.mac, g.kx));
    }
    if let Some(group) = item.group {
        p.push_str(&format!(":-GROUP-ALL:+{}", gnutls_group(group)));
        let curve = match item.cert {
            CertType::EcdsaP256 => Some("P-256"),
            CertType::EcdsaP384 => Some("P-384"),
            _ => None,
        };
        if let (Some(c), false) = (curve, item.protocol == Protocol::Tls13) {
            if c != group {
                p.push_str(&format!(":+{}", gnutls_group(c)));
            }
        }
    }
    p
}

/// Compiles a user's priority string; a syntax error is bad input (exit 2) with
/// GnuTLS's position.
pub fn user_priority(text: &str) -> Result<Priority> {
    match Priority::new(text) {
        Ok(p) => {
            if p.suites().is_empty() {
                return Err(UsageError::Invalid(format!(
                    "the GnuTLS priority string '{text}' enables no cipher suite (`cipherbench list tls --lib gnutls --priority '{text}'` shows what it resolves to)"
                ))
                .into());
            }
            Ok(p)
        }
        Err(e @ PriorityError::Syntax { .. }) => Err(UsageError::Invalid(format!("invalid --priority: {e}")).into()),
        Err(PriorityError::Library(e)) => Err(anyhow!("GnuTLS is unavailable: {e}")),
    }
}

// ---------------------------------------------------------------------------
// Ends and connections

/// One end of a connection, set up for one subject.
#[derive(Clone)]
pub enum End {
    Openssl(SslContext),
    Gnutls(Arc<gs::Config>),
}

/// A client's saved session, for resumption.
#[derive(Clone)]
enum Saved {
    Openssl(SslSession),
    Gnutls(Vec<u8>),
}

/// An established TLS connection through either library.
pub enum Conn {
    Openssl(SslStream<Coalesced>),
    Gnutls(TlsStream),
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Conn::Openssl(s) => s.read(buf),
            Conn::Gnutls(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Conn::Openssl(s) => s.write(buf),
            Conn::Gnutls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Conn::Openssl(s) => s.flush(),
            Conn::Gnutls(s) => s.flush(),
        }
    }
}

impl Conn {
    /// Protocol (`TLSv1.3`), IANA suite and canonical group, whichever library.
    pub fn negotiated(&self, names: &Names) -> (String, String, Option<String>) {
        match self {
            Conn::Openssl(s) => {
                let (v, suite) = ssl::negotiated(s);
                (v, suite, ssl::negotiated_group(s))
            }
            Conn::Gnutls(s) => {
                let group = s.group().map(|g| ssl::canonical_group(&g).map(str::to_string).unwrap_or(g));
                (s.protocol(), names.iana(&s.suite()), group)
            }
        }
    }

    fn resumed(&self) -> bool {
        match self {
            Conn::Openssl(s) => s.ssl().session_reused(),
            Conn::Gnutls(s) => s.resumed(),
        }
    }

    fn save(&self) -> Option<Saved> {
        match self {
            Conn::Openssl(s) => s.ssl().session().map(|x| Saved::Openssl(x.to_owned())),
            Conn::Gnutls(s) => s.session_data().ok().map(Saved::Gnutls),
        }
    }

    pub fn close(&mut self) {
        match self {
            Conn::Openssl(s) => {
                let _ = s.shutdown();
            }
            Conn::Gnutls(s) => s.close(),
        }
    }
}

fn from_gnutls(e: HandshakeError) -> ConnectError {
    match e {
        HandshakeError::Timeout => ConnectError::Stalled { bytes: None, secs: 0.0 },
        HandshakeError::NotTls(m) => ConnectError::NotTls(m),
        HandshakeError::Rejected(m) => ConnectError::Rejected(m),
        HandshakeError::Io(m) => ConnectError::Tcp(m),
    }
}

/// Connects to `addr` and completes a client handshake.
/// With `bulk`, both libraries get the transport of `tls.rs`'s bulk sweep: records
/// gathered into `send(2)` calls of up to `BULK_SEND` bytes, reads of up to
/// `BULK_RECV` bytes; else each library's plain socket I/O.
fn connect(
    end: &End,
    addr: SocketAddr,
    sni: Option<&str>,
    timeout: Duration,
    resume: Option<&Saved>,
    bulk: bool,
) -> Result<Conn, ConnectError> {
    let tcp = ssl::tcp(addr, timeout)?;
    match end {
        End::Openssl(ctx) => {
            let s = match resume {
                Some(Saved::Openssl(x)) => Some(x.as_ref()),
                _ => None,
            };
            ssl::handshake(ctx, coalesced(tcp, bulk), sni, s, bulk).map(Conn::Openssl)
        }
        End::Gnutls(cfg) => {
            let data = match resume {
                Some(Saved::Gnutls(d)) => Some(d.as_slice()),
                _ => None,
            };
            gs::handshake_over(gnutls_io(tcp, timeout, bulk), false, cfg, sni, data, timeout)
                .map(Conn::Gnutls)
                .map_err(from_gnutls)
        }
    }
}

fn coalesced(tcp: TcpStream, bulk: bool) -> Coalesced {
    if bulk {
        Coalesced::new(tcp, BULK_SEND, BULK_RECV)
    } else {
        Coalesced::new(tcp, 0, 0)
    }
}

fn gnutls_io(tcp: TcpStream, timeout: Duration, bulk: bool) -> gs::Io {
    if bulk {
        gs::Io::Custom(Box::new(Gathered::new(tcp, timeout)))
    } else {
        gs::Io::Socket(tcp)
    }
}

/// The bulk transport of the OpenSSL side (`Coalesced`: writes gathered into
/// `send(2)` calls of up to `BULK_SEND` bytes, reads of up to `BULK_RECV` bytes per
/// `recv(2)`; GnuTLS itself reads a record header, then its body) under a GnuTLS
/// session, which also needs to wait for something to read.
struct Gathered {
    c: Coalesced,
    timeout: Duration,
}

impl Gathered {
    fn new(tcp: TcpStream, timeout: Duration) -> Gathered {
        Gathered {
            c: Coalesced::new(tcp, BULK_SEND, BULK_RECV),
            timeout,
        }
    }
}

impl Read for Gathered {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.c.read(buf)
    }
}

impl Write for Gathered {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.c.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.c.flush()
    }
}

impl gs::Transport for Gathered {
    fn wait_readable(&mut self, ms: u32) -> std::io::Result<bool> {
        // What is gathered goes out first: the peer may be waiting for it.
        self.c.flush()?;
        if self.c.has_buffered() {
            return Ok(true);
        }
        let tcp = self.c.tcp();
        tcp.set_read_timeout(Some(Duration::from_millis(u64::from(ms).max(1))))?;
        let r = tcp.peek(&mut [0u8; 1]);
        tcp.set_read_timeout(Some(self.timeout))?;
        match r {
            Ok(_) => Ok(true),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// Completes a server handshake on an accepted socket.
fn accept(end: &End, tcp: TcpStream, timeout: Duration, bulk: bool) -> Result<Conn, String> {
    let _ = tcp.set_nodelay(true);
    tcp.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    tcp.set_write_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    match end {
        End::Openssl(ctx) => {
            let mut ssl = Ssl::new(ctx).map_err(|e| e.to_string())?;
            if bulk {
                ssl::plain_reads(&mut ssl);
            }
            ssl.accept(coalesced(tcp, bulk)).map(Conn::Openssl).map_err(|e| e.to_string())
        }
        End::Gnutls(cfg) => gs::handshake_over(gnutls_io(tcp, timeout, bulk), true, cfg, None, None, timeout)
            .map(Conn::Gnutls)
            .map_err(|e| e.to_string()),
    }
}

/// The PEM certificate and key of an identity, for GnuTLS.
fn pem(id: &Identity) -> Result<(Vec<u8>, Vec<u8>)> {
    Ok((id.cert.to_pem()?, id.key.private_key_to_pem_pkcs8()?))
}

fn gnutls_config(priority: Arc<Priority>, credentials: Arc<Credentials>, server: bool, tickets: bool) -> Result<End> {
    Ok(End::Gnutls(Arc::new(gs::Config {
        priority,
        credentials,
        ticket_key: if server { Some(TicketKey::generate()?) } else { None },
        tickets,
    })))
}

// ---------------------------------------------------------------------------
// The server: tls.rs's protocol over either library

/// An in-process server on a TCP listener (`wire`'s protocol over either
/// library): one worker thread per client thread.
pub struct Server {
    pub addr: SocketAddr,
    workers: Workers,
    /// The last failed server handshake (the client records the failure).
    refusals: Arc<Mutex<Option<String>>>,
}

/// What a server reports per connection (for `--serve`).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

impl Server {
    pub fn start(
        listener: TcpListener,
        end: End,
        workers: usize,
        timeout: Duration,
        bulk: bool,
        names: Arc<Names>,
        log: Option<Log>,
    ) -> Result<Server> {
        let refusals = Arc::new(Mutex::new(None));
        let refused = refusals.clone();
        let workers = Workers::start(listener, workers, move |tcp, peer, stop| {
            // A refused handshake is the client's result to record, not a server error.
            let mut conn = match accept(&end, tcp, timeout, bulk) {
                Ok(c) => c,
                Err(e) => {
                    if let Some(l) = &log {
                        l(&format!("{peer}: handshake failed: {e}"));
                    } else if !stop.load(Ordering::SeqCst) {
                        *refused.lock().unwrap() = Some(e);
                    }
                    return Ok(());
                }
            };
            if let Some(l) = &log {
                let (v, s, g) = conn.negotiated(&names);
                l(&format!("{peer}: {v} {s} {}", g.as_deref().unwrap_or("-")));
            }
            let r = serve_commands(&mut conn);
            conn.close();
            match (r, &log) {
                (Err(e), Some(l)) => {
                    l(&format!("{peer}: {e:#}"));
                    Ok(())
                }
                (r, _) => r,
            }
        })?;
        Ok(Server {
            addr: workers.addr,
            workers,
            refusals,
        })
    }

    fn error(&self) -> Option<String> {
        self.workers.error()
    }

    fn refusal(&self) -> Option<String> {
        self.refusals.lock().unwrap().clone()
    }

    /// Blocks until interrupted (Ctrl-C).
    pub fn wait(&self) {
        self.workers.wait()
    }
}

// ---------------------------------------------------------------------------
// Probes

/// Full or resumed handshakes, one TCP connection each, through either library.
struct HsProbe {
    end: End,
    addr: SocketAddr,
    sni: Option<String>,
    timeout: Duration,
    resumed: bool,
    ack: bool,
    saved: Option<Saved>,
    durations: Vec<f64>,
    names: Arc<Names>,
}

type Negotiated = (String, String, Option<String>);

impl HsProbe {
    #[allow(clippy::too_many_arguments)]
    fn new(
        end: &End,
        addr: SocketAddr,
        sni: Option<&str>,
        timeout: Duration,
        resumed: bool,
        ack: bool,
        names: Arc<Names>,
    ) -> Result<(Self, Negotiated)> {
        let mut p = HsProbe {
            end: end.clone(),
            addr,
            sni: sni.map(str::to_string),
            timeout,
            resumed,
            ack,
            saved: None,
            durations: Vec::new(),
            names,
        };
        let first = p.once()?;
        if resumed {
            p.once()?;
        }
        p.durations.clear();
        Ok((p, first))
    }

    fn once(&mut self) -> Result<Negotiated> {
        let offer = if self.resumed { self.saved.clone() } else { None };
        let (mut s, elapsed) = wire::timed_handshake(self.ack, || {
            connect(&self.end, self.addr, self.sni.as_deref(), self.timeout, offer.as_ref(), false)
                .map_err(|e| anyhow!("{}: {e}", self.addr))
        })?;
        if self.resumed {
            if offer.is_some() && !s.resumed() {
                bail!("the server did not resume the session");
            }
            self.saved = s.save();
        }
        let n = s.negotiated(&self.names);
        s.close();
        self.durations.push(elapsed);
        Ok(n)
    }
}

impl super::OneHandshake for HsProbe {
    fn handshake_once(&mut self) -> Result<()> {
        self.once().map(|_| ())
    }
}

impl Probe for HsProbe {
    fn run(&mut self, units: u64) -> Result<f64> {
        super::handshakes(self, units)
    }
}

/// One long-lived connection through either library (`wire`'s protocol).
type BulkProbe = wire::BulkProbe<Conn>;

// ---------------------------------------------------------------------------
// Loopback with GnuTLS and library pairs

/// Client → server library pairs for `--lib`: one library alone, or every pair of two.
pub fn pairs(libs: &[Library]) -> Vec<(Library, Library)> {
    let mut l: Vec<Library> = Vec::new();
    for x in libs {
        if !l.contains(x) {
            l.push(*x);
        }
    }
    let mut out = Vec::new();
    for &c in &l {
        for &s in &l {
            out.push((c, s));
        }
    }
    out
}

/// The GnuTLS side of a loopback run.
pub struct GnutlsPlan {
    pub pairs: Vec<(Library, Library)>,
    /// `--priority`: every GnuTLS end uses exactly this string.
    pub priority: Option<Arc<Priority>>,
    names: Arc<Names>,
}

impl GnutlsPlan {
    pub fn new(libs: &[Library], priority: Option<&str>) -> Result<GnutlsPlan> {
        // Check the string before anything else: a typo is exit 2.
        let priority = priority.map(user_priority).transpose()?.map(Arc::new);
        if priority.is_some() && !libs.contains(&Library::Gnutls) {
            return Err(
                UsageError::Invalid("--priority is a GnuTLS priority string: add --lib gnutls (or --lib openssl,gnutls)".into()).into(),
            );
        }
        let names = Arc::new(Names::load()?);
        Ok(GnutlsPlan {
            pairs: pairs(libs),
            priority,
            names,
        })
    }

    pub fn settings(&self, plan: &LoopbackPlan) -> serde_json::Value {
        let mut v = plan.settings();
        v["libraries"] = json!(self
            .pairs
            .iter()
            .map(|(c, s)| format!("{}->{}", c.as_str(), s.as_str()))
            .collect::<Vec<_>>());
        if let Some(p) = &self.priority {
            v["priority"] = json!(p.text());
        }
        v
    }

    /// The ends for one item and pair. `Err` is a reason the pair cannot run it.
    fn ends(&self, item: &Item, pair: (Library, Library), id: &Identity, resumption: bool) -> Result<(End, End), String> {
        let prio = || -> Result<Arc<Priority>, String> {
            if let Some(p) = &self.priority {
                return Ok(p.clone());
            }
            let g = self.names.by_iana(&item.suite.iana).ok_or_else(|| {
                format!(
                    "GnuTLS {} does not implement {}",
                    crate::backend::gnutls::version().unwrap_or_default(),
                    item.suite.iana
                )
            })?;
            let text = item_priority(item, g);
            Priority::new(&text).map(Arc::new).map_err(|e| e.to_string())
        };
        // With --priority the OpenSSL end offers everything, so the string decides.
        let settings = if self.priority.is_some() {
            ssl::Settings::default()
        } else {
            item.settings()
        };
        let client = match pair.0 {
            Library::Openssl => End::Openssl(ssl::client_context(&settings, resumption).map_err(|e| format!("{e:#}"))?),
            Library::Gnutls => gnutls_config(prio()?, Arc::new(Credentials::client().map_err(|e| e.0)?), false, resumption)
                .map_err(|e| format!("{e:#}"))?,
        };
        let server = match pair.1 {
            Library::Openssl => End::Openssl(ssl::server_context(&settings, id).map_err(|e| format!("{e:#}"))?),
            Library::Gnutls => {
                let (c, k) = pem(id).map_err(|e| format!("{e:#}"))?;
                let cred = Credentials::server(&c, &k).map_err(|e| e.0)?;
                gnutls_config(prio()?, Arc::new(cred), true, true).map_err(|e| format!("{e:#}"))?
            }
        };
        Ok((client, server))
    }

    fn subject(&self, item: &Item, plan: &LoopbackPlan, pair: (Library, Library)) -> Subject {
        let mut s = item.subject(plan);
        s.library = Some(pair.0.as_str().into());
        s.server_library = Some(pair.1.as_str().into());
        s
    }

    fn measure(&self, plan: &LoopbackPlan, item: &Item, pair: (Library, Library), id: &Identity, n: usize) -> Result<Vec<ResultRecord>> {
        let resumption = matches!(item.work, Work::Handshake { resumed: true });
        let (client, server_end) = self.ends(item, pair, id, resumption).map_err(|e| anyhow!(e))?;
        let listener = TcpListener::bind("127.0.0.1:0").context("binding a loopback port")?;
        let server = Server::start(
            listener,
            server_end,
            plan.threads,
            plan.timeout,
            matches!(item.work, Work::Bulk(_)),
            self.names.clone(),
            None,
        )?;
        let mut subject = self.subject(item, plan, pair);
        let cfg = plan.sampler(item.work, n);
        // What the subject asked for (with --priority: whatever the string negotiates).
        let want = |got: &Negotiated| -> Result<()> {
            if self.priority.is_some() {
                return Ok(());
            }
            check_negotiated((item.protocol, &item.suite.iana, item.group), (&got.0, &got.1, got.2.as_deref()))
        };
        let out = (|| -> Result<Vec<ResultRecord>> {
            Ok(match item.work {
                Work::Handshake { resumed } => {
                    let mut probes = Vec::new();
                    for _ in 0..plan.threads {
                        let (p, got) = HsProbe::new(&client, server.addr, None, plan.timeout, resumed, true, self.names.clone())?;
                        want(&got)?;
                        if self.priority.is_some() {
                            negotiated_subject(&mut subject, &got);
                        }
                        probes.push(p);
                    }
                    let m = sampler::measure(&mut probes, Rate::PerSecond, &cfg)?;
                    let d: Vec<&[f64]> = probes.iter().map(|p| p.durations.as_slice()).collect();
                    handshake_records(Kind::TlsHandshake, subject, &d, &m)
                }
                Work::Bulk(direction) => {
                    let mut probes = Vec::new();
                    for _ in 0..plan.threads {
                        let c =
                            connect(&client, server.addr, None, plan.timeout, None, true).map_err(|e| anyhow!("{}: {e}", server.addr))?;
                        let got = c.negotiated(&self.names);
                        want(&got)?;
                        if self.priority.is_some() {
                            negotiated_subject(&mut subject, &got);
                        }
                        probes.push(BulkProbe::new(c, direction, plan.write_size, plan.verify)?);
                    }
                    let m = sampler::measure(&mut probes, Rate::PerSecond, &cfg)?;
                    bulk_records(subject, &probes, &m)
                }
            })
        })();
        // A refusal reads better with the server's side of it.
        // The server thread may still be failing its side.
        let until = Instant::now() + Duration::from_secs(1);
        while out.is_err() && server.refusal().is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = match (out, server.refusal()) {
            (Err(e), Some(why)) => bail!("{e:#} (server: {why})"),
            (out, _) => out?,
        };
        if let Some(e) = server.error() {
            bail!("the loopback server failed: {e}");
        }
        Ok(out)
    }
}

/// With `--priority`, the subject is what the string negotiated.
fn negotiated_subject(s: &mut Subject, got: &Negotiated) {
    s.protocol = Some(got.0.clone());
    s.suite = Some(got.1.clone());
    s.group = got.2.clone();
    let local = crate::discover::openssl::tls_suites().unwrap_or_default();
    s.openssl_name = local.iter().find(|l| l.iana == got.1).map(|l| l.openssl.clone());
    s.kex = None;
}

/// With `--priority`: one subject per certificate and work, the suite left to the string.
pub fn priority_items(plan: &LoopbackPlan, a: &crate::options::TlsOptions) -> Result<Vec<Item>> {
    let local = crate::measure::tls::local_suites()?;
    // A placeholder suite: the subject is rewritten with what was negotiated.
    let suite = local
        .iter()
        .find(|s| s.iana == "TLS_AES_128_GCM_SHA256")
        .or_else(|| local.first())
        .cloned()
        .ok_or_else(|| anyhow!("this OpenSSL lists no TLS suites"))?;
    let mut items = Vec::new();
    let directions: &[Direction] = if a.both_directions {
        &[Direction::Upload, Direction::Download]
    } else {
        &[Direction::Upload]
    };
    if !a.no_handshakes {
        for &c in &plan.certs {
            items.push(Item {
                protocol: Protocol::Tls13,
                suite: suite.clone(),
                group: None,
                cert: c,
                work: Work::Handshake { resumed: false },
            });
        }
        items.push(Item {
            protocol: Protocol::Tls13,
            suite: suite.clone(),
            group: None,
            cert: plan.certs[0],
            work: Work::Handshake { resumed: true },
        });
    }
    if !a.no_bulk {
        for d in directions {
            items.push(Item {
                protocol: Protocol::Tls13,
                suite: suite.clone(),
                group: None,
                cert: plan.certs[0],
                work: Work::Bulk(*d),
            });
        }
    }
    Ok(items)
}

/// Runs the loopback plan for every library pair; results go to the session.
pub fn loopback(plan: &LoopbackPlan, g: &GnutlsPlan, session: &mut dyn Sink) -> Result<()> {
    let np = g.pairs.len();
    let total: usize = plan.skipped.len() * np + plan.items.iter().map(|i| i.records().len()).sum::<usize>() * np;
    session.progress_start(total as u64);
    for (kind, subject, why) in &plan.skipped {
        for &pair in &g.pairs {
            let mut s = subject.clone();
            s.library = Some(pair.0.as_str().into());
            s.server_library = Some(pair.1.as_str().into());
            let metric = if *kind == Kind::TlsBulk {
                Metric::BytesPerSec
            } else {
                Metric::HandshakesPerSec
            };
            session.record(ResultRecord::not_ok(*kind, s, metric, Status::Unsupported, why.clone()))?;
        }
    }
    let n = plan.items.len() * np;
    let mut ids: BTreeMap<CertType, Identity> = BTreeMap::new();
    for item in &plan.items {
        for &pair in &g.pairs {
            if crate::interrupt::requested() {
                break;
            }
            session.progress_message(&format!("{}→{} {}", pair.0.as_str(), pair.1.as_str(), item.label()));
            let id = crate::measure::tls::identity(&mut ids, item.cert)?;
            let unsupported = g.priority.is_none()
                && (pair.0 == Library::Gnutls || pair.1 == Library::Gnutls)
                && g.names.by_iana(&item.suite.iana).is_none();
            let records = if unsupported {
                Err((
                    Status::Unsupported,
                    format!(
                        "GnuTLS {} does not implement {}",
                        crate::backend::gnutls::version().unwrap_or_default(),
                        item.suite.iana
                    ),
                ))
            } else {
                g.measure(plan, item, pair, id, n).map_err(|e| (Status::Failed, format!("{e:#}")))
            };
            match records {
                Ok(rs) => {
                    for r in rs {
                        session.record(r)?;
                    }
                }
                Err((status, why)) => {
                    let mut subject = g.subject(item, plan, pair);
                    if g.priority.is_some() {
                        // Nothing was negotiated: no suite to name.
                        (subject.protocol, subject.suite, subject.openssl_name, subject.kex) = (None, None, None, None);
                    }
                    for (kind, metric, mode) in item.records() {
                        let mut s = subject.clone();
                        s.mode = mode.map(str::to_string);
                        session.record(ResultRecord::not_ok(kind, s, metric, status, why.clone()))?;
                    }
                }
            }
        }
    }
    session.progress_finish();
    Ok(())
}

// ---------------------------------------------------------------------------
// Remote (--connect) with a GnuTLS client

/// A server measured through a GnuTLS client.
pub struct RemotePlan {
    pub target: String,
    pub addr: SocketAddr,
    pub sni: Option<String>,
    pub priority: Arc<Priority>,
    pub threads: usize,
    pub timeout: Duration,
    pub handshakes: bool,
    pub budget: Seconds,
    names: Arc<Names>,
    credentials: Arc<Credentials>,
}

/// The priority string that offers one suite of `base` (and its protocol family).
fn one_suite(base: &str, s: &SuiteInfo) -> String {
    if s.min_version == "TLS1.3" {
        format!("{base}:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+{}", s.cipher)
    } else {
        format!(
            "{base}:-VERS-TLS1.3:-CIPHER-ALL:+{}:-MAC-ALL:+{}:-KX-ALL:+{}",
            s.cipher, s.mac, s.kx
        )
    }
}

impl RemotePlan {
    pub fn new(a: &crate::options::TlsOptions, target: &str, budget: Seconds) -> Result<RemotePlan> {
        let (host, port) = crate::measure::tls::split_target(target)?;
        let priority = Arc::new(user_priority(a.priority.as_deref().unwrap_or("NORMAL"))?);
        if !a.suites.is_empty() || a.http_get.is_some() {
            return Err(UsageError::Invalid(
                "with --lib gnutls, --connect takes the suites from --priority (--suites and --http-get are OpenSSL-only)".into(),
            )
            .into());
        }
        let (addr, sni) = crate::measure::tls::resolve_target(&host, port, a.sni.as_deref())?;
        Ok(RemotePlan {
            target: format!("{host}:{port}"),
            addr,
            sni,
            priority,
            threads: a.threads as usize,
            timeout: Duration::from_secs_f64(a.timeout.0),
            handshakes: !a.no_handshakes,
            budget,
            names: Arc::new(Names::load()?),
            credentials: Arc::new(Credentials::client()?),
        })
    }

    pub fn settings(&self) -> serde_json::Value {
        json!({
            "mode": "remote",
            "target": self.target,
            "sni": self.sni,
            "library": "gnutls",
            "priority": self.priority.text(),
            "threads": self.threads,
            "timeout_seconds": self.timeout.as_secs_f64(),
            "budget_seconds": self.budget.0,
        })
    }

    fn end(&self, priority: Arc<Priority>) -> Result<End> {
        gnutls_config(priority, self.credentials.clone(), false, false)
    }

    fn offer(&self, priority: Arc<Priority>) -> Result<Negotiated, ConnectError> {
        let end = self.end(priority).map_err(|e| ConnectError::Tcp(format!("{e:#}")))?;
        let mut c = connect(&end, self.addr, self.sni.as_deref(), self.timeout, None, false)?;
        let n = c.negotiated(&self.names);
        c.close();
        Ok(n)
    }
}

fn gnutls_subject(protocol: &str, iana: &str, threads: usize) -> Subject {
    let local = crate::discover::openssl::tls_suites().unwrap_or_default();
    Subject {
        protocol: Some(protocol.to_string()),
        suite: Some(iana.to_string()),
        openssl_name: local.iter().find(|l| l.iana == iana).map(|l| l.openssl.clone()),
        library: Some("gnutls".into()),
        threads: Some(threads),
        ..Default::default()
    }
}

/// Which suites of the priority string the server accepts (one per handshake), then
/// handshake rates per accepted suite.
pub fn remote(plan: &RemotePlan, session: &mut dyn Sink, progress: &dyn Fn(&str)) -> Result<()> {
    let t = &plan.target;
    progress(&format!("reaching {t}"));
    if let Err(e) = plan.offer(plan.priority.clone()) {
        return Err(super::unreachable(t, e, plan.timeout, |e| {
            format!("{t} refused a GnuTLS handshake with priority '{}': {e}", plan.priority.text())
        }));
    }
    let suites = plan.priority.suites();
    session.progress_start((suites.len() * (1 + 2 * plan.handshakes as usize)) as u64);
    let mut accepted: Vec<(String, String, Arc<Priority>)> = Vec::new();
    for s in &suites {
        if crate::interrupt::requested() {
            break;
        }
        let iana = plan.names.iana_of(s);
        session.progress_message(&format!("{t}: {iana}"));
        let text = one_suite(plan.priority.text(), s);
        let family = if s.min_version == "TLS1.3" { "TLSv1.3" } else { "TLSv1.2" };
        let (protocol, refusal) = match Priority::new(&text) {
            Err(e) => (family.to_string(), Some(e.to_string())),
            Ok(p) => {
                let p = Arc::new(p);
                match plan.offer(p.clone()) {
                    Ok((v, got, _)) if got == iana => {
                        accepted.push((v.clone(), iana.clone(), p));
                        (v, None)
                    }
                    Ok((v, got, _)) => (v, Some(format!("offered alone, yet {got} was negotiated"))),
                    Err(ConnectError::Rejected(e)) => (family.to_string(), Some(e)),
                    Err(e) => bail!("{t}: {e} while enumerating its suites"),
                }
            }
        };
        let subject = gnutls_subject(&protocol, &iana, 1);
        session.record(ResultRecord::accepted(Kind::TlsAccept, subject, refusal.is_none(), refusal))?;
    }
    if plan.handshakes {
        let cfg = crate::measure::plans::share(Seconds(plan.budget.0 * 0.9), accepted.len().max(1));
        let cfg = SamplerConfig { max_units: 10_000, ..cfg };
        for (protocol, iana, prio) in &accepted {
            if crate::interrupt::requested() {
                break;
            }
            session.progress_message(&format!("{protocol} {iana} handshakes"));
            let mut subject = gnutls_subject(protocol, iana, plan.threads);
            subject.op = Some("full".into());
            let r = (|| -> Result<Vec<ResultRecord>> {
                let end = plan.end(prio.clone())?;
                let mut probes = Vec::new();
                let mut group = None;
                for _ in 0..plan.threads {
                    let (p, got) = HsProbe::new(&end, plan.addr, plan.sni.as_deref(), plan.timeout, false, false, plan.names.clone())?;
                    group = got.2;
                    probes.push(p);
                }
                let m = sampler::measure(&mut probes, Rate::PerSecond, &cfg)?;
                let mut s = subject.clone();
                s.group = group;
                let d: Vec<&[f64]> = probes.iter().map(|p| p.durations.as_slice()).collect();
                Ok(handshake_records(Kind::TlsHandshake, s, &d, &m))
            })();
            let metrics = [(Metric::HandshakesPerSec, None), (Metric::Seconds, Some("latency"))];
            record_or_fail(session, r, &subject, &metrics, Kind::TlsHandshake)?;
        }
    }
    session.progress_finish();
    Ok(())
}

// ---------------------------------------------------------------------------
// --serve

/// `tls --serve ADDR`: the benchmark server alone until Ctrl-C. Prints the address
/// it listens on, then one line per connection (negotiated protocol, suite, group,
/// or why the handshake failed).
pub fn serve(a: &crate::options::TlsOptions, addr: &str, quiet: bool) -> Result<()> {
    let sa: SocketAddr = addr
        .parse()
        .map_err(|_| UsageError::Invalid(format!("--serve wants IP:PORT (e.g. 127.0.0.1:4433), got '{addr}'")))?;
    let libs: Vec<Library> = pairs(&a.libraries).into_iter().filter(|(c, s)| c == s).map(|(c, _)| c).collect();
    let [lib] = libs[..] else {
        return Err(UsageError::Invalid("--serve runs one library: --lib openssl or --lib gnutls".into()).into());
    };
    let priority = match (&a.priority, lib) {
        (Some(_), Library::Openssl) => {
            return Err(UsageError::Invalid("--priority is a GnuTLS priority string: add --lib gnutls".into()).into())
        }
        (p, Library::Gnutls) => Some(user_priority(p.as_deref().unwrap_or("NORMAL"))?),
        (None, Library::Openssl) => None,
    };
    let cert = crate::measure::tls::parse_certs(&a.certs)?[0];
    let timeout = Duration::from_secs_f64(a.timeout.0);
    let id = Identity::generate(cert)?;
    let end = match priority {
        Some(p) => {
            let (c, k) = pem(&id)?;
            gnutls_config(Arc::new(p), Arc::new(Credentials::server(&c, &k)?), true, true)?
        }
        None => End::Openssl(ssl::server_context(&ssl::Settings::default(), &id)?),
    };
    let listener = TcpListener::bind(sa).with_context(|| format!("cannot listen on {sa}"))?;
    let local = listener.local_addr()?;
    let names = Arc::new(Names::load().unwrap_or(Names { suites: Vec::new() }));
    let log: Log = Arc::new(move |m: &str| {
        if !quiet {
            eprintln!("{}", crate::untrusted::for_terminal(m));
        }
    });
    let server = Server::start(listener, end, a.threads as usize, timeout, false, names, Some(log))?;
    let version = match lib {
        Library::Gnutls => format!("GnuTLS {}", crate::backend::gnutls::version().unwrap_or_default()),
        Library::Openssl => crate::backend::openssl::runtime_version(),
    };
    // Always printed: a peer (or test) needs the port.
    eprintln!(
        "cipherbench: serving TLS with {version}{} and a {} certificate on {local}; Ctrl-C stops",
        a.priority.as_deref().map(|p| format!(", priority '{p}'")).unwrap_or_default(),
        cert.name()
    );
    server.wait();
    Ok(())
}

// ---------------------------------------------------------------------------
// list tls --lib gnutls

/// What a priority string resolves to, like `gnutls-cli --priority X -l`: suites
/// (IANA and GnuTLS names, code, minimum protocol, Kx/Enc/Mac, grade), protocols,
/// groups and signature algorithms.
pub fn list(json_out: bool, lib: Library, priority: Option<&str>, grades: &crate::judge::Grader) -> Result<()> {
    if lib == Library::Openssl {
        return Err(
            UsageError::Invalid("--priority is a GnuTLS priority string: use `list tls --lib gnutls --priority ...`".into()).into(),
        );
    }
    let text = priority.unwrap_or("NORMAL");
    let p = match Priority::new(text) {
        Ok(p) => p,
        Err(e @ PriorityError::Syntax { .. }) => return Err(UsageError::Invalid(format!("invalid --priority: {e}")).into()),
        Err(PriorityError::Library(e)) => bail!("GnuTLS is unavailable: {e}"),
    };
    let names = Names::load()?;
    let version = crate::backend::gnutls::version()?;
    let domain = |s: &SuiteInfo| {
        if s.min_version == "TLS1.3" {
            crate::judge::Domain::Tls13Suite
        } else {
            crate::judge::Domain::Tls12Suite
        }
    };
    let suites = p.suites();
    if json_out {
        let v = json!({
            "library": "gnutls",
            "version": version,
            "priority": text,
            "suites": suites.iter().map(|s| json!({
                "code": code_text(s.code),
                "iana": names.iana_of(s),
                "gnutls": s.name,
                "min_protocol": s.min_version,
                "kx": s.kx,
                "cipher": s.cipher,
                "mac": s.mac,
                "grade": grades.grade(domain(s), &names.iana_of(s)),
            })).collect::<Vec<_>>(),
            "protocols": p.protocols(),
            "groups": p.groups(),
            "signatures": p.signatures(),
        });
        return crate::report::print(&serde_json::to_vec_pretty(&v)?);
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    let mut header: Vec<String> = ["code", "IANA", "GnuTLS", "min", "Kx", "Enc", "Mac"].map(String::from).to_vec();
    header.extend(grades.headers());
    t.set_header(header);
    for s in &suites {
        let iana = names.iana_of(s);
        let mut row = vec![
            code_text(s.code),
            iana.clone(),
            s.name.clone(),
            s.min_version.clone(),
            if s.kx.is_empty() { "any".into() } else { s.kx.clone() },
            s.cipher.clone(),
            s.mac.clone(),
        ];
        row.extend(grades.cells(domain(s), &iana));
        t.add_row(row);
    }
    let out = format!(
        "GnuTLS {version} · priority '{text}' · {} suites\n{t}\nProtocols: {}\nGroups: {}\nSignatures: {}\n",
        suites.len(),
        p.protocols().join(", "),
        p.groups().join(", "),
        p.signatures().join(", ")
    );
    crate::report::print_text(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gnutls_pairs_cover_both_directions() {
        use Library::*;
        assert_eq!(pairs(&[Gnutls]), [(Gnutls, Gnutls)]);
        assert_eq!(
            pairs(&[Openssl, Gnutls, Openssl]),
            [(Openssl, Openssl), (Openssl, Gnutls), (Gnutls, Openssl), (Gnutls, Gnutls)]
        );
    }

    /// Each subject's priority string resolves to exactly its one suite.
    #[test]
    fn gnutls_item_priority_offers_exactly_the_suite() {
        let names = Names::load().unwrap();
        let local = crate::measure::tls::local_suites().unwrap();
        for (iana, protocol, group, cert) in [
            ("TLS_AES_128_GCM_SHA256", Protocol::Tls13, Some("X25519"), CertType::Rsa2048),
            ("TLS_CHACHA20_POLY1305_SHA256", Protocol::Tls13, Some("P-384"), CertType::EcdsaP256),
            (
                "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
                Protocol::Tls12,
                Some("P-256"),
                CertType::Rsa2048,
            ),
            (
                "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                Protocol::Tls12,
                Some("X25519"),
                CertType::EcdsaP384,
            ),
            (
                "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
                Protocol::Tls12,
                Some("ffdhe2048"),
                CertType::Rsa2048,
            ),
            ("TLS_RSA_WITH_AES_128_GCM_SHA256", Protocol::Tls12, None, CertType::Rsa2048),
        ] {
            let suite = local.iter().find(|s| s.iana == iana).unwrap().clone();
            let item = Item {
                protocol,
                suite,
                group,
                cert,
                work: Work::Handshake { resumed: false },
            };
            let g = names.by_iana(iana).unwrap_or_else(|| panic!("GnuTLS lacks {iana}"));
            let text = item_priority(&item, g);
            let p = Priority::new(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let got: Vec<String> = p.suites().iter().map(|s| names.iana_of(s)).collect();
            assert_eq!(got, [iana], "{text}");
            if let Some(gr) = group {
                assert_eq!(p.groups()[0], gnutls_group(gr).trim_start_matches("GROUP-"), "{text}");
            }
        }
        assert!(names.by_iana("TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256").is_none());
    }
}
