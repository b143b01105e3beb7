//! rustls as a [`TlsLibrary`]: a `CryptoProvider` (aws-lc-rs) cut down to a
//! [`Selection`]'s suites and groups, client and server configurations over it,
//! and handshakes through `conn::Stream`.

use super::conn::{Session, Stream};
use super::{all_groups, all_suites, group_name, suite_iana};
use crate::backend::openssl::certs::Identity;
use crate::backend::openssl::tls::{self as ssl, Coalesced, ConnectError, Protocol};
use crate::backend::tls::{ClientConfig, Connection, Refused, Resumption, Selection, ServerConfig, TlsLibrary, BULK_RECV, BULK_SEND};
use ::rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use ::rustls::crypto::{aws_lc_rs, CryptoProvider, WebPkiSupportedAlgorithms};
use ::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use ::rustls::{DigitallySignedStruct, SignatureScheme, SupportedProtocolVersion};
use anyhow::{anyhow, bail, Context, Result};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// rustls with its aws-lc-rs provider, built into this program.
pub struct Rustls;

/// rustls in the library registry (`backend::libraries`).
pub const ENTRY: crate::backend::tls::Entry = crate::backend::tls::Entry {
    name: "rustls",
    title: "rustls",
    about: "rustls 0.23 with its aws-lc-rs provider, built into cipherbench",
    built_in: true,
    native_text: None,
    version: || Ok(super::version().trim_start_matches("rustls ").to_string()),
    tls: || Ok(Arc::new(Rustls)),
    primitives: super::record::fetch,
};

/// Why rustls lacks a suite, by what the suite's name says.
fn why_not(iana: &str) -> &'static str {
    let u = iana.to_ascii_uppercase();
    let has = |w: &str| u.contains(w);
    if has("NULL") {
        "it has no unencrypted (NULL) suites"
    } else if has("EXPORT") {
        "it has no export suites"
    } else if has("ANON") {
        "it has no anonymous (unauthenticated) suites"
    } else if ["RC4", "DES", "IDEA", "SEED", "CAMELLIA", "ARIA", "SM4"].iter().any(|c| has(c)) {
        "its ciphers are AES-GCM and ChaCha20-Poly1305 only"
    } else if has("CCM") {
        "its aws-lc-rs provider has no CCM suites"
    } else if has("CBC") {
        "it has no CBC (MAC-then-encrypt) suites: AEAD only, TLS 1.2 and 1.3 only (no TLS 1.0 or 1.1)"
    } else if has("PSK") || has("SRP") {
        "it has no PSK or SRP key exchange"
    } else if u.starts_with("TLS_DHE_") || u.starts_with("TLS_DH_") {
        "it has no finite-field (DHE) key exchange: ECDHE only"
    } else if u.starts_with("TLS_RSA_") {
        "it has no RSA key exchange (no forward secrecy): ECDHE only"
    } else if u.starts_with("TLS_ECDH_") {
        "it has no static ECDH key exchange: ECDHE only"
    } else {
        "it implements TLS 1.3's AES-GCM and ChaCha20-Poly1305 suites and TLS 1.2's ECDHE ones with them only"
    }
}

/// The provider's suite of this IANA name.
fn suite_by_iana(iana: &str) -> Option<::rustls::SupportedCipherSuite> {
    all_suites()
        .iter()
        .find(|c| suite_iana(c.suite()).eq_ignore_ascii_case(iana))
        .copied()
}

/// The provider's group of this name (any of its names, [`crate::aliases::same`]).
fn group_by_name(name: &str) -> Option<&'static dyn ::rustls::crypto::SupportedKxGroup> {
    all_groups()
        .iter()
        .find(|g| crate::aliases::same(&group_name(g.name()), name))
        .copied()
}

