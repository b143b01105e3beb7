//! The published known-answer vectors (`data/kat/primitives.toml`: NIST SP
//! 800-38A/C/D, RFC 8439, FIPS 180, ...), as plain data: what every library's
//! known-answer check is handed (each library's own check behind
//! `backend::primitives::Source`, OpenSSL's included, called by `measure::kat`),
//! and the one error such a check returns.

use super::Primitive;
use serde::Deserialize;
use std::sync::OnceLock;

const VECTORS: &str = include_str!("../../data/kat/primitives.toml");

/// Every published vector, by kind.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vectors {
    #[serde(default)]
    pub cipher: Vec<CipherVector>,
    #[serde(default)]
    pub digest: Vec<DigestVector>,
    #[serde(default)]
    pub mac: Vec<MacVector>,
    #[serde(default)]
    pub kem: Vec<KemVector>,
}

/// ML-KEM key generation from a seed: the encapsulation key it must give.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KemVector {
    pub algorithm: String,
    pub source: String,
    pub seed: String,
    pub public_key: String,
}

/// A cipher or AEAD vector (hex): `iv` is the nonce of an AEAD, `aad` and `tag`
/// only an AEAD's.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CipherVector {
    pub algorithm: String,
    pub source: String,
    pub key: String,
    pub iv: Option<String>,
    pub plaintext: String,
    pub ciphertext: String,
    pub aad: Option<String>,
    pub tag: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DigestVector {
    pub algorithm: String,
    pub source: String,
    pub message: String,
    pub digest: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MacVector {
    pub algorithm: String,
    pub source: String,
    pub key: String,
    pub message: String,
    pub mac: String,
}

impl Vectors {
    /// The cipher and AEAD vectors named for `p`.
    pub fn ciphers<'a>(&'a self, p: &'a Primitive) -> impl Iterator<Item = &'a CipherVector> + 'a {
        self.cipher.iter().filter(|v| v.algorithm.eq_ignore_ascii_case(p.name))
    }
    /// The digest vectors named for `p`.
    pub fn digests<'a>(&'a self, p: &'a Primitive) -> impl Iterator<Item = &'a DigestVector> + 'a {
        self.digest.iter().filter(|v| v.algorithm.eq_ignore_ascii_case(p.name))
    }
    /// The MAC vectors named for `p`.
    pub fn macs<'a>(&'a self, p: &'a Primitive) -> impl Iterator<Item = &'a MacVector> + 'a {
        self.mac.iter().filter(|v| v.algorithm.eq_ignore_ascii_case(p.name))
    }
    /// The ML-KEM seed vectors named for `p`.
    pub fn kems<'a>(&'a self, p: &'a Primitive) -> impl Iterator<Item = &'a KemVector> + 'a {
        self.kem.iter().filter(|v| v.algorithm.eq_ignore_ascii_case(p.name))
    }
}

/// The vectors of `data/kat/primitives.toml`, read once.
pub fn published() -> &'static Vectors {
    static FILE: OnceLock<Vectors> = OnceLock::new();
    FILE.get_or_init(|| toml::from_str(VECTORS).expect("data/kat/primitives.toml parses (checked by tests)"))
}

/// Why a known-answer check did not pass.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum KatError {
    #[error("no known-answer vector for {0}; refusing to time it")]
    NoVector(String),
    #[error("known-answer test failed ({source_doc}, {op}): expected {expected}, got {got}")]
    Mismatch {
        source_doc: String,
        op: &'static str,
        expected: String,
        got: String,
    },
    #[error("known-answer test could not run ({source_doc}): {message}")]
    Library { source_doc: String, message: String },
    #[error("bad vector in data/kat/primitives.toml: {0}")]
    BadData(String),
}

/// The sources of the vectors that a passing check used.
pub type Passed = Vec<String>;

/// A vector's hex string as bytes (white space ignored).
pub fn unhex(s: &str) -> Result<Vec<u8>, KatError> {
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    hex::decode(&clean).map_err(|e| KatError::BadData(format!("'{s}': {e}")))
}

/// `got` must be `expected`: a mismatch names the vector's source and the operation.
pub fn compare(source: &str, op: &'static str, expected: &[u8], got: &[u8]) -> Result<(), KatError> {
    if expected == got {
        Ok(())
    } else {
        Err(KatError::Mismatch {
            source_doc: source.to_string(),
            op,
            expected: hex::encode(expected),
            got: hex::encode(got),
        })
    }
}
