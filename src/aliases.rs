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
//!
//! TLS groups are matched more loosely, as libraries spell them: in any case, with
//! or without punctuation, GnuTLS's `GROUP-` prefix or a prime curve's `r1`
//! (`X25519_MLKEM768`, `x25519mlkem768`, `GROUP-SECP256R1`, `secp256`). Two
//! spellings of a group come from here too: the knowledge base's name
//! ([`group_name`]: `secp256r1`) and the one results store ([`group_spelling`]:
//! `P-256`, one of [`GROUPS`]).

use std::collections::HashMap;
use std::sync::OnceLock;

const TLS: &str = include_str!("../data/knowledge/tls.toml");

const SOURCES: [&str; 3] = [
    include_str!("../data/knowledge/tls_suites.toml"),
    TLS,
    include_str!("../data/knowledge/ssh.toml"),
];

/// Every TLS group cipherbench measures or asks a server about, each in the one
/// spelling results store for it (OpenSSL takes every one of them): the order is
/// the order a remote server is asked about them (`backend::openssl::tls`'s
/// `PROBE_GROUPS`). X448MLKEM1024 is the one the knowledge base does not list.
pub const GROUPS: [&str; 17] = [
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
    "SecP384r1MLKEM1024",
    "X448MLKEM1024",
    "MLKEM512",
    "MLKEM768",
    "MLKEM1024",
    "X25519",
    "X448",
    "P-256",
    "P-384",
    "P-521",
    "ffdhe2048",
    "ffdhe3072",
    "ffdhe4096",
    "ffdhe6144",
    "ffdhe8192",
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

/// One TLS group.
struct Group {
    /// The knowledge base's name (`secp256r1`); `None` for a group only [`GROUPS`] has.
    known: Option<String>,
    /// Its one name, lower case (the key [`canonical`] gives).
    one: String,
    /// Its spelling in results, for a group of [`GROUPS`].
    spelling: Option<&'static str>,
}

/// The TLS groups: the knowledge base's `[[group]]` entries and [`GROUPS`], each
/// reached by the [`group_key`] of every name it has.
struct Groups {
    all: Vec<Group>,
    by_key: HashMap<String, usize>,
}

fn groups() -> &'static Groups {
    static GROUPS_TABLE: OnceLock<Groups> = OnceLock::new();
    GROUPS_TABLE.get_or_init(|| {
        let mut g = Groups {
            all: Vec::new(),
            by_key: HashMap::new(),
        };
        // The built-in data parses (see `table`).
        let top = TLS.parse::<toml::Table>().unwrap_or_default();
        let entries = top.get("group").and_then(|v| v.as_array()).map(Vec::as_slice).unwrap_or_default();
        for e in entries.iter().filter_map(|e| e.as_table()) {
            let Some(name) = e.get("name").and_then(|v| v.as_str()) else {
                continue;
            };
            let aliases = e.get("aliases").and_then(|v| v.as_array()).map(Vec::as_slice).unwrap_or_default();
            let i = g.all.len();
            g.all.push(Group {
                known: Some(name.to_string()),
                one: name.to_ascii_lowercase(),
                spelling: None,
            });
            for n in std::iter::once(name).chain(aliases.iter().filter_map(|v| v.as_str())) {
                g.by_key.entry(group_key(n)).or_insert(i);
            }
        }
        for spelling in GROUPS {
            match g.by_key.get(&group_key(spelling)) {
                Some(&i) => g.all[i].spelling = Some(spelling),
                None => {
                    g.by_key.insert(group_key(spelling), g.all.len());
                    g.all.push(Group {
                        known: None,
                        one: spelling.to_ascii_lowercase(),
                        spelling: Some(spelling),
                    });
                }
            }
        }
        g.by_key.remove("");
        g
    })
}

/// A group name as a key: lower case, letters and digits only, without GnuTLS's
/// `GROUP-` prefix or a prime curve's trailing `r1` (`GROUP-SECP256R1`,
/// `secp256r1` and `secp256` are one key; `SecP256r1MLKEM768` keeps its `r1`).
fn group_key(name: &str) -> String {
    let k: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let k = k.strip_prefix("group").unwrap_or(&k);
    k.strip_suffix("r1").unwrap_or(k).to_string()
}

/// The TLS group `name` stands for, by any of its names.
fn group(name: &str) -> Option<&'static Group> {
    let g = groups();
    g.by_key.get(&group_key(name)).map(|&i| &g.all[i])
}

/// The knowledge base's name of the TLS group `name` stands for, as it spells it
/// (`secp256r1` for `P-256`, `X25519MLKEM768` for `x25519_mlkem768`); `None` for a
/// name of no group it lists.
pub fn group_name(name: &str) -> Option<&'static str> {
    group(name).and_then(|g| g.known.as_deref())
}

/// The spelling results store for the TLS group `name` stands for (`P-256` for
/// `prime256v1`, `X25519` for `GROUP-X25519`), one of [`GROUPS`]; `None` for a
/// name of any other group, or of none.
pub fn group_spelling(name: &str) -> Option<&'static str> {
    group(name).and_then(|g| g.spelling)
}

