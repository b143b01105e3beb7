//! libssl contexts for both ends of a TLS connection: protocol, suites, groups,
//! certificate, session resumption (tickets for 1.2, PSK for 1.3), and a client
//! connect whose failures say what went wrong.
//!
//! Connect and handshake keep one deadline: the operation's timeout from its
//! start, never past the run's deadline (`crate::deadline`). Sockets block for
//! at most a slice of it at a time, so a peer that drips one byte every second
//! cannot restart the clock, and Ctrl-C is seen between slices. When the time is
//! up, the error says how many bytes the peer sent in how long.

use super::certs::Identity;
use anyhow::{Context, Result};
use openssl::dh::Dh;
use openssl::ssl::{
    HandshakeError, Ssl, SslContext, SslContextBuilder, SslMethod, SslOptions, SslSessionCacheMode, SslSessionRef, SslStream,
    SslVerifyMode, SslVersion,
};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub use super::transport::Coalesced;

/// A TLS protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Protocol {
    Tls10,
    Tls11,
    Tls12,
    Tls13,
}

impl Protocol {
    /// Oldest first.
    pub const ALL: [Protocol; 4] = [Protocol::Tls10, Protocol::Tls11, Protocol::Tls12, Protocol::Tls13];

    /// As OpenSSL prints it: `TLSv1.2`.
    pub fn label(self) -> &'static str {
        match self {
            Protocol::Tls10 => "TLSv1",
            Protocol::Tls11 => "TLSv1.1",
            Protocol::Tls12 => "TLSv1.2",
            Protocol::Tls13 => "TLSv1.3",
        }
    }

    pub fn version(self) -> SslVersion {
        match self {
            Protocol::Tls10 => SslVersion::TLS1,
            Protocol::Tls11 => SslVersion::TLS1_1,
            Protocol::Tls12 => SslVersion::TLS1_2,
            Protocol::Tls13 => SslVersion::TLS1_3,
        }
    }

    /// `1.2`, `tls1.2`, `TLSv1.2`, `tls12`.
    pub fn parse(s: &str) -> Option<Protocol> {
        let k = s.to_ascii_lowercase().replace(['v', '_', '-'], "");
        match k.trim_start_matches("tls") {
            "1" | "1.0" | "10" => Some(Protocol::Tls10),
            "1.1" | "11" => Some(Protocol::Tls11),
            "1.2" | "12" => Some(Protocol::Tls12),
            "1.3" | "13" => Some(Protocol::Tls13),
            _ => None,
        }
    }

    /// Whether a suite whose minimum protocol OpenSSL prints as `min` can run here.
    pub fn can_negotiate(self, min: &str) -> bool {
        match min {
            "TLSv1.3" => self == Protocol::Tls13,
            "TLSv1.2" => self == Protocol::Tls12,
            // SSLv3/TLSv1 suites run on every version up to 1.2.
            _ => self != Protocol::Tls13,
        }
    }
}

/// Every group a remote server may be asked about, in the order asked: every
/// group results spell ([`crate::aliases::GROUPS`], as OpenSSL takes them).
/// Candidates only: what is swept or asked is those of them this libssl accepts at
/// run time ([`supported_groups`]): OpenSSL 3.5 adds the hybrid and pure ML-KEM
/// groups, OpenSSL 3.0 has none of them.
pub const PROBE_GROUPS: [&str; 17] = crate::aliases::GROUPS;

/// Those of [`PROBE_GROUPS`] the loopback sweep leaves out.
const NOT_SWEPT: [&str; 4] = ["X448MLKEM1024", "ffdhe4096", "ffdhe6144", "ffdhe8192"];

/// The key-exchange groups the loopback sweep may cover: [`PROBE_GROUPS`] but
/// [`NOT_SWEPT`].
pub const GROUPS: [&str; 13] = swept();

/// [`PROBE_GROUPS`] but [`NOT_SWEPT`], in order. A length that does not match (a
/// name of [`NOT_SWEPT`] that is not a probe group, too) stops the build.
const fn swept<const N: usize>() -> [&'static str; N] {
    const fn eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < PROBE_GROUPS.len() {
        let mut j = 0;
        while j < NOT_SWEPT.len() && !eq(PROBE_GROUPS[i], NOT_SWEPT[j]) {
            j += 1;
        }
        if j == NOT_SWEPT.len() {
            out[n] = PROBE_GROUPS[i];
            n += 1;
        }
        i += 1;
    }
    assert!(n == N, "the group list's length");
    out
}

