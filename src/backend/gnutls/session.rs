//! TLS through the system GnuTLS: priority caches, certificate credentials and
//! sessions over real TCP sockets, each owned by a small safe type whose `Drop`
//! frees it (`gnutls_priority_deinit`, `gnutls_certificate_free_credentials`,
//! `gnutls_deinit`).
//!
//! A [`TlsStream`] owns its session and its socket (the session is dropped first)
//! and implements `Read` and `Write`, so the benchmark's wire protocol runs over it
//! exactly as over an OpenSSL stream.

use super::ffi::Handle;
pub use super::priority::{all_suites, Priority, PriorityError, SuiteInfo};
use super::{api, check, cstr, strerror, GnutlsError};
use std::ffi::{c_int, c_uint};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

const GNUTLS_SERVER: c_uint = 1;
const GNUTLS_CLIENT: c_uint = 1 << 1;
const GNUTLS_NO_SIGNAL: c_uint = 1 << 6;
const GNUTLS_NO_TICKETS: c_uint = 1 << 10;
const GNUTLS_CRD_CERTIFICATE: c_int = 1;
const GNUTLS_X509_FMT_PEM: c_int = 1;
const GNUTLS_SEC_PARAM_MEDIUM: c_int = 35;
const GNUTLS_SHUT_WR: c_int = 1;
const GNUTLS_NAME_DNS: c_int = 1;
const GNUTLS_RND_KEY: c_int = 2;

const E_FATAL_ALERT_RECEIVED: c_int = -12;
const E_UNSUPPORTED_VERSION_PACKET: c_int = -8;
const E_UNEXPECTED_PACKET_LENGTH: c_int = -9;
const E_AGAIN: c_int = -28;
const E_INTERRUPTED: c_int = -52;
const E_PUSH_ERROR: c_int = -53;
const E_PULL_ERROR: c_int = -54;
const E_PREMATURE_TERMINATION: c_int = -110;
const E_TIMEDOUT: c_int = -319;

/// Certificate credentials: a server's certificate and key, or a client's empty set
/// (the client does not verify the peer: cipherbench measures, it does not
/// authenticate).
pub struct Credentials {
    h: Handle,
}

// SAFETY: credentials are read-only once set up; GnuTLS lets many sessions and threads share them.
unsafe impl Send for Credentials {}
// SAFETY: as above.
unsafe impl Sync for Credentials {}

impl Credentials {
    fn alloc() -> Result<Credentials, GnutlsError> {
        let a = api()?;
        let mut h: Handle = ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check(
            a,
            unsafe { (a.gnutls_certificate_allocate_credentials)(&mut h) },
            "gnutls_certificate_allocate_credentials",
        )?;
        Ok(Credentials { h })
    }

    pub fn client() -> Result<Credentials, GnutlsError> {
        Credentials::alloc()
    }

    /// A server identity from PEM certificate (chain) and private key. RFC 7919
    /// parameters serve TLS 1.2 DHE.
    pub fn server(cert_pem: &[u8], key_pem: &[u8]) -> Result<Credentials, GnutlsError> {
        let a = api()?;
        let c = Credentials::alloc()?;
        let (cd, kd) = (super::datum(cert_pem), super::datum(key_pem));
        // SAFETY: the datums point at live slices; GnuTLS copies them.
        check(
            a,
            unsafe { (a.gnutls_certificate_set_x509_key_mem2)(c.h, &cd, &kd, GNUTLS_X509_FMT_PEM, ptr::null(), 0) },
            "gnutls_certificate_set_x509_key_mem2",
        )?;
        // SAFETY: a live credentials handle.
        check(
            a,
            unsafe { (a.gnutls_certificate_set_known_dh_params)(c.h, GNUTLS_SEC_PARAM_MEDIUM) },
            "gnutls_certificate_set_known_dh_params",
        )?;
        Ok(c)
    }
}

