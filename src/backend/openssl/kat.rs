//! OpenSSL's known-answer tests: before an algorithm is timed, the very engine
//! methods its timed loop (`work.rs`) will call must reproduce a published vector
//! (NIST SP 800-38A/C/D, RFC 8439, FIPS 180, ...), handed in by the run
//! (`catalog::kat`, through `Source::known_answer`).

use super::engine::{CipherEngine, DigestEngine, Direction};
use super::first_error;
use super::mac::MacCtx;
use super::work::Handle;
use crate::catalog::kat::{compare, unhex, CipherVector, DigestVector, KatError, KemVector, MacVector, Passed, Vectors};
use crate::catalog::{Class, Primitive};

/// An ML-KEM round trip through the engines the probe uses: decapsulation
/// recovers the encapsulated secret, twice; a tampered ciphertext gives another
/// secret (FIPS 203's implicit rejection), the same one each time; a ciphertext
/// of the wrong length is refused.
fn check_kem(alg: &str) -> Result<String, KatError> {
    use crate::backend::openssl::pq::{Decapsulator, Encapsulator, KeyGen};
    let source = format!("FIPS 203 round trip ({alg})");
    let lib = |e| KatError::Library {
        source_doc: source.clone(),
        message: first_error(&e),
    };
    let key = KeyGen::new(alg).and_then(|mut g| g.generate()).map_err(lib)?;
    let (mut ct, ss) = super::pqwork::encapsulation(&mut Encapsulator::new(&key).map_err(lib)?).map_err(lib)?;
    let mut dec = Decapsulator::new(&key).map_err(lib)?;
    let mut got = vec![0u8; ss.len()];
    for _ in 0..2 {
        let n = dec.decapsulate(&ct, &mut got).map_err(lib)?;
        compare(&source, "decaps", &ss, &got[..n])?;
    }
    ct[0] ^= 1;
    let n = dec.decapsulate(&ct, &mut got).map_err(lib)?;
    let rejected = got[..n].to_vec();
    let again = dec.decapsulate(&ct, &mut got).map_err(lib)?;
    if rejected == ss || got[..again] != rejected[..] {
        return Err(KatError::Mismatch {
            source_doc: source,
            op: "implicit rejection",
            expected: "another secret, the same each time".into(),
            got: hex::encode(&rejected),
        });
    }
    if dec.decapsulate(&ct[1..], &mut got).is_ok() {
        return Err(KatError::Mismatch {
            source_doc: source,
            op: "decaps",
            expected: "a short ciphertext refused".into(),
            got: "accepted".into(),
        });
    }
    Ok(source)
}

/// A published ML-KEM key generation vector: the seed must give its public key.
fn check_kem_seed(alg: &str, v: &KemVector) -> Result<(), KatError> {
    use crate::backend::openssl::pq::KeyGen;
    let lib = |e| KatError::Library {
        source_doc: v.source.clone(),
        message: first_error(&e),
    };
    let key = KeyGen::with_seed(alg, &unhex(&v.seed)?)
        .and_then(|mut g| g.generate())
        .map_err(lib)?;
    compare(&v.source, "keygen", &unhex(&v.public_key)?, &key.public_key().map_err(lib)?)
}

/// An ML-DSA round trip through the engines the probe uses: a signature
/// verifies, twice; a flipped signature byte or message byte fails.
fn check_signature(alg: &str) -> Result<String, KatError> {
    use crate::backend::openssl::pq::{KeyGen, SigCtx};
    let source = format!("FIPS 204 round trip ({alg})");
    let lib = |e| KatError::Library {
        source_doc: source.clone(),
        message: first_error(&e),
    };
    let key = KeyGen::new(alg).and_then(|mut g| g.generate()).map_err(lib)?;
    let mut ctx = SigCtx::new(key).map_err(lib)?;
    let mut msg = b"cipherbench known-answer message".to_vec();
    let mut sig = vec![0u8; ctx.max_len];
    let n = ctx.sign(&msg, &mut sig).map_err(lib)?;
    sig.truncate(n);
    let mut outcomes = vec![ctx.verify(&msg, &sig).map_err(lib)?, ctx.verify(&msg, &sig).map_err(lib)?];
    sig[n / 2] ^= 0x10;
    outcomes.push(ctx.verify(&msg, &sig).map_err(lib)?);
    sig[n / 2] ^= 0x10;
    msg[0] ^= 1;
    outcomes.push(ctx.verify(&msg, &sig).map_err(lib)?);
    if outcomes != [true, true, false, false] {
        return Err(KatError::Mismatch {
            source_doc: source,
            op: "verify (good, good, flipped signature, flipped message)",
            expected: "[true, true, false, false]".into(),
            got: format!("{outcomes:?}"),
        });
    }
    Ok(source)
}

