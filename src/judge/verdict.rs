//! Value types produced by the judge: levels, domains and verdicts.
//!
//! These are what reports, the JSON document and policies consume. They are plain
//! values built fresh for every question; nothing here points back into the database.

use crate::model::{KeyBitsRecord, OpinionRecord, ReasonRecord, SourceRecord, VerdictRecord, VerdictSubject};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;
use std::str::FromStr;

/// How good an algorithm is. Ordered from worst to best, so `a < b` means "a is
/// worse". `Unrated` (not in the knowledge base) sorts below everything: unknown is
/// never treated as secure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Not in the knowledge base. Only ever produced for verdicts; data files cannot use it.
    Unrated,
    /// Broken or prohibited: never use it for protection.
    Insecure,
    /// Deprecated or with known weaknesses: only for compatibility with old peers.
    Weak,
    /// No known practical weakness, but not the first choice.
    Secure,
    /// Current best practice.
    Recommended,
}

impl Level {
    /// The four levels a data file may use, best first.
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub const RATED: [Level; 4] = [Level::Recommended, Level::Secure, Level::Weak, Level::Insecure];

    /// Lower-case name as used in the data files and the JSON document.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Unrated => "unrated",
            Level::Insecure => "insecure",
            Level::Weak => "weak",
            Level::Secure => "secure",
            Level::Recommended => "recommended",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Level {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "unrated" => Ok(Level::Unrated),
            "insecure" => Ok(Level::Insecure),
            "weak" => Ok(Level::Weak),
            "secure" => Ok(Level::Secure),
            "recommended" => Ok(Level::Recommended),
            other => Err(format!(
                "unknown level `{other}`, expected one of recommended, secure, weak, insecure"
            )),
        }
    }
}

/// The four levels a data or policy file may name; `unrated` is refused there.
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum KnownLevel {
    Insecure,
    Weak,
    Secure,
    Recommended,
}

/// `deserialize_with` helper for level fields in data and policy files: accepts only
/// the four rated levels, so `unrated` or a typo fails with the parser's line number.
pub(crate) fn known_level<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Level, D::Error> {
    Ok(match KnownLevel::deserialize(deserializer)? {
        KnownLevel::Insecure => Level::Insecure,
        KnownLevel::Weak => Level::Weak,
        KnownLevel::Secure => Level::Secure,
        KnownLevel::Recommended => Level::Recommended,
    })
}

/// What kind of thing a name denotes. Names are only unique within a domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Domain {
    /// SSL/TLS/DTLS protocol versions.
    Protocol,
    /// TLS 1.3 cipher suites.
    Tls13Suite,
    /// Cipher suites negotiated by TLS 1.2 and earlier (including SSLv3 and SSLv2 ones).
    Tls12Suite,
    /// TLS key-exchange groups and DHE parameter sizes.
    Group,
    /// Certificate (server key) types.
    Cert,
    /// OpenSSH ciphers.
    SshCipher,
    /// OpenSSH MACs.
    SshMac,
    /// OpenSSH key exchange methods.
    SshKex,
    /// OpenSSH host-key (signature) algorithms.
    SshHostkey,
    /// OpenSSL EVP ciphers, digests and MACs.
    Primitive,
}

impl Domain {
    /// Every domain, in report order.
    pub const ALL: [Domain; 10] = [
        Domain::Protocol,
        Domain::Tls13Suite,
        Domain::Tls12Suite,
        Domain::Group,
        Domain::Cert,
        Domain::SshCipher,
        Domain::SshMac,
        Domain::SshKex,
        Domain::SshHostkey,
        Domain::Primitive,
    ];

    /// Kebab-case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Protocol => "protocol",
            Domain::Tls13Suite => "tls13-suite",
            Domain::Tls12Suite => "tls12-suite",
            Domain::Group => "group",
            Domain::Cert => "cert",
            Domain::SshCipher => "ssh-cipher",
            Domain::SshMac => "ssh-mac",
            Domain::SshKex => "ssh-kex",
            Domain::SshHostkey => "ssh-hostkey",
            Domain::Primitive => "primitive",
        }
    }

    /// Name of this domain's table in a policy file.
    pub fn policy_table(self) -> &'static str {
        match self {
            Domain::Protocol => "protocols",
            Domain::Tls13Suite => "tls13_suites",
            Domain::Tls12Suite => "tls12_suites",
            Domain::Group => "groups",
            Domain::Cert => "certs",
            Domain::SshCipher => "ssh_ciphers",
            Domain::SshMac => "ssh_macs",
            Domain::SshKex => "ssh_kex",
            Domain::SshHostkey => "ssh_hostkeys",
            Domain::Primitive => "primitives",
        }
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which minimum in a policy's `[keys]` table a key size is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyKind {
    /// Symmetric cipher key (`min_symmetric_bits`).
    Symmetric,
    /// RSA modulus (`min_rsa_bits`).
    Rsa,
    /// Finite-field modulus: DH groups and DSA keys (`min_dh_bits`).
    FiniteField,
    /// Elliptic-curve size, nominal (X25519 counts as 256) (`min_ec_bits`).
    EllipticCurve,
}

/// One key size of a subject, e.g. the 128-bit AES key of a suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KeyBits {
    pub kind: KeyKind,
    pub bits: u32,
}

/// What a verdict is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    pub domain: Domain,
    /// Canonical name (IANA for TLS suites, OpenSSH's name for SSH, EVP name for primitives).
    pub name: String,
    /// Every other name the subject is known by (OpenSSL, GnuTLS, aliases).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