impl Drop for Credentials {
    fn drop(&mut self) {
        if let Ok(a) = api() {
            // SAFETY: allocated by gnutls_certificate_allocate_credentials, freed once,
            // after every session using it (sessions hold an Arc).
            unsafe { (a.gnutls_certificate_free_credentials)(self.h) };
        }
    }
}

/// A server's session-ticket encryption key (resumption).
#[derive(Clone)]
pub struct TicketKey(Arc<[u8; 64]>);

impl TicketKey {
    pub fn generate() -> Result<TicketKey, GnutlsError> {
        let a = api()?;
        let mut k = [0u8; 64];
        // SAFETY: fills a live local buffer of the given length.
        check(
            a,
            unsafe { (a.gnutls_rnd)(GNUTLS_RND_KEY, k.as_mut_ptr().cast(), k.len()) },
            "gnutls_rnd",
        )?;
        Ok(TicketKey(Arc::new(k)))
    }
}

/// Why a handshake did not complete, in terms a user can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandshakeError {
    /// The peer went silent for longer than the timeout.
    Timeout,
    /// Something answered, but not with TLS.
    NotTls(String),
    /// The peer refused (an alert) or GnuTLS found nothing in common.
    Rejected(String),
    /// The connection broke, or the session could not be set up.
    Io(String),
}

impl std::fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandshakeError::Timeout => write!(f, "no answer within the timeout"),
            HandshakeError::NotTls(e) => write!(f, "the reply is not TLS ({e})"),
            HandshakeError::Rejected(e) => write!(f, "handshake refused: {e}"),
            HandshakeError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for HandshakeError {}

/// One end's configuration.
pub struct Config {
    pub priority: Arc<Priority>,
    pub credentials: Arc<Credentials>,
    /// Server: encrypts session tickets (resumption). Client: ignored.
    pub ticket_key: Option<TicketKey>,
    /// Client: accept session tickets (needed to resume).
    pub tickets: bool,
}

/// A GnuTLS session. Holds what it points at (priority, credentials, ticket key)
/// so they outlive it.
struct Session {
    h: Handle,
    _priority: Arc<Priority>,
    _credentials: Arc<Credentials>,
    _ticket: Option<TicketKey>,
}

// SAFETY: a session is used by one thread at a time (moved, never shared).
unsafe impl Send for Session {}

impl Session {
    fn new(server: bool, cfg: &Config) -> Result<Session, GnutlsError> {
        let a = api()?;
        let mut flags = GNUTLS_NO_SIGNAL | if server { GNUTLS_SERVER } else { GNUTLS_CLIENT };
        if !server && !cfg.tickets {
            flags |= GNUTLS_NO_TICKETS;
        }
        let mut h: Handle = ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check(a, unsafe { (a.gnutls_init)(&mut h, flags) }, "gnutls_init")?;
        let s = Session {
            h,
            _priority: cfg.priority.clone(),
            _credentials: cfg.credentials.clone(),
            _ticket: if server { cfg.ticket_key.clone() } else { None },
        };
        // SAFETY: live handles; the session keeps Arcs to the priority and credentials.
        unsafe {
            check(a, (a.gnutls_priority_set)(s.h, cfg.priority.h), "gnutls_priority_set")?;
            check(
                a,
                (a.gnutls_credentials_set)(s.h, GNUTLS_CRD_CERTIFICATE, cfg.credentials.h),
                "gnutls_credentials_set",
            )?;
            if let (true, Some(k)) = (server, &s._ticket) {
                let d = super::datum(&k.0[..]);
                check(
                    a,
                    (a.gnutls_session_ticket_enable_server)(s.h, &d),
                    "gnutls_session_ticket_enable_server",
                )?;
            }
        }
        Ok(s)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Ok(a) = api() {
            // SAFETY: created by gnutls_init, freed once.
            unsafe { (a.gnutls_deinit)(self.h) };
        }
    }
}