/// The one name of the algorithm `name` stands for, as a key to compare by (lower
/// case; not a name to show). A name the knowledge base does not know is its own
/// key, unless it spells a TLS group (see the module's note).
pub fn canonical(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    if let Some(one) = table().get(&lower) {
        return one.clone();
    }
    group(&lower).map(|g| g.one.clone()).unwrap_or(lower)
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

    /// Every name `backend::openssl::tls`'s own group table knew (its match arms)
    /// and the spelling results have always stored for it (`X25519`, `P-256`,
    /// `X25519MLKEM768`...): each name as written, in upper case, and under GnuTLS's
    /// `GROUP-` prefix. Names of other groups have no spelling.
    #[test]
    fn group_spellings_are_pinned() {
        const PINNED: &[(&str, &str)] = &[
            ("x25519mlkem768", "X25519MLKEM768"),
            ("X25519_MLKEM768", "X25519MLKEM768"),
            ("X25519-MLKEM768", "X25519MLKEM768"),
            ("secp256r1mlkem768", "SecP256r1MLKEM768"),
            ("p256mlkem768", "SecP256r1MLKEM768"),
            ("P256_MLKEM768", "SecP256r1MLKEM768"),
            ("secp384r1mlkem1024", "SecP384r1MLKEM1024"),
            ("p384mlkem1024", "SecP384r1MLKEM1024"),
            ("P384_MLKEM1024", "SecP384r1MLKEM1024"),
            ("x448mlkem1024", "X448MLKEM1024"),
            ("X448_MLKEM1024", "X448MLKEM1024"),
            ("mlkem512", "MLKEM512"),
            ("mlkem768", "MLKEM768"),
            ("mlkem1024", "MLKEM1024"),
            ("x25519", "X25519"),
            ("x448", "X448"),
            ("p256", "P-256"),
            ("P-256", "P-256"),
            ("prime256v1", "P-256"),
            ("secp256r1", "P-256"),
            ("secp256", "P-256"),
            ("p384", "P-384"),
            ("P-384", "P-384"),
            ("secp384r1", "P-384"),
            ("secp384", "P-384"),
            ("p521", "P-521"),
            ("P-521", "P-521"),
            ("secp521r1", "P-521"),
            ("secp521", "P-521"),
            ("ffdhe2048", "ffdhe2048"),
            ("ffdhe3072", "ffdhe3072"),
            ("ffdhe4096", "ffdhe4096"),
            ("ffdhe6144", "ffdhe6144"),
            ("ffdhe8192", "ffdhe8192"),
        ];
        for &(name, spelling) in PINNED {
            for n in [
                name.to_string(),
                name.to_ascii_uppercase(),
                format!("GROUP-{name}"),
                format!("group_{name}"),
            ] {
                assert_eq!(group_spelling(&n), Some(spelling), "{n}");
            }
            // A spelling is its own.
            assert_eq!(group_spelling(spelling), Some(spelling), "{spelling}");
        }
        for other in [
            "brainpool",
            "brainpoolP256r1",
            "secp224r1",
            "P-224",
            "secp256k1",
            "GC256B",
            "dh-2048",
            "ffdhe1024",
            "",
        ] {
            assert_eq!(group_spelling(other), None, "{other}");
        }
    }

    /// The knowledge base's name of every group by each of its names (in any case,
    /// with or without `GROUP-`), the one key `canonical` gives each, and no name
    /// of two groups.
    #[test]
    fn groups_by_every_name() {
        let top = TLS.parse::<toml::Table>().unwrap();
        let entries = top["group"].as_array().unwrap();
        assert!(entries.len() > 30, "{}", entries.len());
        for e in entries {
            let name = e["name"].as_str().unwrap();
            let aliases = e.get("aliases").and_then(|v| v.as_array()).cloned().unwrap_or_default();
            for n in std::iter::once(name).chain(aliases.iter().map(|v| v.as_str().unwrap())) {
                let prefixed = (!n.starts_with("GROUP-")).then(|| format!("GROUP-{n}"));
                for n in [n.to_string(), n.to_ascii_uppercase()].into_iter().chain(prefixed) {
                    assert_eq!(group_name(&n), Some(name), "{n}");
                    assert_eq!(canonical(&n), name.to_ascii_lowercase(), "{n}");
                    assert!(same(&n, name), "{n}");
                }
            }
        }
        assert_eq!(group_name("P-256"), Some("secp256r1"));
        assert_eq!(group_name("X25519"), Some("x25519"));
        assert_eq!(group_name("x25519-mlkem768"), Some("X25519MLKEM768"));
        assert_eq!(
            group_name("X448MLKEM1024"),
            None,
            "results spell it; the knowledge base does not list it"
        );
        assert_eq!(group_name("secp256k1"), None);
        assert!(same("X448_MLKEM1024", "X448MLKEM1024") && same("p256", "prime256v1"));
        assert!(!same("secp256r1", "SecP256r1MLKEM768") && !same("brainpoolP256r1", "brainpoolP256r1tls13"));
        assert!(!same("ffdhe2048", "dh-2048"));
    }

    /// Every spelling results store is its own, and the spelling of one group.
    #[test]
    fn every_spelling_is_its_own() {
        for s in GROUPS {
            assert_eq!(group_spelling(s), Some(s));
            assert_eq!(GROUPS.iter().filter(|o| same(o, s)).count(), 1, "{s}");
        }
        assert_eq!(group_spelling("curve25519"), Some("X25519"), "a knowledge-base alias");
        assert_eq!(group_spelling("nistp384"), Some("P-384"));
    }
}
