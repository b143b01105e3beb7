//! A private news server: NNTP over TLS on 127.0.0.1, so that a real news client
//! (NZBGet) can be run against a peer whose side of the handshake is known.
//!
//! - It binds port 0 itself and says which port it got ([`NewsServer::port`]).
//! - It honours the client's order (server preference off: OpenSSL's default
//!   for a server context built without `SSL_OP_CIPHER_SERVER_PREFERENCE`), so
//!   what it negotiates is what the client asked for first among what both
//!   speak; every handshake's protocol, suite (IANA name) and group is recorded
//!   ([`NewsServer::negotiated`]).
//! - It speaks as much NNTP as NZBGet's server test and a download need:
//!   greeting `200`, `AUTHINFO USER/PASS` (any credentials), `MODE READER`,
//!   `GROUP`, `ARTICLE`/`BODY`/`HEAD`/`STAT` and `QUIT`. Articles are yEnc parts
//!   of one generated file ([`Articles`]), and [`NewsServer::nzb`] is the NZB
//!   that names them; any other message-id is `430 No such article` (what the
//!   server test asks for). Each article served is timed ([`NewsServer::served`]:
//!   when its command arrived), and [`NewsServer::file_sha256`] is what a client
//!   that decoded them all must have written.
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

/// The newsgroup the articles are posted to.
pub const GROUP: &str = "alt.binaries.cipherbench";

/// How long a socket blocks at a time before the server looks at its deadline.
const SLICE: Duration = Duration::from_millis(200);

/// The yEnc parts of one generated file, `count` parts of `size` bytes each.
#[derive(Debug, Clone, Copy, Default)]
pub struct Articles {
    pub count: usize,
    pub size: usize,
}

/// What to start.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The articles it serves (none: only the server test's `430`).
    pub articles: Articles,
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

/// A running private news server; dropping it stops it.
pub struct NewsServer {
    port: u16,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<Negotiated>>>,
    served: Arc<Mutex<Vec<Served>>>,
    /// Set by tests only ([`NewsServer::corrupt`]).
    #[cfg_attr(not(test), allow(dead_code))]
    corrupt: Arc<AtomicBool>,
    articles: Articles,
    thread: Option<JoinHandle<()>>,
}

/// One article served: when its command arrived, on which connection (in the
/// order they were accepted), and its decoded size.
#[derive(Debug, Clone, Copy)]
pub struct Served {
    pub asked: Instant,
    pub conn: usize,
    pub bytes: usize,
}

/// What the connections share.
struct Shared {
    ctx: SslContext,
    bodies: Vec<Body>,
    articles: Articles,
    stop: Arc<AtomicBool>,
    end: Instant,
    seen: Arc<Mutex<Vec<Negotiated>>>,
    served: Arc<Mutex<Vec<Served>>>,
    /// From now on every part's `pcrc32` is wrong (tests: a client must notice).
    corrupt: Arc<AtomicBool>,
}