/// What a session reads and writes through, when not the socket itself: e.g. a
/// socket that gathers records into large `send(2)` calls. Reads must first send
/// whatever is buffered (the peer may be waiting for it).
pub trait Transport: Read + Write + Send {
    /// Waits up to `ms` milliseconds for something to read; `Ok(true)` when ready.
    fn wait_readable(&mut self, ms: u32) -> std::io::Result<bool>;
}

/// The transport of a session.
pub enum Io {
    /// The socket's descriptor, GnuTLS's own `send`/`recv` (`gnutls_transport_set_int`).
    Socket(TcpStream),
    /// Push/pull callbacks into a [`Transport`].
    Custom(Box<dyn Transport>),
}

enum Held {
    Socket(TcpStream),
    // Boxed twice: GnuTLS holds a thin pointer to the inner box, stable while the
    // stream moves.
    Custom(Box<Box<dyn Transport>>),
}

fn set_errno(e: &std::io::Error) {
    let code = match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => libc::EAGAIN,
        std::io::ErrorKind::Interrupted => libc::EINTR,
        _ => e.raw_os_error().unwrap_or(libc::EIO),
    };
    // SAFETY: errno is thread-local; GnuTLS reads it after a callback returns -1.
    unsafe { *libc::__errno_location() = code };
}

/// SAFETY (all three callbacks): `p` is the `Box<dyn Transport>` a `Held::Custom`
/// owns; it outlives the session, and GnuTLS calls back only from the thread that
/// is inside a GnuTLS call on that session.
unsafe extern "C" fn pull_cb(p: *mut std::ffi::c_void, buf: *mut std::ffi::c_void, len: usize) -> isize {
    let t = &mut *(p as *mut Box<dyn Transport>);
    match t.read(std::slice::from_raw_parts_mut(buf as *mut u8, len)) {
        Ok(n) => n as isize,
        Err(e) => {
            set_errno(&e);
            -1
        }
    }
}

unsafe extern "C" fn push_cb(p: *mut std::ffi::c_void, buf: *const std::ffi::c_void, len: usize) -> isize {
    let t = &mut *(p as *mut Box<dyn Transport>);
    match t.write(std::slice::from_raw_parts(buf as *const u8, len)) {
        Ok(n) => n as isize,
        Err(e) => {
            set_errno(&e);
            -1
        }
    }
}

unsafe extern "C" fn pull_timeout_cb(p: *mut std::ffi::c_void, ms: c_uint) -> c_int {
    let t = &mut *(p as *mut Box<dyn Transport>);
    match t.wait_readable(ms) {
        Ok(true) => 1,
        Ok(false) => 0,
        Err(e) => {
            set_errno(&e);
            -1
        }
    }
}

/// A finished handshake: the session and its transport, as a byte stream.
pub struct TlsStream {
    // Field order: the session goes before the transport it reads.
    session: Session,
    io: Held,
    /// The socket's read/write timeout: GnuTLS also answers `E_AGAIN` after a
    /// post-handshake message (a TLS 1.3 ticket), which must be retried, so only an
    /// `E_AGAIN` after this long is a timeout. [`TlsStream::rearm`] sets it again
    /// with the socket's.
    timeout: std::cell::Cell<Duration>,
}

/// Whether an `E_AGAIN` that came `since` after the call began is the socket timeout.
fn timed_out(since: std::time::Instant, timeout: Duration) -> bool {
    since.elapsed() + Duration::from_millis(50) >= timeout
}

fn classify(a: &super::ffi::Api, s: Handle, rc: c_int) -> HandshakeError {
    match rc {
        E_AGAIN | E_TIMEDOUT => HandshakeError::Timeout,
        E_FATAL_ALERT_RECEIVED => {
            // SAFETY: a live session; the alert name is static.
            let alert = cstr(unsafe { (a.gnutls_alert_get_name)((a.gnutls_alert_get)(s)) });
            HandshakeError::Rejected(format!("received alert {alert}"))
        }
        E_UNSUPPORTED_VERSION_PACKET | E_UNEXPECTED_PACKET_LENGTH => HandshakeError::NotTls(strerror(rc)),
        E_PREMATURE_TERMINATION | E_PULL_ERROR | E_PUSH_ERROR => HandshakeError::Rejected(format!("connection closed: {}", strerror(rc))),
        _ => HandshakeError::Rejected(strerror(rc)),
    }
}

