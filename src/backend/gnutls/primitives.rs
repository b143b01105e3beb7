//! The catalogue's primitives as this GnuTLS has them, behind the one seam every
//! library uses ([`Source`]): `make` builds the timed loop (`work.rs`),
//! `known_answer` checks GnuTLS against the published vectors it is handed.

use super::{Cipher, CipherInfo, GnutlsError, Hash, Hmac};
use crate::backend::primitives::{Availability, Source, TimedLoop};
use crate::catalog::kat::{compare, unhex, CipherVector, KatError, Passed, Vectors};
use crate::catalog::{cipher_part, lookup, Class, Op, Primitive};
use anyhow::Result;
use std::sync::Arc;

/// GnuTLS's name for a catalogue primitive, where GnuTLS has it.
fn gnutls_name(p: &Primitive) -> Option<&'static str> {
    Some(match p.name {
        "aes-128-gcm" => "AES-128-GCM",
        "aes-256-gcm" => "AES-256-GCM",
        "aes-128-ccm" => "AES-128-CCM",
        "aes-256-ccm" => "AES-256-CCM",
        "chacha20-poly1305" => "CHACHA20-POLY1305",
        "aes-128-cbc" | "aes-128-cbc-hmac-sha1" | "aes-128-cbc-hmac-sha256" => "AES-128-CBC",
        "aes-192-cbc" => "AES-192-CBC",
        "aes-256-cbc" => "AES-256-CBC",
        "camellia-128-cbc" => "CAMELLIA-128-CBC",
        "camellia-192-cbc" => "CAMELLIA-192-CBC",
        "camellia-256-cbc" => "CAMELLIA-256-CBC",
        "des-ede3-cbc" => "3DES-CBC",
        "des-cbc" => "DES-CBC",
        "rc4" => "ARCFOUR-128",
        "md5" | "hmac-md5" => "MD5",
        "sha1" | "hmac-sha1" => "SHA1",
        "sha224" => "SHA224",
        "sha256" | "hmac-sha256" => "SHA256",
        "sha384" => "SHA384",
        "sha512" => "SHA512",
        "sha3-256" => "SHA3-256",
        _ => return None,
    })
}

/// Finds a primitive in GnuTLS: by name, then by a test object, so that "not in
/// this GnuTLS" is decided by the library itself.
pub fn fetch(p: &Primitive) -> Availability {
    let Some(name) = gnutls_name(p) else {
        return Availability::Unavailable("not offered by GnuTLS".into());
    };
    let made = match p.class {
        Class::Cipher | Class::Aead(_) => super::cipher_info(name).map(Some),
        Class::CbcHmac(d) => Hmac::new(d, b"k").and_then(|_| super::cipher_info(name)).map(Some),
        Class::Digest => Hash::new(name).map(|_| None),
        Class::Hmac(_) => Hmac::new(name, b"k").map(|_| None),
        Class::Poly1305 | Class::Kem(_) | Class::Signature(_) => return Availability::Unavailable("not offered by GnuTLS".into()),
    };
    match made {
        Ok(info) => Availability::Available(Arc::new(Algorithm { name, info })),
        Err(e) => Availability::Unavailable(e.to_string()),
    }
}

/// A catalogue primitive in GnuTLS: its GnuTLS name, with the cipher's sizes
/// for ciphers, AEADs and CBC records.
pub struct Algorithm {
    name: &'static str,
    info: Option<CipherInfo>,
}

impl Source for Algorithm {
    fn make(&self, p: &Primitive, op: Op, len: usize) -> Result<Box<dyn TimedLoop>> {
        super::work::make(p, self.name, self.info, op, len)
    }
    fn known_answer(&self, p: &Primitive, vectors: &Vectors) -> Result<Passed, KatError> {
        match p.class {
            Class::CbcHmac(d) => check_composite(p, d, vectors),
            _ => check(p, self.name, self.info, vectors),
        }
    }
    fn key_bits(&self) -> Option<usize> {
        self.info.map(|i| i.key_len * 8)
    }
    fn block_bytes(&self) -> Option<usize> {
        self.info.map(|i| i.block)
    }
}

