//! A private recording TLS server on 127.0.0.1: the peer a real TLS client
//! (curl, `openssl s_client`, `gnutls-cli`, NZBGet through `nntp.rs`) is run
//! against, so that what the client's own configuration makes it negotiate can
//! be read from the other end.
//!
//! - It binds port 0 itself and says which port it got ([`RecordingServer::port`]).
//! - It accepts everything this libssl can speak (every TLS 1.3 suite, `ALL` at
//!   security level 0 for TLS ≤1.2, an ECDSA P-256 and an RSA 2048 certificate,
//!   so a client's ECDSA and RSA suites alike can be its first) and honours the
//!   client's order (no `SSL_OP_CIPHER_SERVER_PREFERENCE`), so what it
//!   negotiates is what the client asked for first. Every handshake's protocol,
//!   suite (IANA name) and group is recorded ([`RecordingServer::negotiated`]),
//!   and every failed one's reason ([`RecordingServer::failures`]).
//! - After the handshake it speaks what it was started with ([`Talk`]): nothing
//!   ([`plain`]: it reads until the client closes), one HTTP 200 answer
//!   ([`http`], for curl), or NNTP (`nntp.rs`).
//! - It stops by itself: after [`Spec::connections`] connections have ended, at
//!   [`Spec::within`], or when it is dropped, whichever is first. Every socket
//!   blocks for at most a slice of a second, so a silent client cannot hold it.

use super::openssl::certs::{CertType, Identity};
use anyhow::{Context, Result};
use openssl::ssl::{HandshakeError, Ssl, SslContext, SslMethod, SslStream, SslVersion};
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a socket blocks at a time before the server looks at its deadline.
const SLICE: Duration = Duration::from_millis(200);

/// At most this many failed handshakes' reasons are kept.
const FAILURES_KEPT: usize = 8;

/// What to start.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// It stops once this many connections have ended.
    pub connections: usize,
    /// It stops this long after it started in any case.
    pub within: Duration,
    /// It speaks TLS 1.2 at most (what a client's ≤1.2 list then picks).
    pub tls12_only: bool,
}

/// What one handshake negotiated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// As OpenSSL prints it: `TLSv1.3`.
    pub protocol: String,
    /// The IANA name: `TLS_CHACHA20_POLY1305_SHA256`.
    pub suite: String,
    /// The key-exchange group, when libssl tells.
    pub group: Option<String>,
}

impl std::fmt::Display for Negotiated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.protocol, self.suite)?;
        if let Some(g) = &self.group {
            write!(f, " over {g}")?;
        }
        Ok(())
    }
}

/// When a connection must end: the server was dropped or its time is up.
#[derive(Debug, Clone)]
pub struct Until {
    stop: Arc<AtomicBool>,
    end: Instant,
}

impl Until {
    pub fn over(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || Instant::now() >= self.end
    }
}

/// What the server speaks on a connection after its handshake (recorded by
/// then); the connection ends when it returns.
pub type Talk = Arc<dyn Fn(&mut SslStream<TcpStream>, &Until) -> Result<()> + Send + Sync>;

