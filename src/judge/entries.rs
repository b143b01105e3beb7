//! Typed mirrors of the TOML files under `data/knowledge/`.
//!
//! Every struct denies unknown fields, so a misspelt key in a data file fails the
//! build's tests (and `Knowledge::builtin`) with a line number instead of being
//! ignored. The rating fields every entry shares (`level`, `follows`, `reasons`,
//! `[[...opinion]]`, `note`) are added by one macro, because serde's `flatten` cannot
//! be combined with `deny_unknown_fields`.

use super::verdict::{known_level, Domain, KeyBits, KeyKind, Level};
use serde::{Deserialize, Serialize};

/// A cited source (`[source.ID]` in sources.toml).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub title: String,
    pub url: String,
}

/// A named, reusable reason (`[reason.ID]` in reasons.toml).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reason {
    pub text: String,
    /// The best level an entry carrying this reason can have.
    #[serde(deserialize_with = "known_level")]
    pub ceiling: Level,
    /// Source ids, the deciding authority first.
    pub refs: Vec<String>,
    /// Show as a warning even when the entry's level is good.
    #[serde(default)]
    pub caveat: bool,
}

/// Another source's view of an entry (`[[TABLE.opinion]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Opinion {
    /// Source id.
    pub source: String,
    #[serde(deserialize_with = "known_level")]
    pub level: Level,
    /// Reason id describing that source's view.
    pub reason: String,
}

/// The rating fields every entry has.
pub trait Rating {
    /// The project's level.
    fn level(&self) -> Level;
    /// Source id the project's level follows.
    fn follows(&self) -> &str;
    /// Reason ids.
    fn reason_ids(&self) -> &[String];
    /// Other sources' opinions.
    fn opinions(&self) -> &[Opinion];
    /// Free-text note.
    fn note(&self) -> Option<&str>;
}

/// What distinguishes the entries of one table.
pub trait Entry: Rating {
    /// The domain the entry belongs to (a suite is `Tls13Suite` or `Tls12Suite`).
    fn domain(&self) -> Domain;
    /// Canonical name.
    fn name(&self) -> &str;
    /// Canonical name first, then every other name it may be looked up by.
    fn names(&self) -> Vec<&str>;
    /// Key sizes that a policy's `[keys]` minimums apply to.
    fn key_bits(&self) -> Vec<KeyBits>;
    /// The entry this one is the same algorithm as, under another name (a
    /// pre-standard `@libssh.org` name and its standard one): the two are one
    /// option measured once, and configured side by side.
    fn same_as(&self) -> Option<&str> {
        None
    }
}

macro_rules! rated_entry {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
            /// The project's level: exactly the lowest ceiling among `reasons`.
            #[serde(deserialize_with = "known_level")]
            pub level: Level,
            /// Source id whose view the level follows.
            pub follows: String,
            /// Reason ids from reasons.toml; at least one.
            pub reasons: Vec<String>,
            /// Other sources' views (`[[TABLE.opinion]]`).
            #[serde(default, rename = "opinion", skip_serializing_if = "Vec::is_empty")]
            pub opinions: Vec<Opinion>,
            /// Free-text note for reports.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub note: Option<String>,
        }

        impl Rating for $name {
            fn level(&self) -> Level {
                self.level
            }
            fn follows(&self) -> &str {
                &self.follows
            }
            fn reason_ids(&self) -> &[String] {
                &self.reasons
            }
            fn opinions(&self) -> &[Opinion] {
                &self.opinions
            }
            fn note(&self) -> Option<&str> {
                self.note.as_deref()
            }
        }
    };
}

fn with_aliases<'a>(name: &'a str, aliases: &'a [String]) -> Vec<&'a str> {
    std::iter::once(name).chain(aliases.iter().map(String::as_str)).collect()
}

fn bits(kind: KeyKind, bits: u32) -> KeyBits {
    KeyBits { kind, bits }
}

rated_entry! {
    /// A protocol version (`[[protocol]]` in tls.toml).
    pub struct Protocol {
        /// Canonical name: SSLv2, SSLv3, TLSv1.0 ... TLSv1.3, DTLSv1.2.
        pub name: String,
        /// OpenSSL, GnuTLS (`VERS-TLS1.2`) and prose spellings.
        #[serde(default)]
        pub aliases: Vec<String>,
        /// The version field on the wire, e.g. `0x0303`.
        pub wire_version: String,
    }
}