fn library(source: &str, e: GnutlsError) -> KatError {
    KatError::Library {
        source_doc: source.to_string(),
        message: e.to_string(),
    }
}

/// Every vector named for `p` through GnuTLS (`name`): ciphers, digests, MACs.
fn check(p: &Primitive, name: &str, info: Option<CipherInfo>, vectors: &Vectors) -> Result<Passed, KatError> {
    let mut passed = Vec::new();
    for v in vectors.ciphers(p) {
        let info = info.ok_or_else(|| KatError::BadData(format!("{name} has no cipher sizes")))?;
        check_cipher(p, &info, v)?;
        passed.push(v.source.clone());
    }
    for v in vectors.digests(p) {
        let mut h = Hash::new(name).map_err(|e| library(&v.source, e))?;
        let mut out = [0u8; 64];
        for _ in 0..2 {
            let n = h.digest(&unhex(&v.message)?, &mut out).map_err(|e| library(&v.source, e))?;
            compare(&v.source, "digest", &unhex(&v.digest)?, &out[..n])?;
        }
        passed.push(v.source.clone());
    }
    for v in vectors.macs(p) {
        let mut m = Hmac::new(name, &unhex(&v.key)?).map_err(|e| library(&v.source, e))?;
        let mut out = [0u8; 64];
        for _ in 0..2 {
            let n = m.mac(&unhex(&v.message)?, &mut out).map_err(|e| library(&v.source, e))?;
            compare(&v.source, "mac", &unhex(&v.mac)?, &out[..n])?;
        }
        passed.push(v.source.clone());
    }
    Ok(passed)
}