/// Runs every vector for `p` in `f` through the engines the timed loop uses (a
/// TLS 1.2 CBC record is checked part by part, in `primitives.rs`).
pub fn check(p: &Primitive, h: &Handle, f: &Vectors) -> Result<Passed, KatError> {
    let mut passed = Vec::new();
    match (p.class, h) {
        (Class::Cipher | Class::Aead(_), Handle::Cipher(c)) => {
            for v in f.ciphers(p) {
                check_cipher(p, c, v)?;
                passed.push(v.source.clone());
            }
        }
        (Class::Digest, Handle::Digest(md)) => {
            for v in f.digests(p) {
                check_digest(md, v)?;
                passed.push(v.source.clone());
            }
        }
        (Class::Hmac(_) | Class::Poly1305, Handle::Mac) => {
            for v in f.macs(p) {
                check_mac(p, v)?;
                passed.push(v.source.clone());
            }
        }
        (Class::Kem(alg), Handle::Pkey(_)) => {
            passed.push(check_kem(alg)?);
            for v in f.kems(p) {
                check_kem_seed(alg, v)?;
                passed.push(v.source.clone());
            }
        }
        (Class::Signature(alg), Handle::Pkey(_)) => passed.push(check_signature(alg)?),
        _ => return Err(KatError::NoVector(p.name.to_string())),
    }
    if passed.is_empty() {
        return Err(KatError::NoVector(p.name.to_string()));
    }
    Ok(passed)
}

/// One digest vector through OpenSSL's digest engine, twice (the second proves
/// the context re-initialises per message).
fn check_digest(md: &std::sync::Arc<openssl::md::Md>, v: &DigestVector) -> Result<(), KatError> {
    let lib = |e| KatError::Library {
        source_doc: v.source.clone(),
        message: first_error(&e),
    };
    let mut engine = DigestEngine::new(md.clone()).map_err(lib)?;
    let msg = unhex(&v.message)?;
    for _ in 0..2 {
        let got = engine.digest(&msg).map_err(lib)?.to_vec();
        compare(&v.source, "digest", &unhex(&v.digest)?, &got)?;
    }
    Ok(())
}

/// One MAC vector (HMAC or Poly1305) through OpenSSL's EVP_MAC, twice.
fn check_mac(p: &Primitive, v: &MacVector) -> Result<(), KatError> {
    let lib = |e| KatError::Library {
        source_doc: v.source.clone(),
        message: first_error(&e),
    };
    let key = unhex(&v.key)?;
    let mut ctx = match p.class {
        Class::Hmac(d) => MacCtx::hmac(d, &key),
        _ => MacCtx::poly1305(&key),
    }
    .map_err(lib)?;
    let msg = unhex(&v.message)?;
    let mut out = [0u8; 64];
    for _ in 0..2 {
        let n = ctx.mac_message(&msg, &mut out).map_err(lib)?;
        compare(&v.source, "mac", &unhex(&v.mac)?, &out[..n])?;
    }
    Ok(())
}

