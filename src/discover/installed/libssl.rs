//! The installed libssl's own defaults, asked by real handshakes rather than
//! modelled: which groups a server with nothing configured accepts (what nginx's
//! `ssl_ecdh_curve auto` gives), and what a client with nothing configured (the
//! openssl crate's defaults, i.e. libssl's own and `openssl.cnf`'s) negotiates with
//! a running server (`check`'s "now").

use crate::backend::openssl::certs::{CertType, Identity};
use crate::backend::openssl::tls::negotiated_group;
use openssl::ssl::{Ssl, SslContext, SslMethod, SslVerifyMode, SslVersion};
use serde::Serialize;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// Groups not asked but counted as in the default when libssl has them: one
/// ffdhe8192 handshake costs over half a second. Counting them only makes the
/// "default already does this" note rarer (the policy must accept them too).
const ASSUMED: &[&str] = &["ffdhe4096", "ffdhe6144", "ffdhe8192"];

/// How long one probe handshake may take (both ends are in this process).
const PROBE: Duration = Duration::from_secs(5);

/// The groups this libssl's default server accepts (nothing configured: its own
/// default list, `openssl.cnf`'s `Groups` included), each asked by a TLS 1.3
/// handshake over a socket pair with a client that offers that group alone.
/// ffdhe4096 and larger are not asked ([`ASSUMED`]). Canonical names
/// (`X25519MLKEM768`, `X25519`, `P-256`, `ffdhe2048`; others as libssl spells
/// them), in the order of [`crate::discover::openssl::tls_groups`]; `None` when the probe
/// itself cannot run (no certificate, no socket pair) or accepts nothing.
pub fn default_server_groups(groups: &[String]) -> Option<Vec<String>> {
    let id = Identity::generate(CertType::EcdsaP256).ok()?;
    let mut b = SslContext::builder(SslMethod::tls_server()).ok()?;
    b.set_certificate(&id.cert).ok()?;
    b.set_private_key(&id.key).ok()?;
    let server = b.build();
    // One handshake per group (a name without a canonical spelling as itself), all
    // at once: the whole probe costs about one ffdhe8192 key share.
    let mut asked: Vec<(String, &str)> = Vec::new();
    for name in groups {
        let c = crate::aliases::group_spelling(name).map_or_else(|| name.clone(), str::to_string);
        if !asked.iter().any(|(x, _)| *x == c) {
            asked.push((c, name.as_str()));
        }
    }
    let answers: Vec<Option<bool>> = std::thread::scope(|s| {
        let probes: Vec<_> = asked
            .iter()
            .map(|(c, n)| {
                s.spawn(|| {
                    if ASSUMED.contains(&c.as_str()) {
                        Some(true)
                    } else {
                        accepts(&server, n)
                    }
                })
            })
            .collect();
        probes.into_iter().map(|p| p.join().unwrap_or(None)).collect()
    });
    let mut out = Vec::new();
    for ((c, _), a) in asked.into_iter().zip(answers) {
        if a? {
            out.push(c);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Whether `server` completes a TLS 1.3 handshake with a client offering `group`
/// alone; `None` when the client cannot even be set up.
fn accepts(server: &SslContext, group: &str) -> Option<bool> {
    let mut b = SslContext::builder(SslMethod::tls_client()).ok()?;
    b.set_verify(SslVerifyMode::NONE);
    b.set_min_proto_version(Some(SslVersion::TLS1_3)).ok()?;
    b.set_groups_list(group).ok()?;
    let client = b.build();
    let (a, z) = UnixStream::pair().ok()?;
    for s in [&a, &z] {
        s.set_read_timeout(Some(PROBE)).ok()?;
        s.set_write_timeout(Some(PROBE)).ok()?;
    }
    let ssl = Ssl::new(server).ok()?;
    let end = std::thread::spawn(move || ssl.accept(z).is_ok());
    let ok = Ssl::new(&client).ok()?.connect(a).is_ok();
    // The client's stream is dropped with its result: the server's end sees EOF.
    let served = end.join().unwrap_or(false);
    Some(ok && served)
}

/// What a real handshake negotiated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Handshake {
    /// `TLSv1.3`, `TLSv1.2` ...
    pub version: String,
    /// The suite's IANA name (`TLS_AES_256_GCM_SHA384`).
    pub suite: String,
    /// OpenSSL's name for it.
    pub openssl_name: String,
    /// The key-exchange group, canonically spelled, when libssl tells it.
    pub group: Option<String>,
}

/// A TLS handshake with `addr` by a client with nothing configured (the installed
/// libssl's default client: its default groups and key shares, suites and
/// versions; `openssl.cnf` applies). The certificate is not verified: this asks
/// what is negotiated, it does not authenticate. `server_name` is sent as SNI.
/// Only an address of this machine is connected to.
pub fn default_client_handshake(address: &str, server_name: Option<&str>, timeout: Duration) -> Result<Handshake, String> {
    let addr: SocketAddr = address
        .to_socket_addrs()
        .map_err(|e| format!("{address}: {e}"))?
        .next()
        .ok_or_else(|| format!("{address}: no address"))?;
    // A server's own configuration names addresses of this machine: anything else
    // (a hostile or foreign file) is not connected to.
    if !addr.ip().is_loopback() && std::net::UdpSocket::bind((addr.ip(), 0)).is_err() {
        return Err(format!("{addr} is not an address of this machine"));
    }
    let mut b = SslContext::builder(SslMethod::tls_client()).map_err(|e| e.to_string())?;
    b.set_verify(SslVerifyMode::NONE);
    let ctx = b.build();
    let tcp = TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("{addr}: {e}"))?;
    tcp.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    tcp.set_write_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    let mut ssl = Ssl::new(&ctx).map_err(|e| e.to_string())?;
    if let Some(n) = server_name.filter(|n| n.parse::<std::net::IpAddr>().is_err()) {
        ssl.set_hostname(n).map_err(|e| e.to_string())?;
    }
    let s = ssl.connect(tcp).map_err(|e| format!("{addr}: TLS handshake failed: {e}"))?;
    let cipher = s.ssl().current_cipher().ok_or_else(|| format!("{addr}: no suite negotiated"))?;
    Ok(Handshake {
        version: s.ssl().version_str().to_string(),
        suite: cipher.standard_name().unwrap_or(cipher.name()).to_string(),
        openssl_name: cipher.name().to_string(),
        group: negotiated_group(&s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe asks the library: every OpenSSL 3 server takes X25519 and P-256 by
    /// default and no MLKEM-only group (MLKEM768 alone is not in any default list).
    #[test]
    fn the_default_server_takes_the_classic_groups() {
        let t = std::time::Instant::now();
        let g = default_server_groups(&crate::discover::openssl::tls_groups()).expect("a probe");
        assert!(t.elapsed() < std::time::Duration::from_secs(2), "{:?}", t.elapsed());
        assert!(g.iter().any(|x| x == "X25519") && g.iter().any(|x| x == "P-256"), "{g:?}");
        assert!(!g.iter().any(|x| x == "MLKEM768"), "{g:?}");
        let pq = crate::discover::openssl::tls_groups().iter().any(|n| n == "X25519MLKEM768");
        // OpenSSL 3.5's default has the hybrid wherever the library has it.
        assert_eq!(g.iter().any(|x| x == "X25519MLKEM768"), pq, "{g:?}");
    }

    /// An address that is not this machine's is never connected to.
    #[test]
    fn a_foreign_address_is_refused() {
        let e = default_client_handshake("192.0.2.1:443", None, Duration::from_secs(2)).unwrap_err();
        assert!(e.contains("not an address of this machine"), "{e}");
    }

    /// Nothing listens: an error naming the address, quickly.
    #[test]
    fn a_closed_port_is_an_error() {
        let (_held, addr) = crate::testing::closed_port();
        let e = default_client_handshake(&addr.to_string(), None, Duration::from_secs(2)).unwrap_err();
        assert!(e.contains(&addr.to_string()), "{e}");
    }
}
