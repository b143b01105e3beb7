//! ML-KEM (FIPS 203) and ML-DSA (FIPS 204) through the EVP_PKEY API: key
//! generation, encapsulation and decapsulation, one-shot signing and verifying.
//!
//! The `openssl` crate has no KEM or ML-DSA wrapper, so this file keeps owned
//! contexts with RAII frees and `unsafe` inside. Every symbol used exists in
//! OpenSSL 3.0 (the binary still loads on Debian 12); whether the algorithms
//! exist is the loaded providers' answer at run time (OpenSSL 3.5 has them).

use super::ffi;
use openssl::error::ErrorStack;
use openssl_sys as sys;
use std::ffi::{c_int, CString};
use std::ptr;

fn cvt(r: c_int) -> Result<(), ErrorStack> {
    if r <= 0 {
        Err(ErrorStack::get())
    } else {
        Ok(())
    }
}

fn cvt_p<T>(p: *mut T) -> Result<*mut T, ErrorStack> {
    if p.is_null() {
        Err(ErrorStack::get())
    } else {
        Ok(p)
    }
}

/// An owned EVP_PKEY_CTX.
struct Ctx(*mut sys::EVP_PKEY_CTX);

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { sys::EVP_PKEY_CTX_free(self.0) }
    }
}

impl Ctx {
    /// A context for `alg` by name (no key yet: key generation).
    fn from_name(alg: &str) -> Result<Ctx, ErrorStack> {
        let name = CString::new(alg).expect("algorithm names have no NUL");
        // SAFETY: the name outlives the call; a null library context is the default one.
        let p = unsafe { sys::EVP_PKEY_CTX_new_from_name(ptr::null_mut(), name.as_ptr(), ptr::null()) };
        Ok(Ctx(cvt_p(p)?))
    }
    /// A context over `key` (encapsulation, decapsulation).
    fn from_key(key: &PqKey) -> Result<Ctx, ErrorStack> {
        // SAFETY: the context takes its own reference to the key.
        let p = unsafe { sys::EVP_PKEY_CTX_new(key.0, ptr::null_mut()) };
        Ok(Ctx(cvt_p(p)?))
    }
}

/// An owned ML-KEM or ML-DSA key pair.
pub struct PqKey(*mut sys::EVP_PKEY);

// SAFETY: an EVP_PKEY is reference-counted; a key is used by one thread at a time.
unsafe impl Send for PqKey {}

impl Drop for PqKey {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { sys::EVP_PKEY_free(self.0) }
    }
}

impl PqKey {
    /// The encoded public key (ML-KEM's encapsulation key, ML-DSA's verification key).
    pub fn public_key(&self) -> Result<Vec<u8>, ErrorStack> {
        let mut len = 0usize;
        // SAFETY: a null buffer asks for the length; then the buffer has that length.
        unsafe {
            cvt(sys::EVP_PKEY_get_raw_public_key(self.0, ptr::null_mut(), &mut len))?;
            let mut out = vec![0u8; len];
            cvt(sys::EVP_PKEY_get_raw_public_key(self.0, out.as_mut_ptr(), &mut len))?;
            out.truncate(len);
            Ok(out)
        }
    }
}

/// Key generation for one algorithm, its context built once.
pub struct KeyGen {
    ctx: Ctx,
}

// SAFETY: the context moves between threads, it is never shared.
unsafe impl Send for KeyGen {}

impl KeyGen {
    /// `alg`: "ML-KEM-768", "ML-DSA-65" ... Fails when the providers lack it.
    pub fn new(alg: &str) -> Result<KeyGen, ErrorStack> {
        let ctx = Ctx::from_name(alg)?;
        // SAFETY: a valid context.
        cvt(unsafe { sys::EVP_PKEY_keygen_init(ctx.0) })?;
        Ok(KeyGen { ctx })
    }

    /// Key generation from a fixed seed (`seed`: ML-KEM's d || z, ML-DSA's ξ):
    /// the same seed gives the same key, which published vectors check.
    pub fn with_seed(alg: &str, seed: &[u8]) -> Result<KeyGen, ErrorStack> {
        let g = KeyGen::new(alg)?;
        let mut buf = seed.to_vec();
        // SAFETY: the parameters point into `buf` and the key name, both alive over the call.
        unsafe {
            let params = [
                sys::OSSL_PARAM_construct_octet_string(c"seed".as_ptr(), buf.as_mut_ptr().cast(), buf.len()),
                sys::OSSL_PARAM_construct_end(),
            ];
            cvt(sys::EVP_PKEY_CTX_set_params(g.ctx.0, params.as_ptr()))?;
        }
        Ok(g)
    }

    pub fn generate(&mut self) -> Result<PqKey, ErrorStack> {
        let mut key = ptr::null_mut();
        // SAFETY: a keygen-initialised context; the new key is owned by the PqKey.
        cvt(unsafe { sys::EVP_PKEY_keygen(self.ctx.0, &mut key) })?;
        Ok(PqKey(cvt_p(key)?))
    }
}

/// Encapsulation against one public key, its context built once.
pub struct Encapsulator {
    ctx: Ctx,
    /// Ciphertext and shared-secret lengths.
    pub lengths: (usize, usize),
}

// SAFETY: the context moves between threads, it is never shared.
unsafe impl Send for Encapsulator {}

