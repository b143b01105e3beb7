//! Which primitives of the catalogue a library can run here, and why not: each
//! library answers for itself (`backend::libraries` names the function), so that
//! "legacy provider not loaded" and "not in this build" are told apart by the
//! library. Measuring runs what is available; `list` shows the rest with the reason.

use crate::backend::gnutls;
use crate::backend::record::RecordLoop;
use openssl::cipher::Cipher;
use openssl::md::Md;
use std::sync::Arc;

/// The library side of a primitive, fetched once.
#[derive(Clone)]
pub enum Fetched {
    Cipher(Arc<Cipher>),
    Digest(Arc<Md>),
    Mac,
    /// A GnuTLS algorithm by its GnuTLS name, with cipher sizes for ciphers.
    Gnutls(&'static str, Option<gnutls::CipherInfo>),
    /// An OpenSSL key type (ML-KEM, ML-DSA) by name: its keys can be generated here.
    Pkey(&'static str),
    /// An AEAD through a library's own TLS record protection (rustls).
    Records(RecordSource),
}

/// A library's record protection for one catalogue AEAD: how the probe gets its
/// records, and the library's known-answer check, run before any timing.
#[derive(Clone, Copy)]
pub struct RecordSource {
    /// The catalogue name (`aes-128-gcm`).
    pub aead: &'static str,
    /// Keys a record of `len` bytes and returns the timed loop over it (sealing,
    /// or with `open` opening).
    pub make: fn(aead: &'static str, len: usize, open: bool) -> anyhow::Result<Box<dyn RecordLoop>>,
    /// Checks the library's record against known answers; the sources of the
    /// vectors it used, or what failed.
    pub known_answer: fn(aead: &'static str) -> Result<Vec<String>, String>,
}

/// Whether a library can run a primitive, and why not.
#[derive(Clone)]
pub enum Availability {
    Available(Fetched),
    Unavailable(String),
}