impl Entry for Protocol {
    fn domain(&self) -> Domain {
        Domain::Protocol
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn names(&self) -> Vec<&str> {
        with_aliases(&self.name, &self.aliases)
    }
    fn key_bits(&self) -> Vec<KeyBits> {
        Vec::new()
    }
}

rated_entry! {
    /// A cipher suite (`[[suite]]` in tls_suites.toml).
    pub struct TlsSuite {
        /// IANA name (SSLv2-only kinds: the SSLv2 spec name `SSL_CK_*`).
        pub iana: String,
        /// OpenSSL name, when some OpenSSL version implements the suite.
        #[serde(default)]
        pub openssl: Option<String>,
        /// Older OpenSSL spellings, e.g. `EDH-RSA-DES-CBC3-SHA`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub openssl_aliases: Vec<String>,
        /// GnuTLS name as printed by `gnutls-cli -l`.
        #[serde(default)]
        pub gnutls: Option<String>,
        /// Code as printed by `openssl ciphers -V`, e.g. `0xC0,0x2F`.
        pub code: String,
        /// SSLv2 code of a suite that also existed in SSLv2 under the same name.
        #[serde(default)]
        pub sslv2_code: Option<String>,
        /// Every protocol version that may negotiate it (canonical protocol names).
        pub protocols: Vec<String>,
        /// OpenSSL's Kx label: any, ECDH, DH, RSA, PSK, RSAPSK, DHEPSK, ECDHEPSK, SRP, GOST.
        pub kx: String,
        /// Fixed key-exchange size (EXPORT suites).
        #[serde(default)]
        pub kx_bits: Option<u32>,
        /// OpenSSL's Au label: any, RSA, ECDSA, DSS, PSK, SRP, None, GOST12.
        pub au: String,
        /// OpenSSL's Enc label without the size: AESGCM, CHACHA20/POLY1305, AES, RC4, None...
        pub enc: String,
        /// Encryption key size in bits (0 for NULL).
        pub enc_bits: u32,
        /// OpenSSL's Mac label: AEAD, SHA1, SHA256, SHA384, MD5, GOST89IMIT.
        pub mac: String,
        /// An EXPORT-grade suite.
        #[serde(default)]
        pub export: bool,
    }
}

impl TlsSuite {
    /// The code as bytes (two for TLS, three for SSLv2 kinds); `None` if malformed.
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn code_bytes(&self) -> Option<Vec<u8>> {
        parse_code(&self.code)
    }

    /// The two-byte TLS code as a number (e.g. `0xC02F`); `None` for SSLv2 kinds.
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn code_u16(&self) -> Option<u16> {
        match self.code_bytes()?.as_slice() {
            [hi, lo] => Some(u16::from_be_bytes([*hi, *lo])),
            _ => None,
        }
    }

    /// True for TLS 1.3 suites.
    pub fn is_tls13(&self) -> bool {
        !self.protocols.is_empty() && self.protocols.iter().all(|p| p == "TLSv1.3")
    }
}

/// Parses `0xC0,0x2F` style codes (two or three bytes).
pub(crate) fn parse_code(code: &str) -> Option<Vec<u8>> {
    let bytes: Option<Vec<u8>> = code
        .split(',')
        .map(|part| {
            let hex = part.trim().strip_prefix("0x")?;
            if hex.len() != 2 {
                return None;
            }
            u8::from_str_radix(hex, 16).ok()
        })
        .collect();
    bytes.filter(|b| b.len() == 2 || b.len() == 3)
}

impl Entry for TlsSuite {
    fn domain(&self) -> Domain {
        if self.is_tls13() {
            Domain::Tls13Suite
        } else {
            Domain::Tls12Suite
        }
    }
    fn name(&self) -> &str {
        &self.iana
    }
    fn names(&self) -> Vec<&str> {
        let mut out: Vec<&str> = vec![&self.iana];
        let others = self.openssl.iter().chain(self.openssl_aliases.iter()).chain(self.gnutls.iter());
        for name in others {
            if !out.iter().any(|n| n.eq_ignore_ascii_case(name)) {
                out.push(name);
            }
        }
        out
    }
    fn key_bits(&self) -> Vec<KeyBits> {
        let mut out = vec![bits(KeyKind::Symmetric, self.enc_bits)];
        if let Some(kx_bits) = self.kx_bits {
            let kind = if self.kx.starts_with("RSA") {
                KeyKind::Rsa
            } else {
                KeyKind::FiniteField
            };
            out.push(bits(kind, kx_bits));
        }
        out
    }
}

/// Kind of key-exchange group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GroupKind {
    /// Elliptic-curve Diffie-Hellman.
    Ecdhe,
    /// Named finite-field group (RFC 7919).
    Ffdhe,
    /// Hybrid post-quantum (ML-KEM + ECDH).
    HybridPq,
    /// Post-quantum alone (pure ML-KEM, no classical part).
    PurePq,
    /// Server-chosen DHE parameters of a given size (TLS 1.2 and earlier).
    DhCustom,
}

