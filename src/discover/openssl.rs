//! What the system OpenSSL offers: its runtime version, its TLS suites and
//! capabilities (which catalogue primitives each library can run: primitives.rs).

use crate::backend::openssl::{legacy_provider, runtime_version, LegacyProvider};
use std::collections::BTreeMap;

/// Library name -> runtime version, for the run record: each registered library
/// (`backend::libraries`) and the legacy provider's state.
pub fn libraries() -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert("openssl".to_string(), runtime_version());
    m.insert(
        "openssl-legacy-provider".to_string(),
        match legacy_provider() {
            LegacyProvider::Loaded => "loaded".to_string(),
            LegacyProvider::NotLoaded(why) => format!("not loaded: {why}"),
        },
    );
    m.insert("cipherbench".to_string(), env!("CARGO_PKG_VERSION").to_string());
    // Every library of the registry, as it reports itself (GnuTLS: `3.7.9`).
    for e in crate::backend::libraries::ALL {
        m.insert(
            e.name.to_string(),
            (e.version)().unwrap_or_else(|err| format!("unavailable: {err:#}")),
        );
    }
    m
}

/// Every TLS 1.3 suite some OpenSSL version implements; `openssl ciphers` lists only
/// the enabled ones unless they are named with `-ciphersuites`.
pub const TLS13_SUITES: &[&str] = &[
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_AES_128_CCM_SHA256",
    "TLS_AES_128_CCM_8_SHA256",
];

/// One suite as the local OpenSSL lists it (`openssl ciphers -V -stdname`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TlsSuiteInfo {
    /// `0xC0,0x2F`.
    pub code: String,
    pub iana: String,
    pub openssl: String,
    /// Lowest protocol version that can negotiate it, as OpenSSL prints it (`SSLv3`, `TLSv1.2`, `TLSv1.3`).
    pub min_protocol: String,
    pub kx: String,
    pub au: String,
    /// `AESGCM(128)`.
    pub enc: String,
    pub mac: String,
}

/// Every TLS suite the local OpenSSL can offer, TLS 1.3 ones first, as
/// `openssl ciphers -V -stdname -ciphersuites ... 'ALL:COMPLEMENTOFALL:@SECLEVEL=0'`
/// prints them.
pub fn tls_suites() -> anyhow::Result<Vec<TlsSuiteInfo>> {
    use anyhow::Context;
    let mut cmd = std::process::Command::new("openssl");
    cmd.args([
        "ciphers",
        "-V",
        "-stdname",
        "-ciphersuites",
        &TLS13_SUITES.join(":"),
        "ALL:COMPLEMENTOFALL:@SECLEVEL=0",
    ]);
    let out = crate::backend::process::output_within(&mut cmd, crate::backend::process::QUERY_LIMIT)
        .context("cannot run `openssl ciphers` (install the `openssl` package)")?
        .context("`openssl ciphers` did not finish in time and was stopped")?;
    if !out.status.success() {
        anyhow::bail!("`openssl ciphers` failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(parse_ciphers_v(&String::from_utf8_lossy(&out.stdout)))
}

/// Parses `openssl ciphers -V -stdname` lines:
/// `0xC0,0x2F - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 - ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 Kx=ECDH Au=RSA Enc=AESGCM(128) Mac=AEAD`.
pub fn parse_ciphers_v(text: &str) -> Vec<TlsSuiteInfo> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 10 || f[1] != "-" || f[3] != "-" {
            continue;
        }
        let field = |key: &str| f.iter().find_map(|x| x.strip_prefix(key)).unwrap_or("").to_string();
        out.push(TlsSuiteInfo {
            code: f[0].to_string(),
            iana: f[2].to_string(),
            openssl: f[4].to_string(),
            min_protocol: f[5].to_string(),
            kx: field("Kx="),
            au: field("Au="),
            enc: field("Enc="),
            mac: field("Mac="),
        });
    }
    out
}