/// A running recording server; dropping it stops it.
pub struct RecordingServer {
    port: u16,
    until: Until,
    seen: Arc<Mutex<Vec<Negotiated>>>,
    failed: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

/// What the connections share.
struct Shared {
    ctx: SslContext,
    talk: Talk,
    until: Until,
    seen: Arc<Mutex<Vec<Negotiated>>>,
    failed: Arc<Mutex<Vec<String>>>,
}

/// The server's context: everything this libssl speaks, in the client's order.
fn context(tls12_only: bool) -> Result<SslContext> {
    let mut b = SslContext::builder(SslMethod::tls_server())?;
    // Two certificates, one per key type (libssl keeps one of each and picks the
    // one the client's suite needs).
    for kind in [CertType::Rsa2048, CertType::EcdsaP256] {
        let id = Identity::generate(kind)?;
        b.set_certificate(&id.cert)?;
        b.set_private_key(&id.key)?;
        b.check_private_key()?;
    }
    b.set_ciphersuites(
        "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256",
    )?;
    b.set_cipher_list("ALL:@SECLEVEL=0")?;
    b.set_min_proto_version(None)?;
    if tls12_only {
        b.set_max_proto_version(Some(SslVersion::TLS1_2))?;
    }
    Ok(b.build())
}

impl RecordingServer {
    /// Binds 127.0.0.1:0 and serves in the background, speaking `talk` after
    /// each handshake.
    pub fn start(spec: Spec, talk: Talk) -> Result<RecordingServer> {
        let ctx = context(spec.tls12_only)?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("cannot bind a TLS server to 127.0.0.1")?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let until = Until {
            stop: Arc::new(AtomicBool::new(false)),
            end: Instant::now() + spec.within,
        };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let failed = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::new(Shared {
            ctx,
            talk,
            until: until.clone(),
            seen: seen.clone(),
            failed: failed.clone(),
        });
        let connections = spec.connections;
        let thread = std::thread::spawn(move || serve(listener, shared, connections));
        Ok(RecordingServer {
            port,
            until,
            seen,
            failed,
            thread: Some(thread),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Every handshake so far, in order.
    pub fn negotiated(&self) -> Vec<Negotiated> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Why handshakes failed, in order (the first few).
    pub fn failures(&self) -> Vec<String> {
        self.failed.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Whether it still serves.
    pub fn running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Waits until it has served its connections (a client that ended has
    /// ended its connection too, a slice later at most), for at most `within`,
    /// and returns every handshake it recorded.
    pub fn settled(&self, within: Duration) -> Vec<Negotiated> {
        let end = Instant::now() + within;
        while self.running() && Instant::now() < end && !self.until.over() {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.negotiated()
    }
}

impl Drop for RecordingServer {
    fn drop(&mut self) {
        self.until.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The accept loop: one thread per connection, until the connections are served,
/// the time is up or the server is dropped.
fn serve(listener: TcpListener, shared: Arc<Shared>, connections: usize) {
    let ended = Arc::new(AtomicUsize::new(0));
    let mut accepted = 0;
    let mut threads = Vec::new();
    while !shared.until.over() && ended.load(Ordering::SeqCst) < connections {
        if accepted >= connections {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        match listener.accept() {
            Ok((tcp, _)) => {
                accepted += 1;
                let (sh, done) = (shared.clone(), ended.clone());
                threads.push(std::thread::spawn(move || {
                    if let Err(e) = connection(tcp, &sh) {
                        if let Ok(mut f) = sh.failed.lock() {
                            if f.len() < FAILURES_KEPT {
                                f.push(format!("{e:#}"));
                            }
                        }
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                }));
            }
            // Nothing waiting (or a connection that failed before it was accepted).
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    shared.until.stop.store(true, Ordering::SeqCst);
    for t in threads {
        let _ = t.join();
    }
}

/// One client: the handshake, recorded, then what the server speaks; an error
/// only when the handshake failed.
fn connection(tcp: TcpStream, sh: &Shared) -> Result<()> {
    tcp.set_nonblocking(false)?;
    tcp.set_read_timeout(Some(SLICE))?;
    tcp.set_write_timeout(Some(Duration::from_secs(10)))?;
    let _ = tcp.set_nodelay(true);
    let mut hs = Ssl::new(&sh.ctx)?.accept(tcp);
    let mut s: SslStream<TcpStream> = loop {
        match hs {
            Ok(s) => break s,
            Err(HandshakeError::WouldBlock(mid)) if !sh.until.over() => hs = mid.handshake(),
            Err(e) => anyhow::bail!("handshake: {e}"),
        }
    };
    let suite = s
        .ssl()
        .current_cipher()
        .map(|c| c.standard_name().unwrap_or(c.name()).to_string())
        .unwrap_or_default();
    let n = Negotiated {
        protocol: s.ssl().version_str().to_string(),
        suite,
        group: super::openssl::tls::negotiated_group(&s),
    };
    if let Ok(mut seen) = sh.seen.lock() {
        seen.push(n);
    }
    // What is said after the handshake is not what is recorded: a client that
    // drops the connection without a word is no failed handshake.
    let _ = (sh.talk)(&mut s, &sh.until);
    Ok(())
}

/// Reads what the client sent into `chunk`, waiting a slice at a time until
/// something came or the connection must end: `Ok(0)` when the client closed.
pub fn read_some(s: &mut SslStream<TcpStream>, chunk: &mut [u8], until: &Until) -> Result<usize> {
    loop {
        match s.read(chunk) {
            Ok(n) => return Ok(n),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) && !until.over() => {}
            Err(e) if e.kind() == ErrorKind::ConnectionAborted || e.kind() == ErrorKind::ConnectionReset => return Ok(0),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Speaks nothing: reads (and drops) what the client sends until it closes
/// (`openssl s_client` and `gnutls-cli` with their input at its end).
pub fn plain() -> Talk {
    Arc::new(|s, until| {
        let mut chunk = [0u8; 4096];
        while read_some(s, &mut chunk, until)? > 0 {}
        Ok(())
    })
}

/// The body of [`http`]'s answer.
pub const HTTP_BODY: &[u8] = b"cipherbench\n";

/// One HTTP/1.1 exchange: the request's head read (at most 16 KiB), then `200 OK`
/// with [`HTTP_BODY`] and the connection closed (curl's `https://…/`).
pub fn http() -> Talk {
    Arc::new(|s, until| {
        let mut head = Vec::new();
        let mut chunk = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            if head.len() > 16 * 1024 {
                anyhow::bail!("a request head longer than 16 KiB");
            }
            match read_some(s, &mut chunk, until)? {
                0 => return Ok(()),
                n => head.extend_from_slice(&chunk[..n]),
            }
        }
        write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            HTTP_BODY.len()
        )?;
        s.write_all(HTTP_BODY)?;
        s.flush()?;
        let _ = s.shutdown();
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use openssl::ssl::{SslConnector, SslVerifyMode};

    /// A client whose TLS 1.3 order is `suites` (or, with `tls12`, whose ≤1.2
    /// list is `tls12`, capped at TLS 1.2).
    fn connect(port: u16, suites: &str, tls12: Option<&str>) -> SslStream<TcpStream> {
        let mut b = SslConnector::builder(SslMethod::tls_client()).unwrap();
        b.set_verify(SslVerifyMode::NONE);
        b.set_ciphersuites(suites).unwrap();
        if let Some(l) = tls12 {
            b.set_cipher_list(l).unwrap();
            b.set_max_proto_version(Some(SslVersion::TLS1_2)).unwrap();
        }
        let tcp = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        b.build().connect("localhost", tcp).unwrap()
    }

    /// The client's order decides, for TLS 1.3 and for ECDSA and RSA suites of
    /// TLS 1.2 alike; each handshake is recorded, and the HTTP talk answers 200.
    #[test]
    fn the_clients_first_is_recorded_whatever_it_is() {
        let server = RecordingServer::start(
            Spec {
                connections: 3,
                within: Duration::from_secs(60),
                tls12_only: false,
            },
            http(),
        )
        .unwrap();
        let mut s = connect(server.port(), "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384", None);
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            answer.starts_with("HTTP/1.1 200 OK\r\n") && answer.ends_with("cipherbench\n"),
            "{answer}"
        );
        for l in [
            "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384",
            "ECDHE-ECDSA-CHACHA20-POLY1305",
        ] {
            let mut s = connect(server.port(), "TLS_AES_128_GCM_SHA256", Some(l));
            s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
            let _ = s.read_to_end(&mut Vec::new());
        }
        let seen: Vec<String> = server.settled(Duration::from_secs(10)).iter().map(|n| n.to_string()).collect();
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert!(seen[0].starts_with("TLSv1.3 TLS_CHACHA20_POLY1305_SHA256 over "), "{seen:?}");
        assert!(seen[1].starts_with("TLSv1.2 TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"), "{seen:?}");
        assert!(
            seen[2].starts_with("TLSv1.2 TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"),
            "{seen:?}"
        );
        assert!(!server.running());
    }
}
