//! rustls (with its default aws-lc-rs provider) as a third TLS library: a
//! `TlsLibrary` ([`library::Rustls`]) and a `RecordCipher` ([`record::Record`]).
//!
//! Why rustls is here: it is the TLS library of a growing share of the software
//! people run (Rust servers, proxies and clients), and it is built into this
//! program rather than found on the system, so its version is the one the build
//! linked ([`version`], read from Cargo.lock at compile time: rustls has no
//! run-time version constant).
//!
//! What rustls cannot do is data, not failure: it implements TLS 1.2 and 1.3
//! only, ECDHE with AEAD suites only (no CBC, no RSA key exchange, no DHE, no
//! CCM), and the groups of its provider ([`library::Rustls::lacks`] says which).
//!
//! - `library`: configurations from a `Selection`, handshakes over TCP with the
//!   run's deadline, the bulk transport (`Coalesced`) underneath.
//! - `record`: TLS 1.3 application-data records sealed and opened by rustls's own
//!   record protection (`MessageEncrypter` / `MessageDecrypter`).

mod conn;
pub mod library;
pub mod record;

use ::rustls::crypto::aws_lc_rs;
use ::rustls::crypto::SupportedKxGroup;
use ::rustls::SupportedCipherSuite;

/// The Cargo.lock this binary was built from (`--locked`): the versions it links.
const LOCK: &str = include_str!("../../../Cargo.lock");

/// The version of package `name` in Cargo.lock (the first one listed).
fn locked_version(lock: &str, name: &str) -> Option<String> {
    let want = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l.trim() == want {
            let v = lines.next()?.trim();
            return v.strip_prefix("version = \"").and_then(|v| v.strip_suffix('"')).map(str::to_string);
        }
    }
    None
}

/// `rustls 0.23.46 (aws-lc-rs 1.15.2)`: the versions this build links.
pub fn version() -> String {
    let v = |n: &str| locked_version(LOCK, n).unwrap_or_else(|| "?".to_string());
    format!("rustls {} (aws-lc-rs {})", v("rustls"), v("aws-lc-rs"))
}

/// Every suite the provider implements, TLS 1.3 first (its own order).
pub fn all_suites() -> &'static [SupportedCipherSuite] {
    aws_lc_rs::ALL_CIPHER_SUITES
}

/// Every group the provider can offer, preferred first.
pub fn all_groups() -> &'static [&'static dyn SupportedKxGroup] {
    aws_lc_rs::ALL_KX_GROUPS
}

/// A suite's IANA name, through its code point and the knowledge base's table
/// (rustls's own names differ: `TLS13_AES_128_GCM_SHA256`).
pub fn suite_iana(s: ::rustls::CipherSuite) -> String {
    let code = u16::from(s).to_be_bytes();
    let text = format!("0x{:02X},0x{:02X}", code[0], code[1]);
    crate::catalog::tls_suite_name(&text)
        .map(|n| n.iana.clone())
        .unwrap_or_else(|| format!("{s:?}").replacen("TLS13_", "TLS_", 1))
}

/// A group's canonical spelling (`X25519MLKEM768`, `P-256`), by IANA code point.
pub fn group_name(g: ::rustls::NamedGroup) -> String {
    let canonical = match u16::from(g) {
        0x0017 => Some("P-256"),
        0x0018 => Some("P-384"),
        0x0019 => Some("P-521"),
        0x001d => Some("X25519"),
        0x001e => Some("X448"),
        0x0100 => Some("ffdhe2048"),
        0x0101 => Some("ffdhe3072"),
        0x0102 => Some("ffdhe4096"),
        0x0200 => Some("MLKEM512"),
        0x0201 => Some("MLKEM768"),
        0x0202 => Some("MLKEM1024"),
        0x11eb => Some("SecP256r1MLKEM768"),
        0x11ec => Some("X25519MLKEM768"),
        0x11ed => Some("SecP384r1MLKEM1024"),
        _ => None,
    };
    canonical.map(str::to_string).unwrap_or_else(|| {
        let debug = format!("{g:?}");
        crate::aliases::group_spelling(&debug).map_or(debug, str::to_string)
    })
}

#[cfg(test)]
mod tests;