/// The first of `names` that this libssl accepts as a TLS group, e.g. `prime256v1`
/// for P-256; `None` when it knows none of them (X25519MLKEM768 before OpenSSL 3.5).
pub fn supported_group<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut ctx = openssl::ssl::SslContext::builder(openssl::ssl::SslMethod::tls()).ok()?;
    names
        .into_iter()
        .filter(|n| !n.starts_with("GROUP-") && !n.contains(' '))
        .find(|n| ctx.set_groups_list(n).is_ok())
        .map(str::to_string)
}

/// Every spelling of a TLS group that discovery asks libssl about: the knowledge
/// base's names and aliases (its tests keep the two in step) and OpenSSL's other
/// names for the same groups.
pub const GROUP_SPELLINGS: &[&str] = &[
    "X25519MLKEM768",
    "X25519_MLKEM768",
    "SecP256r1MLKEM768",
    "P256_MLKEM768",
    "SecP384r1MLKEM1024",
    "P384_MLKEM1024",
    "X448MLKEM1024",
    "MLKEM512",
    "MLKEM768",
    "MLKEM1024",
    "x25519",
    "curve25519",
    "ecdh_x25519",
    "x448",
    "curve448",
    "ecdh_x448",
    "secp256r1",
    "P-256",
    "prime256v1",
    "nistp256",
    "secp384r1",
    "P-384",
    "nistp384",
    "secp521r1",
    "P-521",
    "nistp521",
    "secp224r1",
    "P-224",
    "nistp224",
    "secp192r1",
    "P-192",
    "prime192v1",
    "nistp192",
    "brainpoolP256r1",
    "brainpoolP384r1",
    "brainpoolP512r1",
    "brainpoolP256r1tls13",
    "brainpoolP384r1tls13",
    "brainpoolP512r1tls13",
    "GC256B",
    "GC512A",
    "ffdhe2048",
    "ffdhe3072",
    "ffdhe4096",
    "ffdhe6144",
    "ffdhe8192",
];

/// Those of [`GROUP_SPELLINGS`] this libssl accepts as a TLS group.
pub fn tls_groups() -> Vec<String> {
    GROUP_SPELLINGS
        .iter()
        .filter(|n| supported_group([**n]).is_some())
        .map(|n| n.to_string())
        .collect()
}

/// What the host's OpenSSL offers a TLS server: its suites and groups.
pub fn capabilities() -> crate::model::OpenSslCapabilities {
    let groups = tls_groups();
    crate::model::OpenSslCapabilities {
        suites: tls_suites().ok().map(|v| {
            v.into_iter()
                .map(|s| crate::model::SuiteName {
                    iana: s.iana,
                    openssl: s.openssl,
                })
                .collect()
        }),
        default_groups: super::installed::libssl::default_server_groups(&groups),
        groups,
        tiers: takes_tiers(),
    }
}

/// Whether this libssl's group lists take preference tiers and key-share marks
/// (`*x25519/secp256r1`, OpenSSL 3.5): asked, not inferred from a version.
pub fn takes_tiers() -> bool {
    openssl::ssl::SslContext::builder(openssl::ssl::SslMethod::tls()).is_ok_and(|mut c| c.set_groups_list("*x25519/secp256r1").is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spelling the knowledge base gives a group OpenSSL could take is asked
    /// about, so that a stored list of groups answers for each of them.
    #[test]
    fn every_knowledge_spelling_of_a_group_is_asked_about() {
        let k = crate::judge::Knowledge::builtin().unwrap();
        for g in k.groups().iter().filter(|g| g.code.is_some()) {
            for n in std::iter::once(&g.name).chain(&g.aliases) {
                if !n.starts_with("GROUP-") && !n.contains(' ') {
                    assert!(GROUP_SPELLINGS.contains(&n.as_str()), "{n} ({}) is not in GROUP_SPELLINGS", g.name);
                }
            }
        }
        let groups = tls_groups();
        assert!(
            groups.iter().any(|g| g == "x25519") && groups.iter().any(|g| g == "secp256r1"),
            "{groups:?}"
        );
    }
}
