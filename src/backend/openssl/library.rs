//! The system libssl as a [`TlsLibrary`]: contexts from a [`Selection`], client
//! handshakes through `tls::connect` (plain sockets) or `tls::handshake` over
//! the bulk transport (`Coalesced`), server handshakes on accepted sockets.

use super::certs::Identity;
use super::tls::{self as ssl, Coalesced, ConnectError, Settings};
use crate::backend::tls::{
    ClientConfig, Connection, Negotiated, Refused, Resumption, Selection, ServerConfig, TlsLibrary, BULK_RECV, BULK_SEND,
};
use anyhow::Result;
use openssl::ssl::{Ssl, SslCipher, SslContext, SslSession, SslStream};
use openssl::stack::StackRef;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// The system libssl.
pub struct Openssl;

/// The system OpenSSL in the library registry (`backend::libraries`).
pub const ENTRY: crate::backend::tls::Entry = crate::backend::tls::Entry {
    name: "openssl",
    title: "OpenSSL",
    about: "The system OpenSSL (libssl, libcrypto), through the `openssl` crate",
    built_in: false,
    native_text: None,
    version: || Ok(super::runtime_version()),
    tls: || Ok(Arc::new(Openssl)),
    primitives: super::primitives::fetch,
};

/// Every suite this libssl implements, whatever its security level, by its
/// two-byte code (`0xC0,0x2F`) with its IANA name.
pub fn suite_codes() -> Vec<(String, String)> {
    use openssl::ssl::{SslContextBuilder, SslMethod};
    let build = || -> Result<SslContext> {
        let mut b = SslContextBuilder::new(SslMethod::tls())?;
        b.set_cipher_list("ALL:COMPLEMENTOFALL:@SECLEVEL=0")?;
        // Every TLS 1.3 suite, CCM ones included (not offered by default).
        b.set_ciphersuites(
            "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256",
        )?;
        Ok(b.build())
    };
    build().map(|ctx| context_suites(&ctx)).unwrap_or_default()
}

/// A context's suites: code (`0xC0,0x2F`) and IANA name.
fn context_suites(ctx: &SslContext) -> Vec<(String, String)> {
    use foreign_types::ForeignTypeRef;
    // SAFETY: the context's own cipher stack, read while the context lives.
    unsafe {
        let sk = SSL_CTX_get_ciphers(openssl::ssl::SslContextRef::as_ptr(ctx));
        if sk.is_null() {
            return Vec::new();
        }
        StackRef::<SslCipher>::from_ptr(sk)
            .iter()
            .filter_map(|c| {
                let [a, b] = c.protocol_id();
                Some((format!("0x{a:02X},0x{b:02X}"), c.standard_name()?.to_string()))
            })
            .collect()
    }
}

/// libssl's settings for a selection: one protocol, its suites (TLS 1.3 by IANA
/// name, older ones by OpenSSL name), its groups. `native` text is GnuTLS's, so
/// libssl offers its default then.
pub fn settings(s: &Selection) -> Settings {
    if s.native.is_some() {
        return Settings::default();
    }
    let mut out = Settings {
        min: s.protocol,
        max: s.protocol,
        ..Default::default()
    };
    let tls13: Vec<&str> = s.suites.iter().filter(|x| x.tls13).map(|x| x.iana.as_str()).collect();
    let older: Vec<&str> = s.suites.iter().filter(|x| !x.tls13).map(|x| x.openssl.as_str()).collect();
    if !tls13.is_empty() {
        out.ciphersuites = Some(tls13.join(":"));
    }
    if !older.is_empty() {
        out.cipher_list = Some(older.join(":"));
    }
    if !s.groups.is_empty() {
        out.groups = Some(s.groups.join(":"));
    }
    out
}

extern "C" {
    // libssl; not bound by openssl-sys.
    fn SSL_CTX_get_ciphers(ctx: *const openssl_sys::SSL_CTX) -> *mut openssl_sys::stack_st_SSL_CIPHER;
}

