//! EVP_MAC (HMAC, Poly1305) as a safe, reusable context.
//!
//! The `openssl` crate has no EVP_MAC wrapper, and its `Signer` re-creates state per
//! message. A benchmark must build the context once and only re-initialise it per
//! message, as `openssl speed -hmac` and TLS record MACs do, so this is a small
//! owned wrapper with RAII free. `unsafe` stays in this file.

use super::ffi;
use openssl::error::ErrorStack;
use std::ffi::CString;
use std::ptr;

/// An owned EVP_MAC_CTX with its algorithm.
pub struct MacCtx {
    mac: *mut openssl_sys::EVP_MAC,
    ctx: *mut openssl_sys::EVP_MAC_CTX,
    key: Vec<u8>,
    /// HMAC keeps its key across re-initialisation; Poly1305 keys are one-time and
    /// must be given every time.
    rekey_each_message: bool,
    size: usize,
}

// SAFETY: the context is used by one thread at a time (it moves, it is not shared).
unsafe impl Send for MacCtx {}

fn cvt(r: std::ffi::c_int) -> Result<(), ErrorStack> {
    if r <= 0 {
        Err(ErrorStack::get())
    } else {
        Ok(())
    }
}

impl MacCtx {
    /// HMAC over `digest` (an OpenSSL digest name such as "SHA256").
    pub fn hmac(digest: &str, key: &[u8]) -> Result<MacCtx, ErrorStack> {
        Self::new("HMAC", Some(digest), key, false)
    }

    /// Poly1305 with a 32-byte one-time key.
    pub fn poly1305(key: &[u8]) -> Result<MacCtx, ErrorStack> {
        Self::new("POLY1305", None, key, true)
    }

    fn new(alg: &str, digest: Option<&str>, key: &[u8], rekey_each_message: bool) -> Result<MacCtx, ErrorStack> {
        openssl::init();
        let alg = CString::new(alg).expect("no NUL");
        // SAFETY: valid NUL-terminated name; NULL libctx and properties mean defaults.
        let mac = unsafe { openssl_sys::EVP_MAC_fetch(ptr::null_mut(), alg.as_ptr(), ptr::null()) };
        if mac.is_null() {
            return Err(ErrorStack::get());
        }
        // SAFETY: `mac` is a valid fetched EVP_MAC.
        let ctx = unsafe { openssl_sys::EVP_MAC_CTX_new(mac) };
        let mut this = MacCtx {
            mac,
            ctx,
            key: key.to_vec(),
            rekey_each_message,
            size: 0,
        };
        if ctx.is_null() {
            return Err(ErrorStack::get());
        }
        if let Some(digest) = digest {
            let key_name = CString::new("digest").expect("no NUL");
            let mut value = CString::new(digest).expect("no NUL").into_bytes_with_nul();
            // SAFETY: the params point at buffers that outlive the set_params call.
            unsafe {
                let params = [
                    ffi::OSSL_PARAM_construct_utf8_string(key_name.as_ptr(), value.as_mut_ptr().cast(), 0),
                    openssl_sys::OSSL_PARAM_construct_end(),
                ];
                cvt(openssl_sys::EVP_MAC_CTX_set_params(this.ctx, params.as_ptr()))?;
            }
        }
        // SAFETY: ctx is valid; the key slice is valid for its length.
        unsafe {
            cvt(openssl_sys::EVP_MAC_init(this.ctx, this.key.as_ptr(), this.key.len(), ptr::null()))?;
            this.size = openssl_sys::EVP_MAC_CTX_get_mac_size(this.ctx);
        }
        Ok(this)
    }

    /// Computes the MAC of one message into `out` (at least `size()` bytes) and
    /// returns its length. The context is re-initialised first, so every call is an
    /// independent message.
    pub fn mac_message(&mut self, msg: &[u8], out: &mut [u8]) -> Result<usize, ErrorStack> {
        assert!(out.len() >= self.size, "output shorter than the MAC");
        let (key, keylen) = if self.rekey_each_message {
            (self.key.as_ptr(), self.key.len())
        } else {
            (ptr::null(), 0)
        };
        let mut outl = 0usize;
        // SAFETY: ctx is valid; all pointers are valid for the lengths given.
        unsafe {
            cvt(openssl_sys::EVP_MAC_init(self.ctx, key, keylen, ptr::null()))?;
            cvt(openssl_sys::EVP_MAC_update(self.ctx, msg.as_ptr(), msg.len()))?;
            cvt(openssl_sys::EVP_MAC_final(self.ctx, out.as_mut_ptr(), &mut outl, out.len()))?;
        }
        Ok(outl)
    }
}

impl Drop for MacCtx {
    fn drop(&mut self) {
        // SAFETY: both pointers came from the matching _new/_fetch calls; freeing NULL is allowed.
        unsafe {
            openssl_sys::EVP_MAC_CTX_free(self.ctx);
            openssl_sys::EVP_MAC_free(self.mac);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_rfc4231_case2_repeatable() {
        let mut m = MacCtx::hmac("SHA256", b"Jefe").unwrap();
        let mut out = [0u8; 64];
        let want = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
        for _ in 0..3 {
            let n = m.mac_message(b"what do ya want for nothing?", &mut out).unwrap();
            assert_eq!(hex::encode(&out[..n]), want);
        }
    }

    #[test]
    fn unknown_digest_is_an_error() {
        assert!(MacCtx::hmac("NOT-A-DIGEST", b"k").is_err());
    }
}