fn check_cipher(p: &Primitive, c: &openssl::cipher::CipherRef, v: &CipherVector) -> Result<(), KatError> {
    let lib = |e: openssl::error::ErrorStack| KatError::Library {
        source_doc: v.source.clone(),
        message: first_error(&e),
    };
    let key = unhex(&v.key)?;
    let iv = v.iv.as_deref().map(unhex).transpose()?;
    let pt = unhex(&v.plaintext)?;
    let ct = unhex(&v.ciphertext)?;
    match p.class {
        Class::Aead(kind) => {
            let aad = v.aad.as_deref().map(unhex).transpose()?.unwrap_or_default();
            let tag = unhex(
                v.tag
                    .as_deref()
                    .ok_or_else(|| KatError::BadData(format!("{}: AEAD vector without tag", v.source)))?,
            )?;
            let nonce = iv.ok_or_else(|| KatError::BadData(format!("{}: AEAD vector without nonce", v.source)))?;
            let mut seal = CipherEngine::new(c, Some(kind), Direction::Encrypt, &key, Some(&nonce), tag.len()).map_err(lib)?;
            let mut buf = pt.clone();
            buf.resize(pt.len() + seal.slack() + 16, 0);
            let mut got_tag = vec![0u8; tag.len()];
            let n = seal.seal(&nonce, &aad, &mut buf, pt.len(), &mut got_tag).map_err(lib)?;
            compare(&v.source, "encrypt", &ct, &buf[..n])?;
            compare(&v.source, "tag", &tag, &got_tag)?;
            let mut open = CipherEngine::new(c, Some(kind), Direction::Decrypt, &key, Some(&nonce), tag.len()).map_err(lib)?;
            let mut out = vec![0u8; ct.len() + 32];
            let m = open.open(&nonce, &aad, &ct, &mut out, &tag).map_err(lib)?;
            compare(&v.source, "decrypt", &pt, &out[..m])?;
            // A forged tag must be refused, or decryption is not really verifying.
            let mut forged = tag.clone();
            forged[0] ^= 1;
            if open.open(&nonce, &aad, &ct, &mut out, &forged).is_ok() {
                return Err(KatError::Mismatch {
                    source_doc: v.source.clone(),
                    op: "tag check",
                    expected: "rejection of a forged tag".into(),
                    got: "acceptance".into(),
                });
            }
        }
        _ => {
            for (dir, input, want, op) in [(Direction::Encrypt, &pt, &ct, "encrypt"), (Direction::Decrypt, &ct, &pt, "decrypt")] {
                let mut e = CipherEngine::new(c, None, dir, &key, iv.as_deref(), 0).map_err(lib)?;
                let mut buf = input.clone();
                buf.resize(input.len() + e.slack(), 0);
                let n = e.stream(&mut buf, input.len()).map_err(lib)?;
                let mut tail = vec![0u8; 32];
                let f = e.finish(&mut tail).map_err(lib)?;
                let mut got = buf[..n].to_vec();
                got.extend_from_slice(&tail[..f]);
                compare(&v.source, op, want, &got)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::kat::published;
    use crate::catalog::lookup;

    /// The published ML-KEM seed vector passes, and the same vector with one
    /// seed byte changed fails (OpenSSL 3.5 and later; skipped before).
    #[test]
    fn the_ml_kem_seed_vector_passes_and_a_changed_seed_fails() {
        if let Err(why) = crate::backend::openssl::pq::available("ML-KEM-768") {
            eprintln!("skipped: {why}");
            assert!(why.contains("needs 3.5"), "{why}");
            return;
        }
        let v = &published().kem[0];
        assert_eq!(check_kem_seed("ML-KEM-768", v), Ok(()));
        let mut seed = unhex(&v.seed).unwrap();
        seed[0] ^= 1;
        let changed = KemVector {
            algorithm: v.algorithm.clone(),
            source: v.source.clone(),
            seed: hex::encode(seed),
            public_key: v.public_key.clone(),
        };
        assert!(matches!(check_kem_seed("ML-KEM-768", &changed), Err(KatError::Mismatch { .. })));
    }

    /// A wrong expected value is caught: the check can fail.
    #[test]
    fn a_wrong_vector_fails() {
        let p = lookup("aes-128-ecb").unwrap();
        let c = super::super::engine::fetch_cipher(p.name).unwrap();
        let v = CipherVector {
            algorithm: "aes-128-ecb".into(),
            source: "NIST SP 800-38A F.1.1, last byte altered".into(),
            key: "2b7e151628aed2a6abf7158809cf4f3c".into(),
            iv: None,
            plaintext: "6bc1bee22e409f96e93d7e117393172a".into(),
            ciphertext: "3ad77bb40d7a3660a89ecaf32466ef98".into(),
            aad: None,
            tag: None,
        };
        assert!(matches!(check_cipher(p, &c, &v), Err(KatError::Mismatch { .. })));
        let good = CipherVector {
            ciphertext: "3ad77bb40d7a3660a89ecaf32466ef97".into(),
            ..v
        };
        assert_eq!(check_cipher(p, &c, &good), Ok(()));
    }
}