/// A CBC record is checked part by part, each part as GnuTLS has it: its
/// cipher's vectors and its HMAC's.
fn check_composite(p: &Primitive, d: &str, vectors: &Vectors) -> Result<Passed, KatError> {
    let parts = [cipher_part(p), if d == "SHA1" { "hmac-sha1" } else { "hmac-sha256" }];
    let mut passed = Vec::new();
    for part in parts {
        let pp = lookup(part).ok_or_else(|| KatError::NoVector(part.into()))?;
        match fetch(pp) {
            Availability::Available(s) => {
                let got = s.known_answer(pp, vectors)?;
                if got.is_empty() {
                    return Err(KatError::NoVector(part.into()));
                }
                passed.extend(got);
            }
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

/// The same vectors through GnuTLS's cipher and AEAD APIs.
fn check_cipher(p: &Primitive, info: &CipherInfo, v: &CipherVector) -> Result<(), KatError> {
    let lib = |e| library(&v.source, e);
    let key = unhex(&v.key)?;
    let iv = v.iv.as_deref().map(unhex).transpose()?.unwrap_or_default();
    let pt = unhex(&v.plaintext)?;
    let ct = unhex(&v.ciphertext)?;
    if let Class::Aead(_) = p.class {
        let aad = v.aad.as_deref().map(unhex).transpose()?.unwrap_or_default();
        let tag = unhex(
            v.tag
                .as_deref()
                .ok_or_else(|| KatError::BadData(format!("{}: AEAD vector without tag", v.source)))?,
        )?;
        let mut aead = super::Aead::new(info, &key).map_err(lib)?;
        let mut sealed = vec![0u8; pt.len() + tag.len()];
        let n = aead.seal(&iv, &aad, tag.len(), &pt, &mut sealed).map_err(lib)?;
        compare(&v.source, "encrypt", &[&ct[..], &tag[..]].concat(), &sealed[..n])?;
        let mut out = vec![0u8; pt.len() + tag.len()];
        let m = aead.open(&iv, &aad, tag.len(), &sealed[..n], &mut out).map_err(lib)?;
        compare(&v.source, "decrypt", &pt, &out[..m])?;
        sealed[n - 1] ^= 1;
        if aead.open(&iv, &aad, tag.len(), &sealed[..n], &mut out).is_ok() {
            return Err(KatError::Mismatch {
                source_doc: v.source.clone(),
                op: "tag check",
                expected: "rejection of a forged tag".into(),
                got: "acceptance".into(),
            });
        }
        return Ok(());
    }
    let mut buf = pt.clone();
    Cipher::new(info, &key, &iv).map_err(lib)?.encrypt(&mut buf).map_err(lib)?;
    compare(&v.source, "encrypt", &ct, &buf)?;
    Cipher::new(info, &key, &iv).map_err(lib)?.decrypt(&mut buf).map_err(lib)?;
    compare(&v.source, "decrypt", &pt, &buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::kat::published;
    use crate::catalog::CATALOG;

    fn source(name: &str) -> (&'static Primitive, Arc<dyn Source>) {
        let p = lookup(name).unwrap();
        match fetch(p) {
            Availability::Available(s) => (p, s),
            Availability::Unavailable(why) => panic!("{name}: {why} (libgnutls30 is installed by make test)"),
        }
    }

    /// Every primitive GnuTLS offers passes the same published vectors through GnuTLS.
    #[test]
    fn every_gnutls_primitive_passes_its_known_answer_test() {
        let mut failures = Vec::new();
        let mut checked = 0;
        for p in CATALOG {
            if let Availability::Available(s) = fetch(p) {
                checked += 1;
                match s.known_answer(p, published()) {
                    Ok(passed) if passed.is_empty() => failures.push(format!("{}: no vector", p.name)),
                    Ok(_) => {}
                    Err(e) => failures.push(format!("{}: {e}", p.name)),
                }
            }
        }
        assert!(checked >= 15, "only {checked} GnuTLS primitives available");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// The check can fail: a vector with one ciphertext byte altered is a
    /// mismatch in GnuTLS's cipher, in a digest and in a CBC record's parts.
    #[test]
    fn a_wrong_vector_fails_in_gnutls() {
        let (p, s) = source("aes-128-cbc");
        let good = published().ciphers(p).next().expect("an aes-128-cbc vector");
        let mut ct = unhex(&good.ciphertext).unwrap();
        ct[0] ^= 1;
        let altered = |ciphertext: String| CipherVector {
            algorithm: good.algorithm.clone(),
            source: good.source.clone(),
            key: good.key.clone(),
            iv: good.iv.clone(),
            plaintext: good.plaintext.clone(),
            ciphertext,
            aad: None,
            tag: None,
        };
        let wrong = Vectors {
            cipher: vec![altered(hex::encode(&ct))],
            ..Default::default()
        };
        assert!(matches!(s.known_answer(p, &wrong), Err(KatError::Mismatch { .. })));
        let (cbc, cbc_source) = source("aes-128-cbc-hmac-sha1");
        assert!(matches!(cbc_source.known_answer(cbc, &wrong), Err(KatError::Mismatch { .. })));
        let right = Vectors {
            cipher: vec![altered(good.ciphertext.clone())],
            ..Default::default()
        };
        assert_eq!(s.known_answer(p, &right), Ok(vec![good.source.clone()]));
        // Without the HMAC's vectors the CBC record is not checked, so not timed.
        assert_eq!(cbc_source.known_answer(cbc, &right), Err(KatError::NoVector("hmac-sha1".into())));
        let (sha, sha_source) = source("sha256");
        let good = published().digests(sha).next().expect("a sha256 vector");
        let wrong = Vectors {
            digest: vec![crate::catalog::kat::DigestVector {
                algorithm: good.algorithm.clone(),
                source: good.source.clone(),
                message: good.message.clone(),
                digest: format!("00{}", &good.digest[2..]),
            }],
            ..Default::default()
        };
        assert!(matches!(sha_source.known_answer(sha, &wrong), Err(KatError::Mismatch { .. })));
    }
}
