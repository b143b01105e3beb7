//! One name per algorithm. The same algorithm goes by several names: an SSH key
//! exchange under its pre-standard and its standard name
//! (`curve25519-sha256@libssh.org` and `curve25519-sha256`,
//! `sntrup761x25519-sha512@openssh.com` and `sntrup761x25519-sha512`), a TLS suite
//! under its IANA, OpenSSL and GnuTLS names (`TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`,
//! `ECDHE-RSA-AES128-GCM-SHA256`), a group under its curve names (`secp256r1`,
//! `P-256`, `prime256v1`). Rankings, diffs, findings and `compare` match subjects
//! by [`canonical`], so that one algorithm is one subject, never a change from
//! itself to itself.
//!
//! The names come from the knowledge base's own tables (data/knowledge: a suite's
//! `openssl`, `openssl_aliases` and `gnutls` names, a group's `aliases`, an SSH
//! algorithm's `same_as`), read here as plain data so that every layer may use
//! them (this is a foundation module: it imports nothing of the pipeline).

use std::collections::HashMap;
use std::sync::OnceLock;

const SOURCES: [&str; 3] = [
    include_str!("../data/knowledge/tls_suites.toml"),
    include_str!("../data/knowledge/tls.toml"),
    include_str!("../data/knowledge/ssh.toml"),
];

/// Every known name (lower case) → its algorithm's one name (lower case).
fn table() -> &'static HashMap<String, String> {
    static TABLE: OnceLock<HashMap<String, String>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut map = HashMap::new();
        for text in SOURCES {
            // The built-in data parses (the knowledge base's own tests load it):
            // a table that did not would only leave names as they are.
            if let Ok(toml::Value::Table(top)) = text.parse::<toml::Value>() {
                for entries in top.values().filter_map(|v| v.as_array()) {
                    for e in entries.iter().filter_map(|e| e.as_table()) {
                        add(&mut map, e);
                    }
                }
            }
        }
        map
    })
}

/// One entry's names: its IANA name (suites), else its `same_as`, else its `name`,
/// is the one name; the others map to it.
fn add(map: &mut HashMap<String, String>, e: &toml::map::Map<String, toml::Value>) {
    let s = |k: &str| e.get(k).and_then(|v| v.as_str());
    let Some(one) = s("iana").or_else(|| s("same_as")).or_else(|| s("name")) else {
        return;
    };
    let one = one.to_ascii_lowercase();
    let mut names: Vec<&str> = ["iana", "name", "openssl", "gnutls"].iter().filter_map(|k| s(k)).collect();
    for list in ["aliases", "openssl_aliases"] {
        if let Some(a) = e.get(list).and_then(|v| v.as_array()) {
            names.extend(a.iter().filter_map(|v| v.as_str()));
        }
    }
    for n in names {
        map.entry(n.to_ascii_lowercase()).or_insert_with(|| one.clone());
    }
}

/// The one name of the algorithm `name` stands for, as a key to compare by (lower
/// case; not a name to show). A name the knowledge base does not know is its own
/// key.
pub fn canonical(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    table().get(&lower).cloned().unwrap_or(lower)
}

/// Whether `a` and `b` name the same algorithm.
pub fn same(a: &str, b: &str) -> bool {
    a == b || canonical(a) == canonical(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_algorithm_is_one_name() {
        assert!(same("sntrup761x25519-sha512", "sntrup761x25519-sha512@openssh.com"));
        assert!(same("curve25519-sha256@libssh.org", "curve25519-sha256"));
        assert!(same("ECDHE-RSA-AES128-GCM-SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"));
        assert!(same("TLS_AES_128_GCM_SHA256", "tls_aes_128_gcm_sha256"));
        assert!(same("EDH-RSA-DES-CBC3-SHA", "DHE-RSA-DES-CBC3-SHA"), "an older OpenSSL spelling");
        assert!(same("prime256v1", "P-256") && same("secp256r1", "P-256"));
        assert!(same("X25519", "x25519"));
        assert!(same("rijndael-cbc@lysator.liu.se", "rijndael-cbc@lysator.liu.se"));
        assert_eq!(canonical("ECDHE-RSA-AES128-GCM-SHA256"), "tls_ecdhe_rsa_with_aes_128_gcm_sha256");
        assert_eq!(canonical("curve25519-sha256@libssh.org"), "curve25519-sha256");
    }

    /// Different algorithms stay apart, whatever their names share.
    #[test]
    fn different_algorithms_stay_apart() {
        assert!(!same("hmac-sha2-256", "hmac-sha2-256-etm@openssh.com"), "EtM is another MAC");
        assert!(!same("ssh-ed25519", "ssh-ed25519-cert-v01@openssh.com"));
        assert!(!same("aes128-gcm@openssh.com", "aes256-gcm@openssh.com"));
        assert!(!same("curve25519-sha256", "sntrup761x25519-sha512"));
        assert!(!same("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"));
        assert!(!same("secp256r1", "secp384r1"));
        assert_eq!(canonical("no-such-thing@example.org"), "no-such-thing@example.org");
        // Every name maps to one algorithm: no name of one entry is another's.
        assert!(table().len() > 500, "{}", table().len());
    }
}