impl Subject {
    /// True when `name` is the canonical name or one of the aliases, ignoring case.
    pub fn matches(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name) || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }
}

/// A citation: a source id with its title and address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub id: String,
    pub title: String,
    pub url: String,
}

/// One reason behind a verdict, with its references resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictReason {
    /// Reason id in `data/knowledge/reasons.toml`.
    pub id: String,
    pub text: String,
    /// The best level an algorithm with this reason can have.
    pub ceiling: Level,
    /// Shown as a warning even when the level is good (e.g. Terrapin).
    #[serde(default)]
    pub caveat: bool,
    pub references: Vec<Reference>,
}

/// Another source's view of the subject, kept when it differs from or adds to ours.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceOpinion {
    pub source: Reference,
    pub level: Level,
    pub reason: VerdictReason,
}

/// The judge's answer for one subject. A fresh value: changing it changes nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub subject: Subject,
    /// The project's level.
    pub level: Level,
    /// The source the project's level follows (`None` when unrated).
    pub follows: Option<Reference>,
    pub reasons: Vec<VerdictReason>,
    /// Other sources' views, e.g. ssh-audit failing the NIST curves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opinions: Vec<SourceOpinion>,
    /// Key sizes a policy's `[keys]` minimums apply to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_bits: Vec<KeyBits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Verdict {
    /// The verdict for a name the knowledge base does not know.
    pub fn unrated(domain: Domain, name: &str) -> Verdict {
        Verdict {
            subject: Subject {
                domain,
                name: name.to_string(),
                aliases: Vec::new(),
            },
            level: Level::Unrated,
            follows: None,
            reasons: vec![VerdictReason {
                id: "unrated".to_string(),
                text: format!(
                    "`{name}` is not in cipherbench's knowledge base for {domain}; unknown algorithms are never treated as secure."
                ),
                ceiling: Level::Unrated,
                caveat: false,
                references: Vec::new(),
            }],
            opinions: Vec::new(),
            key_bits: Vec::new(),
            note: None,
        }
    }

    /// A copy of this verdict with one more key size, e.g. the RSA size of the host key
    /// actually measured (the algorithm name alone does not tell it).
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn with_key_bits(mut self, kind: KeyKind, bits: u32) -> Verdict {
        self.key_bits.push(KeyBits { kind, bits });
        self
    }

    /// The opinion of one source, if the knowledge base records one.
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn opinion(&self, source_id: &str) -> Option<&SourceOpinion> {
        self.opinions.iter().find(|o| o.source.id == source_id)
    }

    /// Reasons that should be shown as warnings whatever the level (caveats).
    pub fn caveats(&self) -> impl Iterator<Item = &VerdictReason> {
        self.reasons.iter().filter(|r| r.caveat)
    }
}

impl KeyKind {
    /// Kebab-case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyKind::Symmetric => "symmetric",
            KeyKind::Rsa => "rsa",
            KeyKind::FiniteField => "finite-field",
            KeyKind::EllipticCurve => "elliptic-curve",
        }
    }
}

fn source_record(r: &Reference) -> SourceRecord {
    SourceRecord {
        id: Some(r.id.clone()),
        title: Some(r.title.clone()),
        url: Some(r.url.clone()),
    }
}

fn reason_record(r: &VerdictReason) -> ReasonRecord {
    ReasonRecord {
        id: Some(r.id.clone()),
        text: r.text.clone(),
        ceiling: Some(r.ceiling.as_str().to_string()),
        caveat: Some(r.caveat),
        references: r.references.iter().map(source_record).collect(),
    }
}

impl Verdict {
    /// This verdict as the document's `verdicts[]` holds it (the same JSON).
    pub fn record(&self) -> VerdictRecord {
        VerdictRecord {
            subject: VerdictSubject {
                domain: self.subject.domain.as_str().to_string(),
                name: self.subject.name.clone(),
                aliases: self.subject.aliases.clone(),
            },
            level: self.level.as_str().to_string(),
            follows: Some(self.follows.as_ref().map(source_record)),
            reasons: self.reasons.iter().map(reason_record).collect(),
            opinions: self
                .opinions
                .iter()
                .map(|o| OpinionRecord {
                    source: source_record(&o.source),
                    level: o.level.as_str().to_string(),
                    reason: reason_record(&o.reason),
                })
                .collect(),
            key_bits: self
                .key_bits
                .iter()
                .map(|k| KeyBitsRecord {
                    kind: k.kind.as_str().to_string(),
                    bits: k.bits,
                })
                .collect(),
            note: self.note.clone(),
            extra: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdicts_record_is_the_same_json() {
        let k = crate::judge::Knowledge::builtin().unwrap();
        let mut verdicts = vec![Verdict::unrated(Domain::Primitive, "rot13")];
        for d in Domain::ALL {
            let names: Vec<String> = k.entries(d).iter().map(|e| e.name().to_string()).collect();
            verdicts.extend(names.iter().map(|n| k.judge(d, n)));
        }
        let mut with = verdicts[0].clone().with_key_bits(KeyKind::FiniteField, 2048);
        with.note = Some("n".into());
        verdicts.push(with);
        assert!(verdicts.len() > 50 && verdicts.iter().any(|v| !v.opinions.is_empty()));
        for v in &verdicts {
            let json = serde_json::to_value(v).unwrap();
            assert_eq!(serde_json::to_value(v.record()).unwrap(), json, "{}", v.subject.name);
            let back: VerdictRecord = serde_json::from_value(json).unwrap();
            assert_eq!(back, v.record());
        }
    }
}
