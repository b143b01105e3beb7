//! The catalogue's primitives as this GnuTLS has them.

use crate::backend::primitives::{Availability, Fetched};
use crate::catalog::{gnutls_name, Class, Primitive};

/// Finds a primitive in GnuTLS: by name, then by a test object, so that "not in
/// this GnuTLS" is decided by the library itself.
pub fn fetch(p: &Primitive) -> Availability {
    let Some(name) = gnutls_name(p) else {
        return Availability::Unavailable("not offered by GnuTLS".into());
    };
    let made = match p.class {
        Class::Cipher | Class::Aead(_) => super::cipher_info(name).map(Some),
        Class::CbcHmac(d) => super::Hmac::new(d, b"k").and_then(|_| super::cipher_info(name)).map(Some),
        Class::Digest => super::Hash::new(name).map(|_| None),
        Class::Hmac(_) => super::Hmac::new(name, b"k").map(|_| None),
        Class::Poly1305 | Class::Kem(_) | Class::Signature(_) => return Availability::Unavailable("not offered by GnuTLS".into()),
    };
    match made {
        Ok(info) => Availability::Available(Fetched::Gnutls(name, info)),
        Err(e) => Availability::Unavailable(e.to_string()),
    }
}
