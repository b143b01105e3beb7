//! One interface for a TLS library. Each library (backend/openssl/, backend/gnutls/)
//! implements it; the loopback, cross-library and remote probes of
//! `measure::tls` are written against it, so adding a library is one folder here
//! plus one line where libraries are listed (`measure::tls::libraries`).
//!
//! - [`TlsLibrary`]: name, version, what it supports, and client and server
//!   configurations made from a [`Selection`] (suites, groups, protocol) and, for
//!   a server, a generated certificate.
//! - [`ClientConfig`] / [`ServerConfig`]: a handshake over a TCP connection, within
//!   the timeouts and the run's deadline every socket keeps.
//! - [`Connection`]: an established connection: application data (`Read`/`Write`),
//!   what was negotiated, session resumption.
//! - [`Bounded`]: a client connection as a byte stream for a protocol of the
//!   caller's own (`--http-get`'s HTTP/1.1), every read and write keeping a
//!   timeout and the run's deadline ([`ClientConfig::stream`]), from a library
//!   that offers it ([`TlsLibrary::lacks_streams`]).
//! - [`TlsLibrary::native_suites`]: the library's own configuration text (GnuTLS's
//!   priority string, `--priority`) checked and split into one text per suite,
//!   for a library that takes such text.
//! - `backend::record::RecordCipher`: a record sealed and opened as the library
//!   does it in TLS (timed by the primitive probes).
//!
//! Dispatch is once per handshake and once per read or write of application data
//! (a record batch), never per byte.

use crate::backend::openssl::certs::Identity;
use anyhow::Result;
use std::any::Any;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

pub use crate::backend::openssl::tls::{ConnectError, Protocol};

/// Protocol (`TLSv1.3`), IANA suite and canonical group (when the library tells).
pub type Negotiated = (String, String, Option<String>);

/// A client's saved session, for resumption (its library's own type inside).
pub type Resumption = Arc<dyn Any + Send + Sync>;

/// Bulk transport: records gathered into `send(2)` calls of up to this many bytes.
pub const BULK_SEND: usize = 256 << 10;
/// Bulk transport: reads with `recv(2)` calls of up to this many bytes.
pub const BULK_RECV: usize = 64 << 10;

/// A suite a [`Selection`] offers: its IANA name, with OpenSSL's (libraries name
/// them differently). Not `model::SuiteName`, the names a run stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectedSuite {
    pub iana: String,
    pub openssl: String,
    pub tls13: bool,
}

/// What one end offers, in the program's own vocabulary; each library translates
/// it. Empty fields mean the library's permissive default.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// One protocol only (`None`: any).
    pub protocol: Option<Protocol>,
    /// Suites, in order of preference.
    pub suites: Vec<SelectedSuite>,
    /// Groups, canonically spelled (`X25519`, `P-256`, `ffdhe2048`), in order.
    pub groups: Vec<String>,
    /// The library's own configuration text (GnuTLS: a priority string), which
    /// replaces everything above for a library that has such text; a library
    /// without it offers its default.
    pub native: Option<String>,
}

impl Selection {
    /// One protocol only, everything else the library's default.
    pub fn only(p: Protocol) -> Selection {
        Selection {
            protocol: Some(p),
            ..Default::default()
        }
    }
}

/// One suite that a library's own configuration text enables
/// ([`TlsLibrary::native_suites`]).
#[derive(Debug, Clone)]
pub struct NativeSuite {
    /// Its IANA name.
    pub iana: String,
    /// Its protocol family: TLS 1.3, or TLS 1.2 for the older suites.
    pub protocol: Protocol,
    /// The text that offers this suite alone, or why the library cannot make one.
    pub alone: std::result::Result<String, String>,
}