/// Those of `candidates` this libssl accepts as a TLS group
/// (`SSL_CTX_set1_groups_list`), in the candidates' order.
pub fn supported_groups(candidates: &[&'static str]) -> Vec<&'static str> {
    candidates
        .iter()
        .copied()
        .filter(|g| {
            let s = Settings {
                groups: Some(g.to_string()),
                ..Default::default()
            };
            client_context(&s, false).is_ok()
        })
        .collect()
}

/// Whether a group carries ML-KEM (hybrid or pure): TLS 1.3 only.
pub fn is_mlkem(group: &str) -> bool {
    group.to_ascii_uppercase().contains("MLKEM")
}

pub fn is_ffdhe(group: &str) -> bool {
    group.starts_with("ffdhe")
}

/// RFC 7919 parameters, as `openssl genpkey -genparam -algorithm DH -pkeyopt group:ffdheN` prints them.
const FFDHE2048: &str = "-----BEGIN DH PARAMETERS-----
MIIBCAKCAQEA//////////+t+FRYortKmq/cViAnPTzx2LnFg84tNpWp4TZBFGQz
+8yTnc4kmz75fS/jY2MMddj2gbICrsRhetPfHtXV/WVhJDP1H18GbtCFY2VVPe0a
87VXE15/V8k1mE8McODmi3fipona8+/och3xWKE2rec1MKzKT0g6eXq8CrGCsyT7
YdEIqUuyyOP7uWrat2DX9GgdT0Kj3jlN9K5W7edjcrsZCwenyO4KbXCeAvzhzffi
7MA0BM0oNC9hkXL+nOmFg/+OTxIy7vKBg8P+OxtMb61zO7X8vC7CIAXFjvGDfRaD
ssbzSibBsu/6iGtCOGEoXJf//////////wIBAg==
-----END DH PARAMETERS-----
";
const FFDHE3072: &str = "-----BEGIN DH PARAMETERS-----
MIIBiAKCAYEA//////////+t+FRYortKmq/cViAnPTzx2LnFg84tNpWp4TZBFGQz
+8yTnc4kmz75fS/jY2MMddj2gbICrsRhetPfHtXV/WVhJDP1H18GbtCFY2VVPe0a
87VXE15/V8k1mE8McODmi3fipona8+/och3xWKE2rec1MKzKT0g6eXq8CrGCsyT7
YdEIqUuyyOP7uWrat2DX9GgdT0Kj3jlN9K5W7edjcrsZCwenyO4KbXCeAvzhzffi
7MA0BM0oNC9hkXL+nOmFg/+OTxIy7vKBg8P+OxtMb61zO7X8vC7CIAXFjvGDfRaD
ssbzSibBsu/6iGtCOGEfz9zeNVs7ZRkDW7w09N75nAI4YbRvydbmyQd62R0mkff3
7lmMsPrBhtkcrv4TCYUTknC0EwyTvEN5RPT9RFLi103TZPLiHnH1S/9croKrnJ32
nuhtK8UiNjoNq8Uhl5sN6todv5pC1cRITgq80Gv6U93vPBsg7j/VnXwl5B0rZsYu
N///////////AgEC
-----END DH PARAMETERS-----
";

/// Every TLS 1.3 suite OpenSSL implements (CCM ones are off unless named).
pub const TLS13_SUITES: [&str; 5] = [
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_AES_128_CCM_SHA256",
    "TLS_AES_128_CCM_8_SHA256",
];

/// Everything this libssl can offer for TLS 1.2 and older.
pub const ALL_TLS12: &str = "ALL:COMPLEMENTOFALL:@SECLEVEL=0";

/// One end's settings. `None` means the library's permissive default.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Lowest and highest protocol (both `None`: any).
    pub min: Option<Protocol>,
    pub max: Option<Protocol>,
    /// TLS 1.2-and-older suites, OpenSSL syntax.
    pub cipher_list: Option<String>,
    /// TLS 1.3 suites, colon-separated.
    pub ciphersuites: Option<String>,
    /// Groups, colon-separated, OpenSSL names. For a TLS 1.2 server an ffdhe group
    /// also sets the DHE parameters.
    pub groups: Option<String>,
}

impl Settings {
    fn apply(&self, b: &mut SslContextBuilder) -> Result<()> {
        b.set_security_level(0);
        // Read whole records (and what follows) per read(2), as servers do.
        b.set_read_ahead(true);
        b.set_min_proto_version(Some(self.min.map(Protocol::version).unwrap_or(SslVersion::TLS1)))?;
        b.set_max_proto_version(self.max.map(Protocol::version))?;
        let list = self.cipher_list.as_deref().unwrap_or(ALL_TLS12);
        // A list without an explicit level would reset it to the default.
        let list = if list.contains("@SECLEVEL") {
            list.to_string()
        } else {
            format!("{list}:@SECLEVEL=0")
        };
        b.set_cipher_list(&list)
            .with_context(|| format!("libssl accepts none of the suites '{list}'"))?;
        let suites = self.ciphersuites.clone().unwrap_or_else(|| TLS13_SUITES.join(":"));
        b.set_ciphersuites(&suites)
            .with_context(|| format!("libssl accepts none of the TLS 1.3 suites '{suites}'"))?;
        if let Some(g) = &self.groups {
            let ec: Vec<&str> = g.split(':').collect();
            b.set_groups_list(&ec.join(":"))
                .with_context(|| format!("libssl does not know the group(s) '{g}'"))?;
        }
        Ok(())
    }
}

fn dh_params(groups: Option<&str>) -> Result<Dh<openssl::pkey::Params>> {
    let pem = match groups.and_then(|g| g.split(':').find(|g| is_ffdhe(g))) {
        Some("ffdhe3072") => FFDHE3072,
        _ => FFDHE2048,
    };
    Ok(Dh::params_from_pem(pem.as_bytes())?)
}

/// A server context serving `id` with `s`. Session tickets stay on (resumption).
pub fn server_context(s: &Settings, id: &Identity) -> Result<SslContext> {
    let mut b = SslContext::builder(SslMethod::tls_server())?;
    s.apply(&mut b)?;
    // TLS 1.2 DHE takes its parameters from here, not from the group list.
    let dh = dh_params(s.groups.as_deref())?;
    b.set_tmp_dh(&dh)?;
    b.set_certificate(&id.cert)?;
    b.set_private_key(&id.key)?;
    b.check_private_key()?;
    b.set_session_id_context(b"cipherbench")?;
    Ok(b.build())
}

/// A client context. It does not verify the peer's certificate: cipherbench
/// measures what a server negotiates, it does not authenticate it.
pub fn client_context(s: &Settings, resumption: bool) -> Result<SslContext> {
    let mut b = SslContext::builder(SslMethod::tls_client())?;
    s.apply(&mut b)?;
    b.set_verify(SslVerifyMode::NONE);
    if resumption {
        b.set_session_cache_mode(SslSessionCacheMode::CLIENT);
    } else {
        b.set_session_cache_mode(SslSessionCacheMode::OFF);
        b.set_options(SslOptions::NO_TICKET);
    }
    Ok(b.build())
}

/// Why a connection failed, in the terms a user can act on.
#[derive(Debug, Clone, PartialEq)]
pub enum ConnectError {
    /// No TCP connection (refused, unreachable, timed out).
    Tcp(String),
    /// Something answered, but not with TLS.
    NotTls(String),
    /// The server refused what was offered (an alert or a closed connection).
    Rejected(String),
    /// The peer accepted the connection, then sent `bytes` (when known) in
    /// `secs` without finishing the handshake: silent, or too slow to measure.
    Stalled { bytes: Option<u64>, secs: f64 },
    /// The run's deadline passed during the handshake.
    Deadline { bytes: Option<u64>, secs: f64 },
    /// Ctrl-C.
    Interrupted,
}

impl ConnectError {
    /// A handshake begun at `t0` that ran out of time after `bytes` from the
    /// peer: Ctrl-C, the run's deadline, or the peer too slow (`Stalled`).
    pub fn out_of_time(bytes: Option<u64>, t0: std::time::Instant) -> ConnectError {
        let secs = t0.elapsed().as_secs_f64();
        if crate::interrupt::by_user() {
            ConnectError::Interrupted
        } else if crate::deadline::run_expired() {
            ConnectError::Deadline { bytes, secs }
        } else {
            ConnectError::Stalled { bytes, secs }
        }
    }
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Tcp(e) => write!(f, "{e}"),
            ConnectError::NotTls(e) => write!(f, "the reply is not TLS ({e})"),
            ConnectError::Rejected(e) => write!(f, "handshake refused: {e}"),
            ConnectError::Stalled { bytes: Some(0), secs } => {
                write!(f, "accepted the connection but sent nothing for {secs:.1} s")
            }
            ConnectError::Stalled { bytes: Some(n), secs } => write!(
                f,
                "accepted the connection but sent {n} bytes in {secs:.1} s without finishing the TLS handshake: too slow to measure"
            ),
            ConnectError::Stalled { bytes: None, secs } => {
                write!(f, "accepted the connection but did not finish the TLS handshake in {secs:.1} s")
            }
            ConnectError::Deadline { bytes, secs } => {
                match bytes {
                    Some(0) => write!(f, "accepted the connection but sent nothing for {secs:.1} s")?,
                    Some(n) => write!(
                        f,
                        "accepted the connection but sent {n} bytes in {secs:.1} s without finishing the TLS handshake: too slow to measure"
                    )?,
                    None => write!(f, "did not finish the TLS handshake in {secs:.1} s: too slow to measure")?,
                }
                write!(f, " (stopped at {})", crate::deadline::describe())
            }
            ConnectError::Interrupted => write!(f, "interrupted"),
        }
    }
}