/// The provider and protocol versions that offer exactly a selection: its one
/// protocol (TLS 1.2 or 1.3), its suites and its groups, in order. Empty fields
/// (and `native` text, which is GnuTLS's) mean rustls's defaults.
pub fn provider(s: &Selection) -> Result<(CryptoProvider, Vec<&'static SupportedProtocolVersion>)> {
    use ::rustls::version::{TLS12, TLS13};
    let base = aws_lc_rs::default_provider();
    if s.native.is_some() {
        return Ok((base, vec![&TLS13, &TLS12]));
    }
    let mut versions: Vec<&'static SupportedProtocolVersion> = match s.protocol {
        None => vec![&TLS13, &TLS12],
        Some(Protocol::Tls13) => vec![&TLS13],
        Some(Protocol::Tls12) => vec![&TLS12],
        Some(p) => bail!("{} speaks TLS 1.2 and 1.3 only, not {}", super::version(), p.label()),
    };
    let suites = if s.suites.is_empty() {
        base.cipher_suites.clone()
    } else {
        s.suites
            .iter()
            .map(|x| {
                suite_by_iana(&x.iana).ok_or_else(|| anyhow!("{} does not implement {}: {}", super::version(), x.iana, why_not(&x.iana)))
            })
            .collect::<Result<Vec<_>>>()?
    };
    let same = |a: &SupportedProtocolVersion, b: &SupportedProtocolVersion| a.version == b.version;
    let suites: Vec<_> = suites
        .into_iter()
        .filter(|c| versions.iter().any(|v| same(v, c.version())))
        .collect();
    if suites.is_empty() {
        let names: Vec<&str> = s.suites.iter().map(|x| x.iana.as_str()).collect();
        bail!("none of the suites {} runs over the protocol asked for", names.join(", "));
    }
    versions.retain(|v| suites.iter().any(|c| same(v, c.version())));
    let kx_groups = if s.groups.is_empty() {
        base.kx_groups.clone()
    } else {
        s.groups
            .iter()
            .map(|g| group_by_name(g).ok_or_else(|| anyhow!("{} has no key-exchange group {g}", super::version())))
            .collect::<Result<Vec<_>>>()?
    };
    Ok((
        CryptoProvider {
            cipher_suites: suites,
            kx_groups,
            ..base
        },
        versions,
    ))
}