impl Encapsulator {
    pub fn new(key: &PqKey) -> Result<Encapsulator, ErrorStack> {
        let ctx = Ctx::from_key(key)?;
        let (mut ct, mut ss) = (0usize, 0usize);
        // SAFETY: a valid context; null outputs ask for the lengths.
        unsafe {
            cvt(sys::EVP_PKEY_encapsulate_init(ctx.0, ptr::null()))?;
            cvt(sys::EVP_PKEY_encapsulate(ctx.0, ptr::null_mut(), &mut ct, ptr::null_mut(), &mut ss))?;
        }
        Ok(Encapsulator { ctx, lengths: (ct, ss) })
    }

    /// A fresh encapsulation into `ct` and `ss` (at least `lengths` long).
    pub fn encapsulate(&mut self, ct: &mut [u8], ss: &mut [u8]) -> Result<(), ErrorStack> {
        assert!(ct.len() >= self.lengths.0 && ss.len() >= self.lengths.1);
        let (mut c, mut s) = self.lengths;
        // SAFETY: both buffers are at least as long as the lengths given.
        cvt(unsafe { sys::EVP_PKEY_encapsulate(self.ctx.0, ct.as_mut_ptr(), &mut c, ss.as_mut_ptr(), &mut s) })
    }
}

/// Decapsulation with one private key, its context built once.
pub struct Decapsulator {
    ctx: Ctx,
}

// SAFETY: the context moves between threads, it is never shared.
unsafe impl Send for Decapsulator {}

impl Decapsulator {
    pub fn new(key: &PqKey) -> Result<Decapsulator, ErrorStack> {
        let ctx = Ctx::from_key(key)?;
        // SAFETY: a valid context.
        cvt(unsafe { sys::EVP_PKEY_decapsulate_init(ctx.0, ptr::null()) })?;
        Ok(Decapsulator { ctx })
    }

    /// The shared secret of `ct` into `ss`; its length.
    pub fn decapsulate(&mut self, ct: &[u8], ss: &mut [u8]) -> Result<usize, ErrorStack> {
        let mut n = ss.len();
        // SAFETY: `ss` is `n` bytes long; `ct` is read only.
        cvt(unsafe { sys::EVP_PKEY_decapsulate(self.ctx.0, ss.as_mut_ptr(), &mut n, ct.as_ptr(), ct.len()) })?;
        Ok(n)
    }
}

/// One-shot signing and verifying with no digest (ML-DSA signs the message
/// itself): `EVP_DigestSignInit_ex` / `EVP_DigestSign` on one EVP_MD_CTX,
/// initialised again for every message as the API requires.
pub struct SigCtx {
    md: *mut sys::EVP_MD_CTX,
    key: PqKey,
    /// The largest signature.
    pub max_len: usize,
}

// SAFETY: the contexts move between threads, they are never shared.
unsafe impl Send for SigCtx {}

impl Drop for SigCtx {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { sys::EVP_MD_CTX_free(self.md) }
    }
}

impl SigCtx {
    pub fn new(key: PqKey) -> Result<SigCtx, ErrorStack> {
        // SAFETY: a new context, owned by the SigCtx.
        let md = cvt_p(unsafe { sys::EVP_MD_CTX_new() })?;
        // SAFETY: a valid key.
        let max_len = unsafe { sys::EVP_PKEY_get_size(key.0) }.max(0) as usize;
        Ok(SigCtx { md, key, max_len })
    }

    /// Signs `msg` into `sig` (at least `max_len` long); the signature's length.
    pub fn sign(&mut self, msg: &[u8], sig: &mut [u8]) -> Result<usize, ErrorStack> {
        assert!(sig.len() >= self.max_len);
        let mut n = sig.len();
        // SAFETY: valid contexts and key; `sig` is `n` bytes long.
        unsafe {
            cvt(ffi::EVP_DigestSignInit_ex(
                self.md,
                ptr::null_mut(),
                ptr::null(),
                ptr::null_mut(),
                ptr::null(),
                self.key.0,
                ptr::null(),
            ))?;
            cvt(sys::EVP_DigestSign(self.md, sig.as_mut_ptr(), &mut n, msg.as_ptr(), msg.len()))?;
        }
        Ok(n)
    }

    /// Whether `sig` is a valid signature of `msg` (a bad one is `Ok(false)`).
    pub fn verify(&mut self, msg: &[u8], sig: &[u8]) -> Result<bool, ErrorStack> {
        // SAFETY: valid contexts and key; the inputs are read only.
        unsafe {
            cvt(ffi::EVP_DigestVerifyInit_ex(
                self.md,
                ptr::null_mut(),
                ptr::null(),
                ptr::null_mut(),
                ptr::null(),
                self.key.0,
                ptr::null(),
            ))?;
            let r = sys::EVP_DigestVerify(self.md, sig.as_ptr(), sig.len(), msg.as_ptr(), msg.len());
            // A failed verification leaves its reason queued: drop it.
            sys::ERR_clear_error();
            Ok(r == 1)
        }
    }
}

/// Whether the loaded providers can generate `alg` keys, and why not: the
/// OpenSSL version and the release that brought the algorithm.
pub fn available(alg: &str) -> Result<(), String> {
    let n = openssl::version::number();
    let version = format!("{}.{}.{}", (n >> 28) & 0xf, (n >> 20) & 0xff, (n >> 4) & 0xff);
    match KeyGen::new(alg) {
        Ok(_) => Ok(()),
        Err(_) if n < 0x3050_0000 => {
            let family = alg.rsplit_once('-').map_or(alg, |(f, _)| f);
            Err(format!("not in this OpenSSL ({version}); {family} needs 3.5"))
        }
        Err(e) => Err(format!("not in this OpenSSL ({version}): {}", super::first_error(&e))),
    }
}
