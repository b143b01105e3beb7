//! The catalogue's primitives as the loaded OpenSSL providers have them, behind
//! the one seam every library uses ([`Source`]): `make` builds the timed loop
//! (`work.rs`), `known_answer` checks OpenSSL's engines against the published
//! vectors it is handed (`kat.rs`).

use super::engine::{fetch_cipher, fetch_digest};
use super::mac::MacCtx;
use super::work::Handle;
use super::{first_error, legacy_provider, LegacyProvider};
use crate::backend::primitives::{Availability, Fetched, Source, TimedLoop};
use crate::catalog::kat::{KatError, Passed, Vectors};
use crate::catalog::{cipher_part, lookup, Class, Op, Primitive};
use anyhow::Result;
use openssl::cipher::Cipher;
use std::sync::Arc;

/// Fetches a primitive from the loaded providers, explaining failures the way a
/// user needs: "legacy provider not loaded" differs from "not in this build".
pub fn fetch(p: &Primitive) -> Availability {
    if p.legacy {
        legacy_provider();
    }
    let fetched = match p.class {
        Class::Kem(alg) | Class::Signature(alg) => {
            return match crate::backend::openssl::pq::available(alg) {
                Ok(()) => available(Handle::Pkey(alg)),
                Err(why) => Availability::Unavailable(why),
            }
        }
        Class::Cipher | Class::Aead(_) => fetch_cipher(p.name).map(|c| Handle::Cipher(Arc::new(c))),
        Class::CbcHmac(d) => MacCtx::hmac(d, b"k")
            .and_then(|_| fetch_cipher(cipher_part(p)))
            .map(|c| Handle::Cipher(Arc::new(c))),
        Class::Digest => fetch_digest(p.name).map(|d| Handle::Digest(Arc::new(d))),
        Class::Hmac(d) => fetch_digest(d).and_then(|_| MacCtx::hmac(d, b"k").map(|_| Handle::Mac)),
        Class::Poly1305 => MacCtx::poly1305(&[7u8; 32]).map(|_| Handle::Mac),
    };
    match fetched {
        Ok(h) => available(h),
        Err(e) => Availability::Unavailable(match (p.legacy, legacy_provider()) {
            (true, LegacyProvider::NotLoaded(why)) => format!("legacy provider not loaded ({why})"),
            _ => format!("not in this build ({})", first_error(&e)),
        }),
    }
}

fn available(h: Handle) -> Availability {
    Availability::Available(Arc::new(Algorithm(h)))
}

/// OpenSSL's cipher behind what `fetch` gave, for the file command's own
/// EVP encryption; `None` for anything else (another library's, a digest).
pub fn cipher(f: &Fetched) -> Option<Arc<Cipher>> {
    match f.as_any()?.downcast_ref::<Algorithm>()? {
        Algorithm(Handle::Cipher(c)) => Some(c.clone()),
        _ => None,
    }
}

/// A catalogue primitive as OpenSSL fetched it.
pub struct Algorithm(Handle);

impl Source for Algorithm {
    fn make(&self, p: &Primitive, op: Op, len: usize) -> Result<Box<dyn TimedLoop>> {
        super::work::make(p, &self.0, op, len)
    }
    fn known_answer(&self, p: &Primitive, vectors: &Vectors) -> Result<Passed, KatError> {
        match p.class {
            Class::CbcHmac(d) => check_composite(p, d, vectors),
            _ => super::kat::check(p, &self.0, vectors),
        }
    }
    fn key_bits(&self) -> Option<usize> {
        match &self.0 {
            Handle::Cipher(c) => Some(c.key_length() * 8),
            _ => None,
        }
    }
    fn block_bytes(&self) -> Option<usize> {
        match &self.0 {
            Handle::Cipher(c) => Some(c.block_size()),
            Handle::Digest(m) => Some(m.block_size()),
            _ => None,
        }
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// A composite is checked part by part: its cipher's vectors and its HMAC's.
fn check_composite(p: &Primitive, d: &str, f: &Vectors) -> Result<Passed, KatError> {
    let parts = [cipher_part(p), if d == "SHA1" { "hmac-sha1" } else { "hmac-sha256" }];
    let mut passed = Vec::new();
    for part in parts {
        let pp = lookup(part).ok_or_else(|| KatError::NoVector(part.into()))?;
        match fetch(pp) {
            Availability::Available(s) => passed.extend(s.known_answer(pp, f)?),
            Availability::Unavailable(why) => {
                return Err(KatError::Library {
                    source_doc: part.into(),
                    message: why,
                })
            }
        }
    }
    Ok(passed)
}