impl NewsServer {
    /// Binds 127.0.0.1:0 and serves in the background.
    pub fn start(spec: Spec) -> Result<NewsServer> {
        let id = Identity::generate(CertType::EcdsaP256)?;
        let mut b = SslContext::builder(SslMethod::tls_server())?;
        b.set_private_key(&id.key)?;
        b.set_certificate(&id.cert)?;
        b.check_private_key()?;
        // Every suite and group this libssl enables by default, in the client's
        // order (no server preference).
        b.set_ciphersuites("TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256")?;
        if spec.tls12_only {
            b.set_max_proto_version(Some(SslVersion::TLS1_2))?;
        }
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("cannot bind the news server to 127.0.0.1")?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let served = Arc::new(Mutex::new(Vec::new()));
        let corrupt = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            ctx: b.build(),
            bodies: bodies(spec.articles),
            articles: spec.articles,
            stop: stop.clone(),
            end: Instant::now() + spec.within,
            seen: seen.clone(),
            served: served.clone(),
            corrupt: corrupt.clone(),
        });
        let connections = spec.connections;
        let thread = std::thread::spawn(move || serve(listener, shared, connections));
        Ok(NewsServer {
            port,
            stop,
            seen,
            served,
            corrupt,
            articles: spec.articles,
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

    /// Every article served so far (`ARTICLE` and `BODY`), in order.
    pub fn served(&self) -> Vec<Served> {
        self.served.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The SHA-256 of the whole file the articles are parts of, decoded: what a
    /// client that downloaded and decoded every article must have written.
    pub fn file_sha256(&self) -> [u8; 32] {
        let a = self.articles;
        let mut h = openssl::sha::Sha256::new();
        let parts: Vec<Vec<u8>> = (0..DISTINCT.min(a.count)).map(|k| data(k, a.size)).collect();
        for i in 0..a.count {
            h.update(&parts[i % parts.len()]);
        }
        h.finish()
    }

    /// From now on every part it serves says a wrong CRC-32 (`pcrc32`): a
    /// client that checks what it decodes fails them.
    #[cfg(test)]
    pub fn corrupt(&self) {
        self.corrupt.store(true, Ordering::SeqCst);
    }

    /// Whether it still serves.
    pub fn running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// The NZB naming every article, for a client to download.
    pub fn nzb(&self) -> String {
        let a = self.articles;
        let mut s = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<nzb xmlns=\"http://www.newzbin.com/DTD/2003/nzb\">\n");
        s.push_str(&format!(
            "<file poster=\"cipherbench\" date=\"0\" subject=\"&quot;{FILE}&quot; yEnc (1/{})\">\n<groups><group>{GROUP}</group></groups>\n<segments>\n",
            a.count
        ));
        for i in 1..=a.count {
            s.push_str(&format!(
                "<segment bytes=\"{}\" number=\"{i}\">{}</segment>\n",
                a.size,
                message_id(i)
            ));
        }
        s.push_str("</segments>\n</file>\n</nzb>\n");
        s
    }
}

impl Drop for NewsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The name of the generated file.
pub const FILE: &str = "cipherbench.bin";

/// Part `i`'s message-id (without angle brackets).
fn message_id(i: usize) -> String {
    format!("cb{i}@cipherbench.invalid")
}

/// The accept loop: one thread per connection, until the connections are served,
/// the time is up or the server is dropped.
fn serve(listener: TcpListener, shared: Arc<Shared>, connections: usize) {
    let ended = Arc::new(AtomicUsize::new(0));
    let mut accepted = 0;
    let mut threads = Vec::new();
    while !shared.stop.load(Ordering::SeqCst) && Instant::now() < shared.end && ended.load(Ordering::SeqCst) < connections {
        if accepted >= connections {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        match listener.accept() {
            Ok((tcp, _)) => {
                accepted += 1;
                let (sh, done, conn) = (shared.clone(), ended.clone(), accepted);
                threads.push(std::thread::spawn(move || {
                    let _ = connection(tcp, &sh, conn);
                    done.fetch_add(1, Ordering::SeqCst);
                }));
            }
            // Nothing waiting (or a connection that failed before it was accepted).
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    shared.stop.store(true, Ordering::SeqCst);
    for t in threads {
        let _ = t.join();
    }
}

/// Whether a connection must end now.
fn over(sh: &Shared) -> bool {
    sh.stop.load(Ordering::SeqCst) || Instant::now() >= sh.end
}

/// One client: the handshake, recorded, then NNTP until `QUIT`, its close or the end.
fn connection(tcp: TcpStream, sh: &Shared, conn: usize) -> Result<()> {
    tcp.set_nonblocking(false)?;
    tcp.set_read_timeout(Some(SLICE))?;
    tcp.set_write_timeout(Some(Duration::from_secs(10)))?;
    let _ = tcp.set_nodelay(true);
    let mut hs = Ssl::new(&sh.ctx)?.accept(tcp);
    let mut s: SslStream<TcpStream> = loop {
        match hs {
            Ok(s) => break s,
            Err(HandshakeError::WouldBlock(mid)) if !over(sh) => hs = mid.handshake(),
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
    s.write_all(b"200 cipherbench news server ready (posting prohibited)\r\n")?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let Some(at) = buf.windows(2).position(|w| w == b"\r\n") else {
            if buf.len() > 4096 {
                anyhow::bail!("a command line longer than 4 KiB");
            }
            match s.read(&mut chunk) {
                Ok(0) => return Ok(()),
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) && !over(sh) => {}
                Err(e) => return Err(e.into()),
            }
            continue;
        };
        let line = String::from_utf8_lossy(&buf[..at]).to_string();
        buf.drain(..at + 2);
        if !answer(&mut s, &line, sh, conn)? {
            return Ok(());
        }
    }
}

/// Answers one command; `false` after `QUIT`.
fn answer(s: &mut impl Write, line: &str, sh: &Shared, conn: usize) -> Result<bool> {
    let mut words = line.split_whitespace();
    let verb = words.next().unwrap_or("").to_ascii_uppercase();
    let arg = words.next().unwrap_or("");
    let reply = match verb.as_str() {
        "QUIT" => {
            s.write_all(b"205 closing connection\r\n")?;
            return Ok(false);
        }
        "AUTHINFO" if arg.eq_ignore_ascii_case("USER") => "381 password required".to_string(),
        "AUTHINFO" if arg.eq_ignore_ascii_case("PASS") => "281 authentication accepted".to_string(),
        "MODE" => "200 reader mode, posting prohibited".to_string(),
        "GROUP" => format!("211 {} 1 {} {arg}", sh.articles.count, sh.articles.count.max(1)),
        "ARTICLE" | "BODY" | "HEAD" | "STAT" => match part_of(arg, sh.articles) {
            Some(i) => {
                let asked = Instant::now();
                let code = match verb.as_str() {
                    "ARTICLE" => 220,
                    "HEAD" => 221,
                    "BODY" => 222,
                    _ => 223,
                };
                s.write_all(format!("{code} 0 {arg}\r\n").as_bytes())?;
                if verb == "STAT" {
                    return Ok(true);
                }
                if verb != "BODY" {
                    let head = format!(
                        "From: cipherbench <cb@cipherbench.invalid>\r\nNewsgroups: {GROUP}\r\nSubject: \"{FILE}\" yEnc ({i}/{})\r\nMessage-ID: {arg}\r\n",
                        sh.articles.count
                    );
                    s.write_all(head.as_bytes())?;
                }
                if verb != "HEAD" {
                    if verb == "ARTICLE" {
                        s.write_all(b"\r\n")?;
                    }
                    write_part(s, i, sh)?;
                }
                s.write_all(b".\r\n")?;
                if verb != "HEAD" {
                    if let Ok(mut v) = sh.served.lock() {
                        v.push(Served {
                            asked,
                            conn,
                            bytes: sh.articles.size,
                        });
                    }
                }
                return Ok(true);
            }
            None => "430 No such article".to_string(),
        },
        _ => "500 command not recognized".to_string(),
    };
    s.write_all(format!("{reply}\r\n").as_bytes())?;
    Ok(true)
}

/// The part number `<cbN@cipherbench.invalid>` names, when it is served.
fn part_of(id: &str, a: Articles) -> Option<usize> {
    let n: usize = id.strip_prefix("<cb")?.strip_suffix("@cipherbench.invalid>")?.parse().ok()?;
    (1..=a.count).contains(&n).then_some(n)
}

/// How many distinct part bodies are generated (parts repeat them in turn).
const DISTINCT: usize = 8;

/// A part's data, yEnc-encoded (lines of at most 128 characters, CRLF, no line
/// starting with a dot), and its CRC-32.
struct Body {
    encoded: Vec<u8>,
    crc: u32,
}

fn bodies(a: Articles) -> Vec<Body> {
    if a.count == 0 {
        return Vec::new();
    }
    (0..DISTINCT.min(a.count))
        .map(|k| {
            let data = data(k, a.size);
            Body {
                encoded: yenc(&data),
                crc: crc32(&data),
            }
        })
        .collect()
}

/// The `k`th distinct part's data, `size` bytes.
fn data(k: usize, size: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ (k as u64 + 1);
    (0..size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Part `i` (1-based) with its yEnc header and trailer.
fn write_part(s: &mut impl Write, i: usize, sh: &Shared) -> Result<()> {
    let a = sh.articles;
    let b = &sh.bodies[(i - 1) % sh.bodies.len()];
    let total = a.count * a.size;
    let begin = (i - 1) * a.size + 1;
    s.write_all(
        format!(
            "=ybegin part={i} total={} line=128 size={total} name={FILE}\r\n=ypart begin={begin} end={}\r\n",
            a.count,
            begin + a.size - 1
        )
        .as_bytes(),
    )?;
    s.write_all(&b.encoded)?;
    let crc = if sh.corrupt.load(Ordering::SeqCst) { !b.crc } else { b.crc };
    s.write_all(format!("=yend size={} part={i} pcrc32={crc:08x}\r\n", a.size).as_bytes())?;
    Ok(())
}

/// yEnc: each byte plus 42; NUL, LF, CR, `=`, TAB, space and `.` escaped (`=`
/// then the byte plus 64), so no line starts with a dot or ends in white space.
fn yenc(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + data.len() / 32 + data.len() / 64);
    let mut col = 0;
    for &c in data {
        let o = c.wrapping_add(42);
        if matches!(o, 0 | b'\n' | b'\r' | b'=' | b'\t' | b' ' | b'.') {
            out.push(b'=');
            out.push(o.wrapping_add(64));
            col += 2;
        } else {
            out.push(o);
            col += 1;
        }
        if col >= 128 {
            out.extend_from_slice(b"\r\n");
            col = 0;
        }
    }
    if col > 0 {
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// CRC-32 (IEEE 802.3), as yEnc's `pcrc32`.
fn crc32(data: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
        }
        *t = c;
    }
    !data
        .iter()
        .fold(!0u32, |c, &b| table[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_and_yenc_match_their_known_answers() {
        // The CRC-32 check value.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        // yEnc: +42, and the critical characters escaped (+64).
        assert_eq!(yenc(&[0, 214, 227, 19, 4]), b"*=@=M=}=n\r\n");
        // Lines of at most 128 characters.
        let long = yenc(&[1u8; 300]);
        assert_eq!(long.split(|&c| c == b'\n').map(<[u8]>::len).max(), Some(129));
    }

    /// A client over TLS: its TLS 1.3 order `suites`, the greeting read.
    fn client(port: u16, suites: &str) -> SslStream<TcpStream> {
        use openssl::ssl::{SslConnector, SslVerifyMode};
        let mut b = SslConnector::builder(SslMethod::tls_client()).unwrap();
        b.set_verify(SslVerifyMode::NONE);
        b.set_ciphersuites(suites).unwrap();
        let tcp = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut s = b.build().connect("localhost", tcp).unwrap();
        assert!(line(&mut s).starts_with("200 "));
        s
    }

    fn line(s: &mut impl Read) -> String {
        String::from_utf8_lossy(&raw_line(s)).to_string()
    }

    /// One line without its CRLF, as bytes (yEnc is not UTF-8).
    fn raw_line(s: &mut impl Read) -> Vec<u8> {
        let mut out = Vec::new();
        let mut b = [0u8; 1];
        while !out.ends_with(b"\r\n") {
            assert_eq!(s.read(&mut b).unwrap(), 1, "closed after {:?}", String::from_utf8_lossy(&out));
            out.push(b[0]);
        }
        out.truncate(out.len() - 2);
        out
    }

    /// The client's order decides (server preference off), each handshake is
    /// recorded, and an article decodes to its part: size and CRC-32 as its
    /// `=yend` line says; an unknown message-id is `430`.
    #[test]
    fn the_clients_order_decides_and_articles_decode() {
        let server = NewsServer::start(Spec {
            articles: Articles { count: 3, size: 1000 },
            connections: 2,
            within: Duration::from_secs(60),
            tls12_only: false,
        })
        .unwrap();
        for first in ["TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256"] {
            let mut s = client(server.port(), &format!("{first}:TLS_AES_256_GCM_SHA384"));
            s.write_all(b"ARTICLE <nothing@nowhere>\r\n").unwrap();
            assert!(line(&mut s).starts_with("430 "));
            s.write_all(b"BODY <cb2@cipherbench.invalid>\r\n").unwrap();
            assert!(line(&mut s).starts_with("222 "));
            let (mut data, mut trailer) = (Vec::new(), String::new());
            loop {
                let l = raw_line(&mut s);
                if l == b"." {
                    break;
                }
                if l.starts_with(b"=ybegin") || l.starts_with(b"=ypart") {
                    continue;
                }
                if l.starts_with(b"=yend") {
                    trailer = String::from_utf8(l).unwrap();
                    continue;
                }
                let mut esc = false;
                for &c in &l {
                    match (esc, c) {
                        (false, b'=') => esc = true,
                        (true, _) => {
                            data.push(c.wrapping_sub(64).wrapping_sub(42));
                            esc = false
                        }
                        _ => data.push(c.wrapping_sub(42)),
                    }
                }
            }
            assert_eq!(data.len(), 1000);
            assert!(trailer.contains(&format!("pcrc32={:08x}", crc32(&data))), "{trailer}");
            s.write_all(b"QUIT\r\n").unwrap();
            assert!(line(&mut s).starts_with("205 "));
        }
        let seen: Vec<String> = server.negotiated().iter().map(|n| n.suite.clone()).collect();
        assert_eq!(seen, ["TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256"]);
        assert!(server.nzb().contains(">cb3@cipherbench.invalid</segment>"));
    }
}
