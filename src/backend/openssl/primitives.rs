//! The catalogue's primitives as the loaded OpenSSL providers have them.

use super::engine::{fetch_cipher, fetch_digest};
use super::mac::MacCtx;
use super::{first_error, legacy_provider, LegacyProvider};
use crate::backend::primitives::{Availability, Fetched};
use crate::catalog::{cipher_part, Class, Primitive};
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
                Ok(()) => Availability::Available(Fetched::Pkey(alg)),
                Err(why) => Availability::Unavailable(why),
            }
        }
        Class::Cipher | Class::Aead(_) => fetch_cipher(p.name).map(|c| Fetched::Cipher(Arc::new(c))),
        Class::CbcHmac(d) => MacCtx::hmac(d, b"k")
            .and_then(|_| fetch_cipher(cipher_part(p)))
            .map(|c| Fetched::Cipher(Arc::new(c))),
        Class::Digest => fetch_digest(p.name).map(|d| Fetched::Digest(Arc::new(d))),
        Class::Hmac(d) => fetch_digest(d).and_then(|_| MacCtx::hmac(d, b"k").map(|_| Fetched::Mac)),
        Class::Poly1305 => MacCtx::poly1305(&[7u8; 32]).map(|_| Fetched::Mac),
    };
    match fetched {
        Ok(f) => Availability::Available(f),
        Err(e) => Availability::Unavailable(match (p.legacy, legacy_provider()) {
            (true, LegacyProvider::NotLoaded(why)) => format!("legacy provider not loaded ({why})"),
            _ => format!("not in this build ({})", first_error(&e)),
        }),
    }
}