/// A stream with a TCP socket underneath (whose timeouts the handshake sets).
pub trait Socket {
    fn socket(&self) -> &TcpStream;
}

impl Socket for TcpStream {
    fn socket(&self) -> &TcpStream {
        self
    }
}

impl Socket for Coalesced {
    fn socket(&self) -> &TcpStream {
        self.tcp()
    }
}

/// Opens a TCP connection within `timeout` (and the run's deadline), waiting in
/// slices so Ctrl-C is seen. The socket's read and write timeouts are then
/// `timeout`, capped by what is left of the run.
pub fn tcp(addr: SocketAddr, timeout: Duration) -> Result<TcpStream, ConnectError> {
    let dl = crate::deadline::op(timeout);
    let t0 = std::time::Instant::now();
    let tcp = connect_sliced(addr, dl).map_err(|e| {
        if crate::interrupt::by_user() {
            return ConnectError::Interrupted;
        }
        if crate::deadline::run_expired() {
            return ConnectError::Tcp(format!("not connected before {}", crate::deadline::describe()));
        }
        ConnectError::Tcp(match e.kind() {
            std::io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                format!("no TCP answer within {:.1} s", t0.elapsed().as_secs_f64())
            }
            _ => e.to_string(),
        })
    })?;
    let _ = tcp.set_nodelay(true);
    rearm(&tcp, timeout).map_err(|e| ConnectError::Tcp(e.to_string()))?;
    Ok(tcp)
}