rated_entry! {
    /// A key-exchange group or DHE size (`[[group]]` in tls.toml).
    pub struct Group {
        pub name: String,
        /// OpenSSL, GnuTLS (`GROUP-X25519`) and NIST spellings.
        #[serde(default)]
        pub aliases: Vec<String>,
        /// IANA supported-group id, e.g. `0x001D`; absent for custom DH sizes.
        #[serde(default)]
        pub code: Option<String>,
        pub kind: GroupKind,
        /// Nominal key size (X25519 counts as 256; hybrids count their classical part).
        pub bits: u32,
    }
}

impl Entry for Group {
    fn domain(&self) -> Domain {
        Domain::Group
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn names(&self) -> Vec<&str> {
        with_aliases(&self.name, &self.aliases)
    }
    fn key_bits(&self) -> Vec<KeyBits> {
        let kind = match self.kind {
            GroupKind::Ecdhe | GroupKind::HybridPq => KeyKind::EllipticCurve,
            GroupKind::Ffdhe | GroupKind::DhCustom => KeyKind::FiniteField,
            // No classical key: no classical key-size rule applies.
            GroupKind::PurePq => return Vec::new(),
        };
        vec![bits(kind, self.bits)]
    }
}

/// Public-key algorithm of a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CertAlgorithm {
    #[serde(rename = "RSA")]
    Rsa,
    #[serde(rename = "ECDSA")]
    Ecdsa,
    #[serde(rename = "EdDSA")]
    EdDsa,
    #[serde(rename = "DSA")]
    Dsa,
}

rated_entry! {
    /// A certificate type (`[[cert]]` in tls.toml).
    pub struct Cert {
        /// e.g. `rsa-2048`, `ecdsa-p256`, `ed25519`.
        pub name: String,
        #[serde(default)]
        pub aliases: Vec<String>,
        pub algorithm: CertAlgorithm,
        pub bits: u32,
    }
}

impl Entry for Cert {
    fn domain(&self) -> Domain {
        Domain::Cert
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn names(&self) -> Vec<&str> {
        with_aliases(&self.name, &self.aliases)
    }
    fn key_bits(&self) -> Vec<KeyBits> {
        let kind = match self.algorithm {
            CertAlgorithm::Rsa => KeyKind::Rsa,
            CertAlgorithm::Dsa => KeyKind::FiniteField,
            CertAlgorithm::Ecdsa | CertAlgorithm::EdDsa => KeyKind::EllipticCurve,
        };
        vec![bits(kind, self.bits)]
    }
}

/// Mode of an SSH cipher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SshCipherMode {
    Aead,
    Ctr,
    Cbc,
    Stream,
    None,
}

rated_entry! {
    /// An OpenSSH cipher (`[[cipher]]` in ssh.toml).
    pub struct SshCipher {
        pub name: String,
        pub key_bits: u32,
        /// Absent for stream ciphers.
        #[serde(default)]
        pub block_bits: Option<u32>,
        pub mode: SshCipherMode,
    }
}

