//! A private news server: NNTP over TLS on 127.0.0.1, so that a real news client
//! (NZBGet) can be run against a peer whose side of the handshake is known.
//!
//! - Its TLS is the recording server's (`recording.rs`): port 0 on 127.0.0.1
//!   ([`NewsServer::port`]), everything this libssl speaks in the client's
//!   order, every handshake's protocol, suite (IANA name) and group recorded
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

use super::recording::{self, RecordingServer, Until};
use anyhow::Result;
use openssl::ssl::SslStream;
use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use super::recording::Negotiated;

/// The newsgroup the articles are posted to.
pub const GROUP: &str = "alt.binaries.cipherbench";

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

/// A running private news server; dropping it stops it.
pub struct NewsServer {
    server: RecordingServer,
    articles: Articles,
    served: Arc<Mutex<Vec<Served>>>,
    /// Set by tests only ([`NewsServer::corrupt`]).
    #[cfg_attr(not(test), allow(dead_code))]
    corrupt: Arc<AtomicBool>,
}

/// One article served: when its command arrived, on which connection (in the
/// order their handshakes ended), and its decoded size.
#[derive(Debug, Clone, Copy)]
pub struct Served {
    pub asked: Instant,
    pub conn: usize,
    pub bytes: usize,
}

/// What the connections share.
struct Shared {
    bodies: Vec<Body>,
    articles: Articles,
    served: Arc<Mutex<Vec<Served>>>,
    /// From now on every part's `pcrc32` is wrong (tests: a client must notice).
    corrupt: Arc<AtomicBool>,
    /// Connections so far (each one's number).
    conns: AtomicUsize,
}

impl NewsServer {
    /// Binds 127.0.0.1:0 and serves in the background.
    pub fn start(spec: Spec) -> Result<NewsServer> {
        let served = Arc::new(Mutex::new(Vec::new()));
        let corrupt = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            bodies: bodies(spec.articles),
            articles: spec.articles,
            served: served.clone(),
            corrupt: corrupt.clone(),
            conns: AtomicUsize::new(0),
        });
        let server = RecordingServer::start(
            recording::Spec {
                connections: spec.connections,
                within: spec.within,
                tls12_only: spec.tls12_only,
            },
            Arc::new(move |s, until| connection(s, until, &shared)),
        )?;
        Ok(NewsServer {
            server,
            articles: spec.articles,
            served,
            corrupt,
        })
    }

    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// Every handshake so far, in order.
    pub fn negotiated(&self) -> Vec<Negotiated> {
        self.server.negotiated()
    }

    /// Every handshake, once it has served its connections or after `within`.
    pub fn settled(&self, within: Duration) -> Vec<Negotiated> {
        self.server.settled(within)
    }

    /// Why handshakes failed (the first few).
    pub fn failures(&self) -> Vec<String> {
        self.server.failures()
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
        self.server.running()
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

/// The name of the generated file.
pub const FILE: &str = "cipherbench.bin";

/// Part `i`'s message-id (without angle brackets).
fn message_id(i: usize) -> String {
    format!("cb{i}@cipherbench.invalid")
}

/// One client after its handshake: NNTP until `QUIT`, its close or the end.
fn connection(s: &mut SslStream<TcpStream>, until: &Until, sh: &Shared) -> Result<()> {
    let conn = sh.conns.fetch_add(1, Ordering::SeqCst) + 1;
    s.write_all(b"200 cipherbench news server ready (posting prohibited)\r\n")?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let Some(at) = buf.windows(2).position(|w| w == b"\r\n") else {
            if buf.len() > 4096 {
                anyhow::bail!("a command line longer than 4 KiB");
            }
            match recording::read_some(s, &mut chunk, until)? {
                0 => return Ok(()),
                n => buf.extend_from_slice(&chunk[..n]),
            }
            continue;
        };
        let line = String::from_utf8_lossy(&buf[..at]).to_string();
        buf.drain(..at + 2);
        if !answer(s, &line, sh, conn)? {
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
    use openssl::ssl::SslMethod;
    use std::io::Read;
    use std::net::Ipv4Addr;

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