/// Sets `tcp`'s read and write timeouts to `timeout`, capped by what is left of
/// the run (an error once it has passed). Call before a blocking read that must
/// not outlive the run.
pub fn rearm(tcp: &TcpStream, timeout: Duration) -> std::io::Result<()> {
    let t = crate::deadline::run().cap(timeout);
    if t.is_zero() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("stopped at {}", crate::deadline::describe()),
        ));
    }
    tcp.set_read_timeout(Some(t))?;
    tcp.set_write_timeout(Some(t))
}

/// A non-blocking `connect(2)` polled in slices until `dl`.
fn connect_sliced(addr: SocketAddr, dl: crate::deadline::Deadline) -> std::io::Result<TcpStream> {
    use std::os::fd::{FromRawFd, OwnedFd};
    let (family, sa, len) = sockaddr(&addr);
    // SAFETY: plain socket(2); the descriptor is owned at once.
    let fd = unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: sa is a valid sockaddr of length len for this family.
    let r = unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, len) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
        loop {
            let Some(slice) = dl.slice() else {
                return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out"));
            };
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: one pollfd we own.
            let n = unsafe { libc::poll(&mut p, 1, slice.as_millis().max(1) as i32) };
            if n > 0 {
                break;
            }
        }
        let mut err: libc::c_int = 0;
        let mut l = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt writes one int into err.
        unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                &mut err as *mut _ as *mut libc::c_void,
                &mut l,
            )
        };
        if err != 0 {
            return Err(std::io::Error::from_raw_os_error(err));
        }
    }
    let tcp = TcpStream::from(owned);
    tcp.set_nonblocking(false)?;
    Ok(tcp)
}

