//! The system GnuTLS as a [`TlsLibrary`]: a priority string made from a
//! [`Selection`] (or the selection's own priority string), certificate
//! credentials, sessions over TCP sockets, and the bulk transport of the OpenSSL
//! side (`Gathered`) under a GnuTLS session.

use super::session::{self as gs, Credentials, HandshakeError, Priority, PriorityError, SuiteInfo, TicketKey, TlsStream};
use crate::backend::openssl::certs::Identity;
use crate::backend::openssl::tls::{self as ssl, Coalesced, ConnectError, Protocol};
use crate::backend::tls::{
    ClientConfig, Connection, ListedSuite, NativeListing, NativeSuite, Negotiated, Refused, Resumption, Selection, ServerConfig,
    TlsLibrary, BULK_RECV, BULK_SEND,
};
use crate::error::UsageError;
use anyhow::{anyhow, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

// ---------------------------------------------------------------------------
// Names

/// GnuTLS's suite table with IANA names (GnuTLS names suites its own way).
pub struct Names {
    suites: Vec<(SuiteInfo, String)>,
}

/// A suite's code as OpenSSL prints it: `0xC0,0x2F`.
pub fn code_text(c: [u8; 2]) -> String {
    format!("0x{:02X},0x{:02X}", c[0], c[1])
}

impl Names {
    /// GnuTLS's table, each suite named by `iana_of_code` (given `0xC0,0x2F`), else
    /// by GnuTLS's own name.
    pub fn load(iana_of_code: impl Fn(&str) -> Option<String>) -> Result<Names> {
        let table = gs::all_suites().map_err(|e| anyhow!("GnuTLS is unavailable: {e}"))?;
        let suites = table
            .into_iter()
            .map(|s| {
                let iana = iana_of_code(&code_text(s.code)).unwrap_or_else(|| s.name.clone());
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
pub fn gnutls_group(g: &str) -> String {
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

/// The priority string that offers exactly a selection: its protocol, its suites
/// (cipher, and for TLS 1.2 and older MAC and key exchange too) and its groups;
/// the selection's own string when it has one.
pub fn priority_text(s: &Selection, names: &Names) -> Result<String, String> {
    if let Some(n) = &s.native {
        return Ok(n.clone());
    }
    let mut p = "NORMAL".to_string();
    if let Some(v) = s.protocol {
        p.push_str(&format!(":-VERS-ALL:+{}", gnutls_version(v)));
    }
    let infos = s
        .suites
        .iter()
        .map(|x| {
            names
                .by_iana(&x.iana)
                .ok_or_else(|| format!("GnuTLS {} does not implement {}", super::version().unwrap_or_default(), x.iana))
        })
        .collect::<Result<Vec<&SuiteInfo>, String>>()?;
    let mut add = |all: &str, each: &mut dyn Iterator<Item = &String>| {
        let mut seen: Vec<&String> = Vec::new();
        p.push_str(&format!(":-{all}-ALL"));
        for x in each {
            if !seen.contains(&x) {
                p.push_str(&format!(":+{x}"));
                seen.push(x);
            }
        }
    };
    if !infos.is_empty() {
        add("CIPHER", &mut infos.iter().map(|i| &i.cipher));
        if s.protocol != Some(Protocol::Tls13) {
            add("MAC", &mut infos.iter().map(|i| &i.mac));
            add("KX", &mut infos.iter().map(|i| &i.kx));
        }
    }
    if !s.groups.is_empty() {
        let groups: Vec<String> = s.groups.iter().map(|g| gnutls_group(g)).collect();
        add("GROUP", &mut groups.iter());
    }
    Ok(p)
}

// ---------------------------------------------------------------------------
// The library

/// The system GnuTLS, with its suites' IANA names.
pub struct Gnutls {
    pub names: Arc<Names>,
}

/// The system GnuTLS in the library registry (`backend::libraries`).
pub const ENTRY: crate::backend::tls::Entry = crate::backend::tls::Entry {
    name: "gnutls",
    title: "GnuTLS",
    about: "The system GnuTLS (libgnutls.so.30), loaded at run time",
    built_in: false,
    native_text: Some("a GnuTLS priority string"),
    version: || super::version().map_err(|e| anyhow!("{e}")),
    tls: || Ok(Arc::new(Gnutls { names: Arc::new(names()?) })),
    primitives: super::primitives::fetch,
};

/// GnuTLS's suite table with IANA names: by code from the local libssl's
/// suites, else the suite catalogue, else GnuTLS's own name.
pub fn names() -> Result<Names> {
    let local = crate::backend::openssl::library::suite_codes();
    Names::load(|code| {
        local
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(code))
            .map(|(_, iana)| iana.clone())
            .or_else(|| crate::catalog::tls_suite_name(code).map(|t| t.iana.clone()))
    })
}

impl Gnutls {
    fn priority(&self, s: &Selection) -> Result<Arc<Priority>> {
        let text = priority_text(s, &self.names).map_err(|e| anyhow!(e))?;
        Priority::new(&text).map(Arc::new).map_err(|e| anyhow!("{e}"))
    }
}

impl TlsLibrary for Gnutls {
    fn name(&self) -> &'static str {
        "gnutls"
    }

    fn version(&self) -> String {
        format!("GnuTLS {}", super::version().unwrap_or_default())
    }

    fn lacks(&self, iana: &str) -> Option<String> {
        self.names
            .by_iana(iana)
            .is_none()
            .then(|| format!("{} does not implement {iana}", self.version()))
    }

    fn suites(&self) -> Vec<String> {
        self.names.suites.iter().map(|(_, i)| i.clone()).collect()
    }

    fn groups(&self) -> Vec<String> {
        Priority::new("NORMAL:+GROUP-ALL")
            .map(|p| p.groups())
            .unwrap_or_default()
            .into_iter()
            .map(|g| crate::aliases::group_spelling(&g).map_or(g, str::to_string))
            .collect()
    }

    fn client(&self, s: &Selection, resumption: bool) -> Result<Arc<dyn ClientConfig>> {
        let cfg = gs::Config {
            priority: self.priority(s)?,
            credentials: Arc::new(Credentials::client().map_err(|e| anyhow!(e.0))?),
            ticket_key: None,
            tickets: resumption,
        };
        Ok(Arc::new(End {
            cfg,
            names: self.names.clone(),
        }))
    }

    fn server(&self, s: &Selection, id: &Identity) -> Result<Arc<dyn ServerConfig>> {
        let priority = self.priority(s)?;
        let (c, k) = (id.cert.to_pem()?, id.key.private_key_to_pem_pkcs8()?);
        let cfg = gs::Config {
            priority,
            credentials: Arc::new(Credentials::server(&c, &k).map_err(|e| anyhow!(e.0))?),
            ticket_key: Some(TicketKey::generate()?),
            tickets: true,
        };
        Ok(Arc::new(End {
            cfg,
            names: self.names.clone(),
        }))
    }

    /// Its clients' streams: GnuTLS's own socket I/O, whose timeouts
    /// [`Connection::rearm`] sets again before every read and write.
    fn lacks_streams(&self) -> Option<String> {
        None
    }

    /// A priority string, checked ([`user_priority`]), and the suites it enables
    /// in its order, each with the string that offers it alone (its protocol
    /// family, and for TLS 1.2 its MAC and key exchange).
    fn native_listing(&self, text: Option<&str>) -> Option<Result<NativeListing>> {
        let text = text.unwrap_or("NORMAL");
        let p = match Priority::new(text) {
            Ok(p) => p,
            Err(e @ PriorityError::Syntax { .. }) => return Some(Err(UsageError::Invalid(format!("invalid --priority: {e}")).into())),
            Err(PriorityError::Library(e)) => return Some(Err(anyhow!("GnuTLS is unavailable: {e}"))),
        };
        let suites = p
            .suites()
            .iter()
            .map(|s| ListedSuite {
                code: code_text(s.code),
                iana: self.names.iana_of(s),
                name: s.name.clone(),
                min_protocol: s.min_version.clone(),
                protocol: if s.min_version == "TLS1.3" {
                    Protocol::Tls13
                } else {
                    Protocol::Tls12
                },
                kx: s.kx.clone(),
                cipher: s.cipher.clone(),
                mac: s.mac.clone(),
            })
            .collect();
        Some(Ok(NativeListing {
            text: text.to_string(),
            text_is: "priority",
            version: super::version().unwrap_or_default(),
            suites,
            protocols: p.protocols(),
            groups: p.groups(),
            signatures: p.signatures(),
        }))
    }
    fn native_suites(&self, text: &str) -> Option<Result<Vec<NativeSuite>>> {
        Some(user_priority(text).map(|p| {
            p.suites()
                .iter()
                .map(|s| {
                    let alone = one_suite(text, s);
                    NativeSuite {
                        iana: self.names.iana_of(s),
                        protocol: if s.min_version == "TLS1.3" {
                            Protocol::Tls13
                        } else {
                            Protocol::Tls12
                        },
                        alone: Priority::new(&alone).map(|_| alone).map_err(|e| e.to_string()),
                    }
                })
                .collect()
        }))
    }
}

/// Compiles a user's priority string (`--priority`); a syntax error, or a string
/// that enables no suite, is bad input (exit 2) with GnuTLS's position.
fn user_priority(text: &str) -> Result<Priority> {
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

/// One end's GnuTLS configuration.
struct End {
    cfg: gs::Config,
    names: Arc<Names>,
}

fn from_gnutls(e: HandshakeError) -> ConnectError {
    match e {
        HandshakeError::Timeout => ConnectError::Stalled { bytes: None, secs: 0.0 },
        HandshakeError::NotTls(m) => ConnectError::NotTls(m),
        HandshakeError::Rejected(m) => ConnectError::Rejected(m),
        HandshakeError::Io(m) => ConnectError::Tcp(m),
    }
}

/// With `bulk`, the bulk transport (`Gathered`); else GnuTLS's own socket I/O.
fn io(tcp: TcpStream, timeout: Duration, bulk: bool) -> gs::Io {
    if bulk {
        gs::Io::Custom(Box::new(Gathered {
            c: Coalesced::new(tcp, BULK_SEND, BULK_RECV),
            timeout,
        }))
    } else {
        gs::Io::Socket(tcp)
    }
}

impl ClientConfig for End {
    fn connect(
        &self,
        addr: SocketAddr,
        sni: Option<&str>,
        timeout: Duration,
        resume: Option<&Resumption>,
        bulk: bool,
    ) -> Result<Box<dyn Connection>, ConnectError> {
        let tcp = ssl::tcp(addr, timeout)?;
        let data = resume.and_then(|r| r.downcast_ref::<Vec<u8>>()).map(Vec::as_slice);
        let s = gs::handshake_over(io(tcp, timeout, bulk), false, &self.cfg, sni, data, timeout).map_err(from_gnutls)?;
        Ok(Box::new(Conn {
            s,
            names: self.names.clone(),
        }))
    }
}

impl ServerConfig for End {
    fn accept(&self, tcp: TcpStream, timeout: Duration, bulk: bool) -> Result<Box<dyn Connection>, Refused> {
        let refused = |why: String| Refused { why, gave_up: false };
        let _ = tcp.set_nodelay(true);
        tcp.set_read_timeout(Some(timeout)).map_err(|e| refused(e.to_string()))?;
        tcp.set_write_timeout(Some(timeout)).map_err(|e| refused(e.to_string()))?;
        let s = gs::handshake_over(io(tcp, timeout, bulk), true, &self.cfg, None, None, timeout).map_err(|e| refused(e.to_string()))?;
        Ok(Box::new(Conn {
            s,
            names: self.names.clone(),
        }))
    }
}

/// A GnuTLS connection, naming what it negotiated as OpenSSL and IANA do.
struct Conn {
    s: TlsStream,
    names: Arc<Names>,
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.s.read(buf)
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.s.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.s.flush()
    }
}

impl Connection for Conn {
    fn negotiated(&self) -> Negotiated {
        let group = self.s.group().map(|g| crate::aliases::group_spelling(&g).map_or(g, str::to_string));
        (self.s.protocol(), self.names.iana(&self.s.suite()), group)
    }
    fn resumed(&self) -> bool {
        self.s.resumed()
    }
    fn session(&self) -> Option<Resumption> {
        self.s.session_data().ok().map(|d| Arc::new(d) as Resumption)
    }
    /// GnuTLS takes a TLS 1.3 ticket in as it reads; nothing to wait for here.
    fn await_ticket(&mut self, _timeout: Duration) -> bool {
        true
    }
    fn rearm(&self, timeout: Duration) -> std::io::Result<()> {
        self.s.rearm(timeout)
    }
    fn close(&mut self) {
        self.s.close()
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