/// Runs a handshake over `io` (whose read/write timeouts bound every wait).
/// `resume` is a client's saved session (from [`TlsStream::session_data`]).
pub fn handshake_over(
    io: Io,
    server: bool,
    cfg: &Config,
    sni: Option<&str>,
    resume: Option<&[u8]>,
    timeout: Duration,
) -> Result<TlsStream, HandshakeError> {
    // GnuTLS keeps the handshake timeout overall; it never outlasts the run.
    let timeout = crate::deadline::run().cap(timeout).max(Duration::from_millis(1));
    let a = api().map_err(|e| HandshakeError::Io(e.0))?;
    let session = Session::new(server, cfg).map_err(|e| HandshakeError::Io(e.0))?;
    let h = session.h;
    let mut io = match io {
        Io::Socket(tcp) => Held::Socket(tcp),
        Io::Custom(t) => Held::Custom(Box::new(t)),
    };
    // SAFETY: a live session; the fd or the transport belongs to `io`, which the
    // stream keeps for as long as the session.
    unsafe {
        match &mut io {
            Held::Socket(tcp) => {
                let fd = tcp.as_raw_fd();
                (a.gnutls_transport_set_int2)(h, fd, fd);
            }
            Held::Custom(t) => {
                let p: *mut Box<dyn Transport> = &mut **t;
                (a.gnutls_transport_set_ptr)(h, p.cast());
                (a.gnutls_transport_set_push_function)(h, push_cb);
                (a.gnutls_transport_set_pull_function)(h, pull_cb);
                (a.gnutls_transport_set_pull_timeout_function)(h, pull_timeout_cb);
            }
        }
        (a.gnutls_handshake_set_timeout)(h, timeout.as_millis().clamp(1, u32::MAX as u128) as c_uint);
        if let (false, Some(name)) = (server, sni) {
            let rc = (a.gnutls_server_name_set)(h, GNUTLS_NAME_DNS, name.as_ptr().cast(), name.len());
            check(a, rc, "gnutls_server_name_set").map_err(|e| HandshakeError::Io(e.0))?;
        }
        if let (false, Some(d)) = (server, resume) {
            let rc = (a.gnutls_session_set_data)(h, d.as_ptr().cast(), d.len());
            check(a, rc, "gnutls_session_set_data").map_err(|e| HandshakeError::Io(e.0))?;
        }
    }
    let t0 = std::time::Instant::now();
    loop {
        // SAFETY: a live session with its transport set.
        let rc = unsafe { (a.gnutls_handshake)(h) };
        if rc >= 0 {
            return Ok(TlsStream {
                session,
                io,
                timeout: std::cell::Cell::new(timeout),
            });
        }
        if rc == E_AGAIN && !timed_out(t0, timeout) {
            continue;
        }
        // SAFETY: plain query.
        if rc == E_INTERRUPTED || (rc != E_AGAIN && unsafe { (a.gnutls_error_is_fatal)(rc) } == 0) {
            continue; // a signal, or a warning alert
        }
        return Err(classify(a, h, rc));
    }
}

fn io_error(rc: isize) -> std::io::Error {
    let rc = rc as c_int;
    match rc {
        E_AGAIN | E_TIMEDOUT => std::io::Error::new(std::io::ErrorKind::TimedOut, "GnuTLS: no data within the timeout"),
        E_PREMATURE_TERMINATION => std::io::Error::new(std::io::ErrorKind::UnexpectedEof, strerror(rc)),
        _ => std::io::Error::other(format!("GnuTLS: {}", strerror(rc))),
    }
}