/// What a library's own configuration text resolves to, as the library lists it
/// ([`TlsLibrary::native_listing`]; `list tls --lib gnutls --priority X`, as
/// `gnutls-cli --priority X -l` shows it).
#[derive(Debug, Clone)]
pub struct NativeListing {
    /// The text listed: the one given, or the library's default.
    pub text: String,
    /// What the text is called in a heading and as a JSON key (`priority`).
    pub text_is: &'static str,
    /// The library's bare version (`3.7.9`).
    pub version: String,
    pub suites: Vec<ListedSuite>,
    pub protocols: Vec<String>,
    pub groups: Vec<String>,
    pub signatures: Vec<String>,
}

/// One suite of a [`NativeListing`], with the library's own words for it.
#[derive(Debug, Clone)]
pub struct ListedSuite {
    /// The two code bytes, as `0xC0,0x2F`.
    pub code: String,
    pub iana: String,
    /// The library's own name for it.
    pub name: String,
    /// The oldest protocol it runs on, as the library says it (`TLS1.2`).
    pub min_protocol: String,
    /// TLS 1.3 or TLS 1.2 (for every older suite).
    pub protocol: Protocol,
    /// Key exchange, cipher and MAC, as the library names them (empty: any).
    pub kx: String,
    pub cipher: String,
    pub mac: String,
}

/// A server's handshake that did not complete.
#[derive(Debug, Clone)]
pub struct Refused {
    pub why: String,
    /// The client went away (or only woke the server): not the server's failure.
    pub gave_up: bool,
}

/// What a library is and what it can do.
pub struct Entry {
    /// The `--lib` name, as results carry it.
    pub name: &'static str,
    /// How people write its name (`GnuTLS`), for reports and fleet classes.
    pub title: &'static str,
    /// One line for `--help`.
    pub about: &'static str,
    /// Built into cipherbench (its version is cipherbench's, not the machine's):
    /// a report names it only where the run measured it, and it does not set a
    /// fleet host's class.
    pub built_in: bool,
    /// What its own configuration text is, when it takes one in place of suites
    /// and groups (GnuTLS: a priority string, `--priority`).
    pub native_text: Option<&'static str>,
    /// Its version for the run's record (`run.libraries`), as the library
    /// reports it; an error when it cannot be loaded here.
    pub version: fn() -> Result<String>,
    /// The library as a TLS implementation (loaded on first use).
    pub tls: fn() -> Result<Arc<dyn TlsLibrary>>,
    /// Whether it can run a catalogue primitive here, and why not.
    pub primitives: fn(&crate::catalog::Primitive) -> crate::backend::primitives::Availability,
}

/// A TLS library.
pub trait TlsLibrary: Send + Sync {
    /// `openssl`, `gnutls`: the name results carry.
    fn name(&self) -> &'static str;
    /// The version running (`OpenSSL 3.0.13 30 Jan 2024`, `3.8.3`).
    fn version(&self) -> String;
    /// Why the library cannot run a suite, when it cannot (asked before a
    /// configuration is made, so a missing suite is "unsupported", not a failure).
    fn lacks(&self, iana: &str) -> Option<String>;
    /// IANA names of every suite the library implements.
    fn suites(&self) -> Vec<String>;
    /// The key-exchange groups it can offer, canonically spelled.
    fn groups(&self) -> Vec<String>;
    /// The protocol versions it can speak (asked before a configuration is made,
    /// so a missing version is "not offered", not a server's refusal).
    fn protocols(&self) -> Vec<Protocol> {
        Protocol::ALL.to_vec()
    }
    fn client(&self, s: &Selection, resumption: bool) -> Result<Arc<dyn ClientConfig>>;
    fn server(&self, s: &Selection, id: &Identity) -> Result<Arc<dyn ServerConfig>>;
    /// Its own configuration text (what [`Entry::native_text`] names: GnuTLS's
    /// priority string), checked, as the suites it enables in its order, each
    /// with the text that offers that suite alone: what `--connect --priority`
    /// walks, one handshake per suite. A text the library rejects, or one that
    /// enables no suite, is a usage error. `None`: the library takes no such text.
    fn native_suites(&self, _text: &str) -> Option<Result<Vec<NativeSuite>>> {
        None
    }
    /// What its own configuration text (`None`: its default one) resolves to,
    /// as the library lists it, for `list tls`. A text it rejects is a usage
    /// error; one that enables no suite is listed so. `None`: it takes no text.
    fn native_listing(&self, _text: Option<&str>) -> Option<Result<NativeListing>> {
        None
    }
    /// Why its clients give no [`Bounded`] streams ([`ClientConfig::stream`]: a
    /// protocol of the caller's own, `--http-get`), when they do not. Asked
    /// before a run, so that asking for them is a usage error.
    fn lacks_streams(&self) -> Option<String>;
}