/// The client's certificate check on loopback. The servers measured here are
/// this program's own, with self-signed certificates generated at start, and a
/// remote server is measured, not trusted: the chain is accepted without a
/// trust anchor (as the OpenSSL and GnuTLS clients here do, `SSL_VERIFY_NONE`).
/// The handshake's signatures are still verified, with the provider's own
/// algorithms, so the client does the public-key work a real client does.
#[derive(Debug)]
struct LoopbackVerifier(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for LoopbackVerifier {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, ::rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, ::rustls::Error> {
        ::rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, ::rustls::Error> {
        ::rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

impl TlsLibrary for Rustls {
    fn name(&self) -> &'static str {
        "rustls"
    }

    fn version(&self) -> String {
        super::version()
    }

    fn lacks(&self, iana: &str) -> Option<String> {
        suite_by_iana(iana)
            .is_none()
            .then(|| format!("{} does not implement {iana}: {}", self.version(), why_not(iana)))
    }

    fn suites(&self) -> Vec<String> {
        all_suites().iter().map(|c| suite_iana(c.suite())).collect()
    }

    fn groups(&self) -> Vec<String> {
        all_groups().iter().map(|g| group_name(g.name())).collect()
    }

    fn protocols(&self) -> Vec<Protocol> {
        vec![Protocol::Tls12, Protocol::Tls13]
    }

    fn client(&self, s: &Selection, resumption: bool) -> Result<Arc<dyn ClientConfig>> {
        let (provider, versions) = provider(s)?;
        let verifier = LoopbackVerifier(provider.signature_verification_algorithms);
        let mut cfg = ::rustls::ClientConfig::builder_with_provider(Arc::new(provider))
            .with_protocol_versions(&versions)
            .context("rustls refuses the client configuration")?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        // Sessions live in each connection's own store (see `Client::connect`).
        cfg.resumption = ::rustls::client::Resumption::disabled();
        Ok(Arc::new(Client {
            config: Arc::new(cfg),
            resumption,
        }))
    }

    fn server(&self, s: &Selection, id: &Identity) -> Result<Arc<dyn ServerConfig>> {
        let (provider, versions) = provider(s)?;
        let certs = vec![CertificateDer::from(id.cert.to_der()?)];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(id.key.private_key_to_pkcs8()?));
        let mut cfg = ::rustls::ServerConfig::builder_with_provider(Arc::new(provider))
            .with_protocol_versions(&versions)
            .context("rustls refuses the server configuration")?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .context("rustls does not take the certificate and key")?;
        // TLS 1.2: session IDs from this cache, or tickets; TLS 1.3: tickets.
        cfg.session_storage = ::rustls::server::ServerSessionMemoryCache::new(1024);
        cfg.ticketer = aws_lc_rs::Ticketer::new().context("rustls's ticket key")?;
        Ok(Arc::new(Server(Arc::new(cfg))))
    }

    fn lacks_streams(&self) -> Option<String> {
        None
    }
}

/// A rustls client configuration.
pub struct Client {
    /// Without a session store: each connection that may resume gets its own.
    config: Arc<::rustls::ClientConfig>,
    resumption: bool,
}

impl ClientConfig for Client {
    fn connect(
        &self,
        addr: SocketAddr,
        sni: Option<&str>,
        timeout: Duration,
        resume: Option<&Resumption>,
        bulk: bool,
    ) -> Result<Box<dyn Connection>, ConnectError> {
        // No SNI: the address names the server (rustls sends no SNI for one).
        let name: ServerName<'static> = match sni {
            Some(n) => ServerName::try_from(n.to_string())
                .map_err(|e| ConnectError::Tcp(format!("rustls cannot send the server name '{n}': {e}")))?,
            None => ServerName::IpAddress(addr.ip().into()),
        };
        // A session given: its store (and a configuration using it, made once).
        // Resumption on, no session given: a fresh store, so this handshake is a
        // full one and the session it leaves is its own.
        let offered = resume.and_then(|r| r.clone().downcast::<Session>().ok());
        let session = match offered {
            Some(s) if Arc::ptr_eq(&s.base, &self.config) => Some(s),
            Some(s) => Some(Arc::new(Session::with_store(&self.config, s.store.clone()))),
            None if self.resumption => Some(Arc::new(Session::fresh(&self.config))),
            None => None,
        };
        let config = session.as_ref().map_or_else(|| self.config.clone(), |s| s.config.clone());
        let conn = ::rustls::ClientConnection::new(config, name.clone()).map_err(|e| ConnectError::Tcp(e.to_string()))?;
        let tcp = ssl::tcp(addr, timeout)?;
        let io = if bulk {
            Coalesced::new(tcp, BULK_SEND, BULK_RECV)
        } else {
            Coalesced::new(tcp, 0, 0)
        };
        let s = Stream::client(conn, io, timeout, bulk, session.map(|s| (s, name)))?;
        Ok(Box::new(s))
    }
}

/// A rustls server configuration.
pub struct Server(Arc<::rustls::ServerConfig>);

impl ServerConfig for Server {
    fn accept(&self, tcp: TcpStream, timeout: Duration, bulk: bool) -> Result<Box<dyn Connection>, Refused> {
        let refused = |why: String| Refused { why, gave_up: false };
        let _ = tcp.set_nodelay(true);
        tcp.set_read_timeout(Some(timeout)).map_err(|e| refused(e.to_string()))?;
        tcp.set_write_timeout(Some(timeout)).map_err(|e| refused(e.to_string()))?;
        let conn = ::rustls::ServerConnection::new(self.0.clone()).map_err(|e| refused(e.to_string()))?;
        let io = if bulk {
            Coalesced::new(tcp, BULK_SEND, BULK_RECV)
        } else {
            Coalesced::new(tcp, 0, 0)
        };
        Ok(Box::new(Stream::server(conn, io, timeout, bulk)?))
    }
}