fn sockaddr(addr: &SocketAddr) -> (libc::c_int, libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_storage is valid; the family's fields are filled below.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in.
            let sin = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr = libc::in_addr {
                s_addr: u32::from_ne_bytes(a.ip().octets()),
            };
            (libc::AF_INET, ss, std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        SocketAddr::V6(a) => {
            // SAFETY: as above, for sockaddr_in6.
            let sin6 = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr = libc::in6_addr { s6_addr: a.ip().octets() };
            sin6.sin6_flowinfo = a.flowinfo();
            sin6.sin6_scope_id = a.scope_id();
            (libc::AF_INET6, ss, std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

/// Connects and completes a handshake within `timeout` overall (capped by the
/// run's deadline), resuming `session` when given.
pub fn connect(
    ctx: &SslContext,
    addr: SocketAddr,
    sni: Option<&str>,
    timeout: Duration,
    session: Option<&SslSessionRef>,
) -> Result<SslStream<TcpStream>, ConnectError> {
    let dl = crate::deadline::op(timeout);
    let s = handshake_until(ctx, tcp(addr, timeout)?, sni, session, false, dl)?;
    rearm(s.get_ref(), timeout).map_err(|e| ConnectError::Tcp(e.to_string()))?;
    Ok(s)
}

/// Completes a client handshake over an open stream, resuming `session` when given.
/// `plain` turns libssl's read-ahead off (for a stream that buffers reads itself).
/// The handshake keeps the run's deadline; the stream's timeouts are restored after.
pub fn handshake<S: Read + Write + Socket>(
    ctx: &SslContext,
    tcp: S,
    sni: Option<&str>,
    session: Option<&SslSessionRef>,
    plain: bool,
) -> Result<SslStream<S>, ConnectError> {
    let before = (
        tcp.socket().read_timeout().ok().flatten(),
        tcp.socket().write_timeout().ok().flatten(),
    );
    let limit = before.0.unwrap_or(Duration::from_secs(86_400));
    let s = handshake_until(ctx, tcp, sni, session, plain, crate::deadline::op(limit))?;
    let _ = s.get_ref().socket().set_read_timeout(before.0);
    let _ = s.get_ref().socket().set_write_timeout(before.1);
    Ok(s)
}

extern "C" {
    // libcrypto; not bound by openssl-sys.
    fn BIO_number_read(b: *mut openssl_sys::BIO) -> u64;
}

/// Bytes libssl has read from the peer on this connection so far.
fn bytes_read(ssl: &openssl::ssl::SslRef) -> Option<u64> {
    use foreign_types::ForeignTypeRef;
    // SAFETY: read-only queries on a live SSL handle and its read BIO.
    unsafe {
        let bio = openssl_sys::SSL_get_rbio(ssl.as_ptr());
        (!bio.is_null()).then(|| BIO_number_read(bio))
    }
}

/// The handshake, with the socket blocking a slice at a time until `dl`.
fn handshake_until<S: Read + Write + Socket>(
    ctx: &SslContext,
    tcp: S,
    sni: Option<&str>,
    session: Option<&SslSessionRef>,
    plain: bool,
    dl: crate::deadline::Deadline,
) -> Result<SslStream<S>, ConnectError> {
    let t0 = std::time::Instant::now();
    let mut ssl = Ssl::new(ctx).map_err(|e| ConnectError::Tcp(e.to_string()))?;
    if plain {
        plain_reads(&mut ssl);
    }
    if let Some(name) = sni {
        ssl.set_hostname(name).map_err(|e| ConnectError::Tcp(e.to_string()))?;
    }
    if let Some(s) = session {
        // SAFETY: the session comes from a connection made with this same context.
        unsafe { ssl.set_session(s) }.map_err(|e| ConnectError::Tcp(e.to_string()))?;
    }
    // False once the time is up (or Ctrl-C): the socket then blocks no more.
    let arm = |sock: &TcpStream| match dl.slice() {
        Some(t) => {
            let _ = sock.set_read_timeout(Some(t));
            let _ = sock.set_write_timeout(Some(t));
            true
        }
        None => false,
    };
    let out_of_time = |bytes: Option<u64>| ConnectError::out_of_time(bytes, t0);
    if !arm(tcp.socket()) {
        return Err(out_of_time(Some(0)));
    }
    let mut attempt = ssl.connect(tcp);
    loop {
        match attempt {
            Ok(s) => return Ok(s),
            Err(HandshakeError::WouldBlock(mid)) => {
                let bytes = bytes_read(mid.ssl());
                if !arm(mid.get_ref().socket()) {
                    return Err(out_of_time(bytes));
                }
                attempt = mid.handshake();
            }
            Err(HandshakeError::Failure(mid)) => {
                let interrupted = mid
                    .error()
                    .io_error()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::Interrupted);
                if interrupted || crate::interrupt::by_user() {
                    return Err(ConnectError::Interrupted);
                }
                return Err(classify(HandshakeError::Failure(mid)));
            }
            Err(e) => return Err(classify(e)),
        }
    }
}
fn classify<S>(e: HandshakeError<S>) -> ConnectError {
    let err = match e {
        HandshakeError::SetupFailure(s) => return ConnectError::Tcp(s.to_string()),
        HandshakeError::Failure(m) | HandshakeError::WouldBlock(m) => m.into_error(),
    };
    if let Some(io) = err.io_error() {
        return match io.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => ConnectError::Stalled { bytes: None, secs: 0.0 },
            std::io::ErrorKind::Interrupted => ConnectError::Interrupted,
            _ => ConnectError::Rejected(format!("connection closed: {io}")),
        };
    }
    let reasons: Vec<String> = err
        .ssl_error()
        .map(|s| s.errors().iter().filter_map(|e| e.reason().map(str::to_string)).collect())
        .unwrap_or_default();
    let text = if reasons.is_empty() {
        "the server closed the connection".to_string()
    } else {
        reasons.join("; ")
    };
    let not_tls = [
        "wrong version number",
        "packet length too long",
        "unknown protocol",
        "http request",
        "record layer failure",
    ];
    if reasons.iter().any(|r| not_tls.iter().any(|n| r.contains(n))) {
        ConnectError::NotTls(text)
    } else {
        ConnectError::Rejected(text)
    }
}

extern "C" {
    // libssl; not bound by openssl-sys for an SSL handle.
    fn SSL_set_read_ahead(s: *mut openssl_sys::SSL, yes: std::ffi::c_int);
}

/// Turns libssl's read-ahead (on for every context, see `Settings::apply`) off for
/// one connection whose stream buffers reads itself (`Coalesced`).
pub fn plain_reads(ssl: &mut openssl::ssl::SslRef) {
    use foreign_types::ForeignTypeRef;
    // SAFETY: a flag setter on a live SSL handle.
    unsafe { SSL_set_read_ahead(ssl.as_ptr(), 0) }
}

extern "C" {
    // libssl 1.1.1+; not bound by openssl-sys.
    fn SSL_SESSION_is_resumable(s: *const openssl_sys::SSL_SESSION) -> std::ffi::c_int;
}

/// Whether the connection's current session can be offered for resumption (in TLS
/// 1.3: a NewSessionTicket has been processed).
pub fn resumable<S>(s: &SslStream<S>) -> bool {
    use foreign_types::ForeignTypeRef;
    // SAFETY: a read-only query on a live session handle.
    s.ssl()
        .session()
        .is_some_and(|x| unsafe { SSL_SESSION_is_resumable(x.as_ptr()) } == 1)
}

/// TLS 1.3 servers send their tickets (NewSessionTicket) after the handshake, and
/// libssl only processes them while reading. Reads (without blocking, so no
/// application data is waited for) until the session is resumable, the peer sends
/// something else or closes, or `timeout` passes. True when a ticket arrived (TLS
/// 1.2: when the handshake gave one).
pub fn await_ticket(s: &mut SslStream<TcpStream>, timeout: Duration) -> bool {
    use std::os::fd::AsRawFd;
    if resumable(s) {
        return true;
    }
    if s.ssl().version2() != Some(SslVersion::TLS1_3) || s.get_ref().set_nonblocking(true).is_err() {
        return false;
    }
    // Never past the run's deadline; Ctrl-C is seen between slices.
    let dl = crate::deadline::op(timeout);
    let mut buf = [0u8; 256];
    let ok = loop {
        match s.ssl_read(&mut buf) {
            Err(e) if e.code() == openssl::ssl::ErrorCode::WANT_READ => {}
            // Application data or the end of the connection: no more tickets to wait for.
            _ => break resumable(s),
        }
        if resumable(s) {
            break true;
        }
        let Some(left) = dl.slice() else {
            break false;
        };
        let mut fd = libc::pollfd {
            fd: s.get_ref().as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd we own, for a socket that stays open during the call.
        // Nothing within a slice (or EINTR): look at the clock and Ctrl-C, wait again.
        unsafe { libc::poll(&mut fd, 1, left.as_millis().clamp(1, i32::MAX as u128) as i32) };
    };
    let _ = s.get_ref().set_nonblocking(false);
    ok
}

/// The suite, protocol and (when libssl can tell) group a connection negotiated.
pub fn negotiated<S>(s: &SslStream<S>) -> (String, String) {
    let suite = s
        .ssl()
        .current_cipher()
        .map(|c| c.standard_name().unwrap_or(c.name()).to_string())
        .unwrap_or_default();
    (s.ssl().version_str().to_string(), suite)
}

/// Hybrid groups without a NID, which libssl reports as `0x1000000 | code point`
/// (ssl/t1_lib.c's `TLSEXT_nid_unknown`), by IANA code point.
const HYBRID_CODES: [(i64, &str); 3] = [
    (0x11eb, "SecP256r1MLKEM768"),
    (0x11ec, "X25519MLKEM768"),
    (0x11ed, "SecP384r1MLKEM1024"),
];

/// `SSL_CTRL_GET_NEGOTIATED_GROUP` (OpenSSL 3.0's `SSL_get_negotiated_group`).
const SSL_CTRL_GET_NEGOTIATED_GROUP: std::ffi::c_int = 134;

/// The key-exchange group a connection used, canonically spelled, when libssl
/// reports one (ECDHE in 1.2, any group in 1.3).
pub fn negotiated_group<S>(s: &SslStream<S>) -> Option<String> {
    use foreign_types::ForeignTypeRef;
    // SAFETY: a read-only control call on a live SSL handle; no pointer argument.
    let nid = unsafe { openssl_sys::SSL_ctrl(s.ssl().as_ptr(), SSL_CTRL_GET_NEGOTIATED_GROUP, 0, std::ptr::null_mut()) };
    if nid <= 0 {
        return None;
    }
    if nid & 0x100_0000 != 0 {
        let code = (nid & 0xffff) as i64;
        return HYBRID_CODES.iter().find(|(c, _)| *c == code).map(|(_, n)| n.to_string());
    }
    let name = openssl::nid::Nid::from_raw(nid as std::ffi::c_int).short_name().ok()?;
    Some(crate::aliases::group_spelling(name).map_or_else(|| name.to_string(), str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        assert_eq!(Protocol::parse("1.3"), Some(Protocol::Tls13));
        assert_eq!(Protocol::parse("TLSv1.2"), Some(Protocol::Tls12));
        assert_eq!(Protocol::parse("tls1.1"), Some(Protocol::Tls11));
        assert_eq!(Protocol::parse("ssl3"), None);
        assert!(Protocol::Tls12.can_negotiate("SSLv3") && !Protocol::Tls13.can_negotiate("SSLv3"));
        assert!(!Protocol::Tls11.can_negotiate("TLSv1.2"));
    }

    #[test]
    fn ffdhe_params_load() {
        assert_eq!(dh_params(Some("ffdhe3072")).unwrap().prime_p().num_bits(), 3072);
        assert_eq!(dh_params(None).unwrap().prime_p().num_bits(), 2048);
    }
}