impl TlsStream {
    fn api(&self) -> &'static super::ffi::Api {
        api().expect("a session exists, so GnuTLS is loaded")
    }

    /// `TLSv1.3`, as OpenSSL spells it, so both libraries' records line up.
    pub fn protocol(&self) -> String {
        let a = self.api();
        // SAFETY: plain queries on a live session.
        let name = cstr(unsafe { (a.gnutls_protocol_get_name)((a.gnutls_protocol_get_version)(self.session.h)) });
        match name.as_str() {
            "TLS1.0" => "TLSv1".to_string(),
            n if n.starts_with("TLS1.") => format!("TLSv{}", &n[3..]),
            n => n.to_string(),
        }
    }

    /// The negotiated suite, GnuTLS's canonical name.
    pub fn suite(&self) -> String {
        let a = self.api();
        // SAFETY: plain query on a live session; a static string.
        cstr(unsafe { (a.gnutls_ciphersuite_get)(self.session.h) })
    }

    /// The key-exchange group (`X25519`, `SECP256R1`, `FFDHE2048`), when there was one.
    pub fn group(&self) -> Option<String> {
        let a = self.api();
        // SAFETY: plain queries on a live session.
        let g = unsafe { (a.gnutls_group_get)(self.session.h) };
        (g != 0)
            .then(|| cstr(unsafe { (a.gnutls_group_get_name)(g) }))
            .filter(|s| !s.is_empty())
    }

    pub fn resumed(&self) -> bool {
        let a = self.api();
        // SAFETY: plain query on a live session.
        unsafe { (a.gnutls_session_is_resumed)(self.session.h) != 0 }
    }

    /// The session to resume with later (for TLS 1.3, read some data first so the
    /// server's ticket has arrived).
    pub fn session_data(&self) -> Result<Vec<u8>, GnutlsError> {
        let a = self.api();
        let mut n: usize = 0;
        // SAFETY: size query with a NULL buffer, then a fill of a buffer that size.
        unsafe {
            let rc = (a.gnutls_session_get_data)(self.session.h, ptr::null_mut(), &mut n);
            if rc < 0 && rc != -51 {
                check(a, rc, "gnutls_session_get_data")?;
            }
            let mut buf = vec![0u8; n];
            check(
                a,
                (a.gnutls_session_get_data)(self.session.h, buf.as_mut_ptr().cast(), &mut n),
                "gnutls_session_get_data",
            )?;
            buf.truncate(n);
            Ok(buf)
        }
    }

    /// Sets the socket's read and write timeouts to `timeout`, capped by what is
    /// left of the run (an error once it has passed), and the time after which an
    /// `E_AGAIN` is this stream's timeout: GnuTLS's own `recv`/`send` on the
    /// socket then give up within it, and a read or write returns `TimedOut`
    /// instead of retrying. For GnuTLS's own socket I/O (`Io::Socket`); a custom
    /// transport keeps its own timeouts (`Unsupported`).
    pub fn rearm(&self, timeout: Duration) -> std::io::Result<()> {
        let Held::Socket(tcp) = &self.io else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "a GnuTLS session over a custom transport keeps that transport's timeouts",
            ));
        };
        let t = crate::deadline::run().cap(timeout);
        if t.is_zero() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("stopped at {}", crate::deadline::describe()),
            ));
        }
        tcp.set_read_timeout(Some(t))?;
        tcp.set_write_timeout(Some(t))?;
        self.timeout.set(t);
        Ok(())
    }

    /// Sends close_notify (does not wait for the peer's).
    pub fn close(&mut self) {
        let a = self.api();
        // SAFETY: a live session; errors are irrelevant at close.
        let _ = unsafe { (a.gnutls_bye)(self.session.h, GNUTLS_SHUT_WR) };
        let _ = self.flush();
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let a = self.api();
        let t0 = std::time::Instant::now();
        loop {
            // SAFETY: `buf` is live and exclusive for its length.
            let rc = unsafe { (a.gnutls_record_recv)(self.session.h, buf.as_mut_ptr().cast(), buf.len()) };
            if rc >= 0 {
                return Ok(rc as usize);
            }
            if rc as c_int == E_INTERRUPTED || (rc as c_int == E_AGAIN && !timed_out(t0, self.timeout.get())) {
                continue;
            }
            // SAFETY: plain query.
            if rc as c_int != E_AGAIN && unsafe { (a.gnutls_error_is_fatal)(rc as c_int) } == 0 {
                continue; // a warning alert or a post-handshake message
            }
            return Err(io_error(rc));
        }
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let a = self.api();
        let t0 = std::time::Instant::now();
        loop {
            // SAFETY: `buf` is live for its length.
            let rc = unsafe { (a.gnutls_record_send)(self.session.h, buf.as_ptr().cast(), buf.len()) };
            if rc > 0 {
                return Ok(rc as usize);
            }
            if rc as c_int == E_INTERRUPTED || (rc as c_int == E_AGAIN && !timed_out(t0, self.timeout.get())) {
                continue;
            }
            return Err(io_error(rc));
        }
    }

    /// Sends what a gathering transport still holds.
    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.io {
            Held::Socket(_) => Ok(()),
            Held::Custom(t) => t.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::openssl::certs::{CertType, Identity};
    use std::net::TcpListener;

    #[test]
    fn gnutls_priority_errors_carry_the_position() {
        let e = Priority::new("NORMAL:-VERS-ALL:+VERS-TLS9.9").err().expect("a bad keyword");
        match e {
            PriorityError::Syntax { pos, rest, .. } => {
                assert_eq!(pos, 17);
                assert_eq!(rest, "+VERS-TLS9.9");
            }
            other => panic!("{other}"),
        }
        let p = Priority::new("NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:-KX-ALL:+ECDHE-RSA").unwrap();
        let s = p.suites();
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].code, [0xC0, 0x2F]);
        assert_eq!(
            (s[0].kx.as_str(), s[0].cipher.as_str(), s[0].mac.as_str()),
            ("ECDHE-RSA", "AES-128-GCM", "AEAD")
        );
        assert_eq!(p.protocols(), ["TLS1.2"]);
        assert!(all_suites().unwrap().len() > 30);
    }

    /// A real TLS 1.3 handshake, data both ways and resumption over a loopback socket.
    #[test]
    fn gnutls_sessions_talk_and_resume_over_tcp() {
        let id = Identity::generate(CertType::EcdsaP256).unwrap();
        let (cert, key) = (id.cert.to_pem().unwrap(), id.key.private_key_to_pem_pkcs8().unwrap());
        let prio = Arc::new(Priority::new("NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:-GROUP-ALL:+GROUP-X25519").unwrap());
        let server = Config {
            priority: prio.clone(),
            credentials: Arc::new(Credentials::server(&cert, &key).unwrap()),
            ticket_key: Some(TicketKey::generate().unwrap()),
            tickets: true,
        };
        let client = Config {
            priority: prio,
            credentials: Arc::new(Credentials::client().unwrap()),
            ticket_key: None,
            tickets: true,
        };
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let t = Duration::from_secs(5);
        let srv = std::thread::spawn(move || {
            for _ in 0..2 {
                let (tcp, _) = l.accept().unwrap();
                tcp.set_read_timeout(Some(t)).unwrap();
                let mut s = handshake_over(Io::Socket(tcp), true, &server, None, None, t).unwrap();
                let mut b = [0u8; 5];
                s.read_exact(&mut b).unwrap();
                s.write_all(&b.map(|x| x.to_ascii_uppercase())).unwrap();
                s.close();
            }
        });
        let mut saved = None;
        for round in 0..2 {
            let tcp = TcpStream::connect(addr).unwrap();
            tcp.set_read_timeout(Some(t)).unwrap();
            let mut s = handshake_over(Io::Socket(tcp), false, &client, Some("localhost"), saved.as_deref(), t).unwrap();
            assert_eq!(s.protocol(), "TLSv1.3");
            assert_eq!(s.suite(), "TLS_AES_128_GCM_SHA256");
            assert_eq!(s.group().as_deref(), Some("X25519"));
            s.write_all(b"hello").unwrap();
            let mut b = [0u8; 5];
            s.read_exact(&mut b).unwrap();
            assert_eq!(&b, b"HELLO");
            assert_eq!(s.resumed(), round == 1);
            saved = Some(s.session_data().unwrap());
            s.close();
        }
        srv.join().unwrap();
    }

    #[test]
    fn gnutls_handshake_with_nothing_in_common_is_a_refusal() {
        let id = Identity::generate(CertType::Rsa2048).unwrap();
        let (cert, key) = (id.cert.to_pem().unwrap(), id.key.private_key_to_pem_pkcs8().unwrap());
        let server = Config {
            priority: Arc::new(Priority::new("NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-256-GCM").unwrap()),
            credentials: Arc::new(Credentials::server(&cert, &key).unwrap()),
            ticket_key: None,
            tickets: false,
        };
        let client = Config {
            priority: Arc::new(Priority::new("NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM").unwrap()),
            credentials: Arc::new(Credentials::client().unwrap()),
            ticket_key: None,
            tickets: false,
        };
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let t = Duration::from_secs(5);
        let srv = std::thread::spawn(move || {
            let (tcp, _) = l.accept().unwrap();
            tcp.set_read_timeout(Some(t)).unwrap();
            handshake_over(Io::Socket(tcp), true, &server, None, None, t).err()
        });
        let tcp = TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(t)).unwrap();
        let e = handshake_over(Io::Socket(tcp), false, &client, None, None, t)
            .err()
            .expect("no common suite");
        assert!(matches!(e, HandshakeError::Rejected(_)), "{e:?}");
        assert!(srv.join().unwrap().is_some());
    }

    /// A read on a silent connection gives up within the timeout that `rearm`
    /// set (GnuTLS's own `recv` on the socket times out, the `E_AGAIN` is not
    /// retried past it), not the handshake's longer one.
    #[test]
    fn gnutls_rearm_bounds_a_read_from_a_silent_peer() {
        let id = Identity::generate(CertType::EcdsaP256).unwrap();
        let (cert, key) = (id.cert.to_pem().unwrap(), id.key.private_key_to_pem_pkcs8().unwrap());
        let prio = Arc::new(Priority::new("NORMAL:-VERS-ALL:+VERS-TLS1.3").unwrap());
        let server = Config {
            priority: prio.clone(),
            credentials: Arc::new(Credentials::server(&cert, &key).unwrap()),
            ticket_key: None,
            tickets: false,
        };
        let client = Config {
            priority: prio,
            credentials: Arc::new(Credentials::client().unwrap()),
            ticket_key: None,
            tickets: false,
        };
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let long = Duration::from_secs(8);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let srv = std::thread::spawn(move || {
            let (tcp, _) = l.accept().unwrap();
            tcp.set_read_timeout(Some(long)).unwrap();
            let _s = handshake_over(Io::Socket(tcp), true, &server, None, None, long).unwrap();
            // Silent, the connection open, until the client is done (bounded).
            let _ = done_rx.recv_timeout(Duration::from_secs(20));
        });
        let tcp = TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(long)).unwrap();
        let mut s = handshake_over(Io::Socket(tcp), false, &client, None, None, long).unwrap();
        s.rearm(Duration::from_millis(300)).unwrap();
        let t0 = std::time::Instant::now();
        let e = s.read(&mut [0u8; 16]).expect_err("the peer sends nothing");
        let took = t0.elapsed();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
        assert!(took < Duration::from_secs(3), "the read waited {took:?}, not the rearmed 300 ms");
        assert!(took >= Duration::from_millis(250), "{took:?}");
        done_tx.send(()).unwrap();
        srv.join().unwrap();
    }
}
