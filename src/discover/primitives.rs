//! Which primitives of the catalogue each library can run here, and why not:
//! fetched once from the loaded OpenSSL providers or from GnuTLS, so that "legacy
//! provider not loaded" and "not in this build" are told apart by the library
//! itself. Measuring runs what is available; `list` shows the rest with the reason.

use crate::backend::gnutls;
use crate::backend::openssl::engine::{fetch_cipher, fetch_digest};
use crate::backend::openssl::mac::MacCtx;
use crate::backend::openssl::{first_error, legacy_provider, LegacyProvider};
use crate::catalog::{cipher_part, gnutls_name, Class, Library, Primitive};
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
}

/// Whether this OpenSSL can run a primitive, and why not.
#[derive(Clone)]
pub enum Availability {
    Available(Fetched),
    Unavailable(String),
}

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

/// Finds a primitive in GnuTLS: by name, then by a test object, so that "not in
/// this GnuTLS" is decided by the library itself.
pub fn fetch_gnutls(p: &Primitive) -> Availability {
    let Some(name) = gnutls_name(p) else {
        return Availability::Unavailable("not offered by GnuTLS".into());
    };
    let made = match p.class {
        Class::Cipher | Class::Aead(_) => gnutls::cipher_info(name).map(Some),
        Class::CbcHmac(d) => gnutls::Hmac::new(d, b"k").and_then(|_| gnutls::cipher_info(name)).map(Some),
        Class::Digest => gnutls::Hash::new(name).map(|_| None),
        Class::Hmac(_) => gnutls::Hmac::new(name, b"k").map(|_| None),
        Class::Poly1305 | Class::Kem(_) | Class::Signature(_) => return Availability::Unavailable("not offered by GnuTLS".into()),
    };
    match made {
        Ok(info) => Availability::Available(Fetched::Gnutls(name, info)),
        Err(e) => Availability::Unavailable(e.to_string()),
    }
}

/// Fetches a primitive from `lib`.
pub fn fetch_from(p: &Primitive, lib: Library) -> Availability {
    match lib {
        Library::Openssl => fetch(p),
        Library::Gnutls => fetch_gnutls(p),
    }
}