/// A client configuration.
pub trait ClientConfig: Send + Sync {
    /// Connects to `addr` and completes a handshake within `timeout` (and the run's
    /// deadline), resuming `resume` when given. With `bulk`, the bulk transport
    /// ([`BULK_SEND`], [`BULK_RECV`]); else plain socket I/O.
    fn connect(
        &self,
        addr: SocketAddr,
        sni: Option<&str>,
        timeout: Duration,
        resume: Option<&Resumption>,
        bulk: bool,
    ) -> Result<Box<dyn Connection>, ConnectError>;

    /// A connection (plain socket I/O, no resumption, within `timeout` and the
    /// run's deadline like [`connect`](ClientConfig::connect)) as a byte stream
    /// for a protocol of the caller's own: its every read and write keeps
    /// `timeout` and the run's deadline ([`Bounded`]). For a library whose
    /// connections can ([`TlsLibrary::lacks_streams`]).
    fn stream(&self, addr: SocketAddr, sni: Option<&str>, timeout: Duration) -> Result<Bounded, ConnectError> {
        let conn = self.connect(addr, sni, timeout, None, false)?;
        Ok(Bounded { conn, timeout })
    }
}

/// A server configuration.
pub trait ServerConfig: Send + Sync {
    /// Completes a server handshake on an accepted socket (read and write
    /// timeouts `timeout`).
    fn accept(&self, tcp: TcpStream, timeout: Duration, bulk: bool) -> Result<Box<dyn Connection>, Refused>;
}

/// An established connection; `Read`/`Write` carry application data.
pub trait Connection: Read + Write + Send {
    fn negotiated(&self) -> Negotiated;
    /// The handshake resumed a session.
    fn resumed(&self) -> bool;
    /// The session to offer next time.
    fn session(&self) -> Option<Resumption>;
    /// Waits (up to `timeout`) for a session ticket a TLS 1.3 server sends after
    /// the handshake; true when there is a session to resume.
    fn await_ticket(&mut self, timeout: Duration) -> bool;
    /// `send(2)` and `recv(2)` calls that moved data, when the transport counts them.
    #[cfg_attr(not(test), allow(dead_code))] // read by the transport's tests
    fn io_calls(&self) -> Option<(u64, u64)> {
        None
    }
    /// Sets the socket's read and write timeouts to `timeout` again, capped by
    /// what is left of the run (an error once it has passed): what a [`Bounded`]
    /// stream does before each read and write. A library whose connections
    /// cannot says so in [`TlsLibrary::lacks_streams`].
    fn rearm(&self, _timeout: Duration) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "this library's connections keep no timeout per read",
        ))
    }
    /// Sends close_notify (best effort).
    fn close(&mut self);
}

/// A client connection whose every read and write first sets its socket's
/// timeouts again ([`Connection::rearm`]: `timeout`, capped by what is left of
/// the run), so that a server dripping bytes cannot hold the run: the stream of
/// [`ClientConfig::stream`], for a protocol of the caller's own.
pub struct Bounded {
    conn: Box<dyn Connection>,
    timeout: Duration,
}

impl Bounded {
    /// The connection underneath: what it negotiated.
    pub fn connection(&self) -> &dyn Connection {
        &*self.conn
    }
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.conn.rearm(self.timeout)?;
        self.conn.read(buf)
    }
}

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.conn.rearm(self.timeout)?;
        self.conn.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.conn.flush()
    }
}