impl Entry for SshCipher {
    fn domain(&self) -> Domain {
        Domain::SshCipher
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn names(&self) -> Vec<&str> {
        vec![&self.name]
    }
    fn key_bits(&self) -> Vec<KeyBits> {
        vec![bits(KeyKind::Symmetric, self.key_bits)]
    }
}

rated_entry! {
    /// An OpenSSH MAC (`[[mac]]` in ssh.toml).
    pub struct SshMac {
        pub name: String,
        pub tag_bits: u32,
        /// Encrypt-then-MAC.
        pub etm: bool,
        pub hash: String,
    }
}

impl Entry for SshMac {
    fn domain(&self) -> Domain {
        Domain::SshMac
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn names(&self) -> Vec<&str> {
        vec![&self.name]
    }
    fn key_bits(&self) -> Vec<KeyBits> {
        Vec::new()
    }
}

/// Method of an SSH key exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KexMethod {
    Ecdh,
    Dh,
    DhGex,
    HybridPq,
    /// Not an algorithm: ext-info-*, kex-strict-*.
    Marker,
}

rated_entry! {
    /// An OpenSSH key exchange method (`[[kex]]` in ssh.toml).
    pub struct SshKex {
        pub name: String,
        pub method: KexMethod,
        #[serde(default)]
        pub hash: Option<String>,
        /// Absent when the server chooses the size (group exchange) or for markers.
        #[serde(default)]
        pub key_bits: Option<u32>,
        /// The same method under another name (see [`Entry::same_as`]).
        #[serde(default)]
        pub same_as: Option<String>,
    }
}

impl Entry for SshKex {
    fn domain(&self) -> Domain {
        Domain::SshKex
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn names(&self) -> Vec<&str> {
        vec![&self.name]
    }
    fn same_as(&self) -> Option<&str> {
        self.same_as.as_deref()
    }
    fn key_bits(&self) -> Vec<KeyBits> {
        let kind = match self.method {
            KexMethod::Ecdh | KexMethod::HybridPq => KeyKind::EllipticCurve,
            KexMethod::Dh | KexMethod::DhGex => KeyKind::FiniteField,
            KexMethod::Marker => return Vec::new(),
        };
        self.key_bits.map(|b| bits(kind, b)).into_iter().collect()
    }
}

/// Key type behind an SSH host-key algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostKeyType {
    Ed25519,
    Ecdsa,
    Rsa,
    Dsa,
    /// A post-quantum signature with a classical one (`ssh-mldsa44-ed25519`).
    #[serde(rename = "hybrid-pq")]
    HybridPq,
}

rated_entry! {
    /// An OpenSSH host-key / signature algorithm (`[[hostkey]]` in ssh.toml).
    pub struct SshHostKey {
        pub name: String,
        pub key_type: HostKeyType,
        pub signature_hash: String,
        #[serde(default)]
        pub certificate: bool,
        /// FIDO security-key backed (`sk-*`).
        #[serde(default)]
        pub security_key: bool,
        /// Absent when it depends on the key (RSA).
        #[serde(default)]
        pub key_bits: Option<u32>,
    }
}

impl Entry for SshHostKey {
    fn domain(&self) -> Domain {
        Domain::SshHostkey
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn names(&self) -> Vec<&str> {
        vec![&self.name]
    }
    fn key_bits(&self) -> Vec<KeyBits> {
        let kind = match self.key_type {
            // A hybrid is held to its classical half's size (Ed25519's).
            HostKeyType::Ed25519 | HostKeyType::Ecdsa | HostKeyType::HybridPq => KeyKind::EllipticCurve,
            HostKeyType::Rsa => KeyKind::Rsa,
            HostKeyType::Dsa => KeyKind::FiniteField,
        };
        self.key_bits.map(|b| bits(kind, b)).into_iter().collect()
    }
}

/// Kind of primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrimitiveKind {
    Cipher,
    Aead,
    Digest,
    Mac,
    /// Key encapsulation (ML-KEM).
    Kem,
    Signature,
}

/// OpenSSL 3 provider that implements a primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Default,
    Legacy,
}

rated_entry! {
    /// An OpenSSL primitive (`[[primitive]]` in primitives.toml).
    pub struct Primitive {
        /// EVP name, lower case.
        pub name: String,
        #[serde(default)]
        pub aliases: Vec<String>,
        pub kind: PrimitiveKind,
        pub family: String,
        #[serde(default)]
        pub mode: Option<String>,
        /// Key size that sets the strength (XTS: one of its two AES keys).
        #[serde(default)]
        pub key_bits: Option<u32>,
        #[serde(default)]
        pub block_bits: Option<u32>,
        /// Digest or tag size.
        #[serde(default)]
        pub output_bits: Option<u32>,
        pub provider: Provider,
    }
}

impl Entry for Primitive {
    fn domain(&self) -> Domain {
        Domain::Primitive
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn names(&self) -> Vec<&str> {
        with_aliases(&self.name, &self.aliases)
    }
    fn key_bits(&self) -> Vec<KeyBits> {
        match self.kind {
            PrimitiveKind::Cipher | PrimitiveKind::Aead => self.key_bits.map(|b| bits(KeyKind::Symmetric, b)).into_iter().collect(),
            PrimitiveKind::Digest | PrimitiveKind::Mac | PrimitiveKind::Kem | PrimitiveKind::Signature => Vec::new(),
        }
    }
}