impl TlsLibrary for Openssl {
    fn name(&self) -> &'static str {
        "openssl"
    }

    fn version(&self) -> String {
        super::runtime_version()
    }

    fn lacks(&self, iana: &str) -> Option<String> {
        (!self.suites().iter().any(|s| s == iana)).then(|| format!("{} does not implement {iana}", self.version()))
    }

    fn suites(&self) -> Vec<String> {
        ssl::client_context(&Settings::default(), false)
            .map(|ctx| context_suites(&ctx).into_iter().map(|(_, iana)| iana).collect())
            .unwrap_or_default()
    }

    fn groups(&self) -> Vec<String> {
        ssl::supported_groups(&ssl::PROBE_GROUPS).into_iter().map(str::to_string).collect()
    }

    fn client(&self, s: &Selection, resumption: bool) -> Result<Arc<dyn ClientConfig>> {
        Ok(Arc::new(Client(ssl::client_context(&settings(s), resumption)?)))
    }

    fn server(&self, s: &Selection, id: &Identity) -> Result<Arc<dyn ServerConfig>> {
        Ok(Arc::new(Server(ssl::server_context(&settings(s), id)?)))
    }

    fn lacks_streams(&self) -> Option<String> {
        None
    }
}

/// A libssl client context.
pub struct Client(pub SslContext);

/// A libssl server context.
pub struct Server(pub SslContext);

impl ClientConfig for Client {
    fn connect(
        &self,
        addr: SocketAddr,
        sni: Option<&str>,
        timeout: Duration,
        resume: Option<&Resumption>,
        bulk: bool,
    ) -> Result<Box<dyn Connection>, ConnectError> {
        let session = resume.and_then(|r| r.downcast_ref::<SslSession>());
        if bulk {
            let tcp = Coalesced::new(ssl::tcp(addr, timeout)?, BULK_SEND, BULK_RECV);
            Ok(Box::new(ssl::handshake(&self.0, tcp, sni, session.map(|s| &**s), true)?))
        } else {
            Ok(Box::new(ssl::connect(&self.0, addr, sni, timeout, session.map(|s| &**s))?))
        }
    }
}

impl ServerConfig for Server {
    fn accept(&self, tcp: TcpStream, timeout: Duration, bulk: bool) -> Result<Box<dyn Connection>, Refused> {
        let refused = |why: String| Refused { why, gave_up: false };
        let _ = tcp.set_nodelay(true);
        tcp.set_read_timeout(Some(timeout)).map_err(|e| refused(e.to_string()))?;
        tcp.set_write_timeout(Some(timeout)).map_err(|e| refused(e.to_string()))?;
        let mut s = Ssl::new(&self.0).map_err(|e| refused(e.to_string()))?;
        let tcp = if bulk {
            ssl::plain_reads(&mut s);
            Coalesced::new(tcp, BULK_SEND, BULK_RECV)
        } else {
            Coalesced::new(tcp, 0, 0)
        };
        match s.accept(tcp) {
            Ok(s) => Ok(Box::new(s)),
            // A client that gave up (or was only waking the server).
            Err(openssl::ssl::HandshakeError::Failure(m)) if m.error().ssl_error().is_none() => Err(Refused {
                why: openssl::ssl::HandshakeError::Failure(m).to_string(),
                gave_up: true,
            }),
            Err(e) => Err(refused(e.to_string())),
        }
    }
}

/// What both kinds of libssl stream answer alike.
fn negotiated<S>(s: &SslStream<S>) -> Negotiated {
    let (v, suite) = ssl::negotiated(s);
    (v, suite, ssl::negotiated_group(s))
}

fn session<S>(s: &SslStream<S>) -> Option<Resumption> {
    s.ssl().session().map(|x| Arc::new(x.to_owned()) as Resumption)
}

impl Connection for SslStream<TcpStream> {
    fn negotiated(&self) -> Negotiated {
        negotiated(self)
    }
    fn resumed(&self) -> bool {
        self.ssl().session_reused()
    }
    fn session(&self) -> Option<Resumption> {
        session(self)
    }
    fn await_ticket(&mut self, timeout: Duration) -> bool {
        ssl::await_ticket(self, timeout)
    }
    fn rearm(&self, timeout: Duration) -> std::io::Result<()> {
        ssl::rearm(self.get_ref(), timeout)
    }
    fn close(&mut self) {
        let _ = self.shutdown();
    }
}

impl Connection for SslStream<Coalesced> {
    fn negotiated(&self) -> Negotiated {
        negotiated(self)
    }
    fn resumed(&self) -> bool {
        self.ssl().session_reused()
    }
    fn session(&self) -> Option<Resumption> {
        session(self)
    }
    fn await_ticket(&mut self, _timeout: Duration) -> bool {
        ssl::resumable(self)
    }
    fn io_calls(&self) -> Option<(u64, u64)> {
        Some((self.get_ref().sends, self.get_ref().recvs))
    }
    fn rearm(&self, timeout: Duration) -> std::io::Result<()> {
        ssl::rearm(self.get_ref().tcp(), timeout)
    }
    fn close(&mut self) {
        let _ = self.shutdown();
    }
}
