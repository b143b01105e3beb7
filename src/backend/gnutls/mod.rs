//! The system GnuTLS (libgnutls.so.30), loaded at run time, behind small owned
//! wrappers with RAII free. `unsafe` stays in this module and `ffi.rs`.

mod ffi;
pub mod library;
pub mod primitives;
pub mod priority;
pub mod record;
pub mod session;
pub mod work;

use ffi::{Api, Datum, Handle};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr;
use std::sync::OnceLock;

/// A GnuTLS error with its library message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct GnutlsError(pub String);

static API: OnceLock<Result<Api, String>> = OnceLock::new();

/// The loaded library, or why it is unavailable.
pub fn api() -> Result<&'static Api, GnutlsError> {
    API.get_or_init(Api::load).as_ref().map_err(|e| GnutlsError(e.clone()))
}

/// Runtime version, e.g. "3.7.9".
pub fn version() -> Result<String, GnutlsError> {
    let a = api()?;
    // SAFETY: NULL asks for the version; the result is a static string.
    let v = unsafe { (a.gnutls_check_version)(ptr::null()) };
    if v.is_null() {
        return Err(GnutlsError("gnutls_check_version returned NULL".into()));
    }
    // SAFETY: non-NULL, NUL-terminated static string.
    Ok(unsafe { CStr::from_ptr(v) }.to_string_lossy().into_owned())
}

fn check(a: &Api, rc: c_int, what: &str) -> Result<(), GnutlsError> {
    if rc >= 0 {
        return Ok(());
    }
    // SAFETY: gnutls_strerror returns a static string for any code.
    let msg = unsafe { CStr::from_ptr((a.gnutls_strerror)(rc)) }.to_string_lossy().into_owned();
    Err(GnutlsError(format!("{what}: {msg}")))
}

fn id(f: unsafe extern "C" fn(*const std::ffi::c_char) -> c_int, name: &str, kind: &str) -> Result<c_int, GnutlsError> {
    let c = CString::new(name).map_err(|_| GnutlsError(format!("bad name {name}")))?;
    // SAFETY: valid NUL-terminated name.
    let id = unsafe { f(c.as_ptr()) };
    if id == 0 {
        return Err(GnutlsError(format!("{kind} {name} is not in this GnuTLS")));
    }
    Ok(id)
}

fn datum(bytes: &[u8]) -> Datum {
    Datum {
        data: bytes.as_ptr() as *mut u8,
        size: bytes.len() as u32,
    }
}

/// Sizes of a GnuTLS cipher.
#[derive(Debug, Clone, Copy)]
pub struct CipherInfo {
    pub id: c_int,
    pub key_len: usize,
    pub iv_len: usize,
    pub block: usize,
}

/// Looks a cipher up by GnuTLS name ("AES-128-GCM").
pub fn cipher_info(name: &str) -> Result<CipherInfo, GnutlsError> {
    let a = api()?;
    let id = id(a.gnutls_cipher_get_id, name, "cipher")?;
    // SAFETY: plain queries on a valid algorithm id.
    unsafe {
        Ok(CipherInfo {
            id,
            key_len: (a.gnutls_cipher_get_key_size)(id),
            iv_len: (a.gnutls_cipher_get_iv_size)(id) as usize,
            block: (a.gnutls_cipher_get_block_size)(id).max(1) as usize,
        })
    }
}

/// A keyed block/stream cipher (`gnutls_cipher_*`), in place.
pub struct Cipher {
    h: Handle,
}

// SAFETY: a handle is used by one thread at a time (moved, never shared).
unsafe impl Send for Cipher {}

impl Cipher {
    pub fn new(info: &CipherInfo, key: &[u8], iv: &[u8]) -> Result<Cipher, GnutlsError> {
        let a = api()?;
        let mut h: Handle = ptr::null_mut();
        let (k, i) = (datum(key), datum(iv));
        let ivp = if iv.is_empty() { ptr::null() } else { &i as *const Datum };
        // SAFETY: datums point at live slices for the duration of the call (GnuTLS copies them).
        check(a, unsafe { (a.gnutls_cipher_init)(&mut h, info.id, &k, ivp) }, "gnutls_cipher_init")?;
        Ok(Cipher { h })
    }

    /// Sets a new IV (a new CBC record with an explicit IV).
    pub fn set_iv(&mut self, iv: &[u8]) {
        if let Ok(a) = api() {
            // SAFETY: GnuTLS copies the IV; the handle is valid.
            unsafe { (a.gnutls_cipher_set_iv)(self.h, iv.as_ptr() as *mut std::ffi::c_void, iv.len()) };
        }
    }

    /// Decrypts `input` into `out` (out of place; `out` at least as long).
    pub fn decrypt_into(&mut self, input: &[u8], out: &mut [u8]) -> Result<(), GnutlsError> {
        let a = api()?;
        assert!(out.len() >= input.len());
        // SAFETY: both buffers are live for the lengths given and do not overlap.
        check(
            a,
            unsafe { (a.gnutls_cipher_decrypt2)(self.h, input.as_ptr().cast(), input.len(), out.as_mut_ptr().cast(), out.len()) },
            "gnutls_cipher_decrypt2",
        )
    }

    pub fn encrypt(&mut self, buf: &mut [u8]) -> Result<(), GnutlsError> {
        let a = api()?;
        // SAFETY: in-place encryption of a live, exclusive buffer.
        check(
            a,
            unsafe { (a.gnutls_cipher_encrypt)(self.h, buf.as_mut_ptr().cast(), buf.len()) },
            "gnutls_cipher_encrypt",
        )
    }

    pub fn decrypt(&mut self, buf: &mut [u8]) -> Result<(), GnutlsError> {
        let a = api()?;
        // SAFETY: in-place decryption of a live, exclusive buffer.
        check(
            a,
            unsafe { (a.gnutls_cipher_decrypt)(self.h, buf.as_mut_ptr().cast(), buf.len()) },
            "gnutls_cipher_decrypt",
        )
    }
}

impl Drop for Cipher {
    fn drop(&mut self) {
        if let Ok(a) = api() {
            // SAFETY: the handle came from gnutls_cipher_init and is freed once.
            unsafe { (a.gnutls_cipher_deinit)(self.h) };
        }
    }
}

/// A keyed AEAD (`gnutls_aead_cipher_*`): whole records, tag appended.
pub struct Aead {
    h: Handle,
}

// SAFETY: as for `Cipher`.
unsafe impl Send for Aead {}

impl Aead {
    pub fn new(info: &CipherInfo, key: &[u8]) -> Result<Aead, GnutlsError> {
        let a = api()?;
        let mut h: Handle = ptr::null_mut();
        let k = datum(key);
        // SAFETY: the key datum points at a live slice; GnuTLS copies it.
        check(
            a,
            unsafe { (a.gnutls_aead_cipher_init)(&mut h, info.id, &k) },
            "gnutls_aead_cipher_init",
        )?;
        Ok(Aead { h })
    }

    /// Seals `plain` into `out` (ciphertext || tag); returns the output length.
    pub fn seal(&mut self, nonce: &[u8], aad: &[u8], tag_len: usize, plain: &[u8], out: &mut [u8]) -> Result<usize, GnutlsError> {
        let a = api()?;
        self.crypt(
            a,
            a.gnutls_aead_cipher_encrypt,
            "gnutls_aead_cipher_encrypt",
            nonce,
            aad,
            tag_len,
            plain,
            out,
        )
    }

    /// Opens `sealed` (ciphertext || tag) into `out`; fails when the tag is wrong.
    pub fn open(&mut self, nonce: &[u8], aad: &[u8], tag_len: usize, sealed: &[u8], out: &mut [u8]) -> Result<usize, GnutlsError> {
        let a = api()?;
        self.crypt(
            a,
            a.gnutls_aead_cipher_decrypt,
            "gnutls_aead_cipher_decrypt",
            nonce,
            aad,
            tag_len,
            sealed,
            out,
        )
    }

    /// One call of `gnutls_aead_cipher_encrypt` or `_decrypt` (same prototype).
    #[allow(clippy::too_many_arguments)]
    fn crypt(
        &mut self,
        a: &Api,
        f: AeadFn,
        name: &str,
        nonce: &[u8],
        aad: &[u8],
        tag_len: usize,
        input: &[u8],
        out: &mut [u8],
    ) -> Result<usize, GnutlsError> {
        let mut n = out.len();
        // SAFETY: all pointers are valid for the lengths given; `out` is exclusive.
        let rc = unsafe {
            f(
                self.h,
                nonce.as_ptr().cast(),
                nonce.len(),
                aad.as_ptr().cast(),
                aad.len(),
                tag_len,
                input.as_ptr().cast(),
                input.len(),
                out.as_mut_ptr().cast(),
                &mut n,
            )
        };
        check(a, rc, name)?;
        Ok(n)
    }
}

/// The shared prototype of `gnutls_aead_cipher_encrypt` and `_decrypt`.
type AeadFn =
    unsafe extern "C" fn(Handle, *const c_void, usize, *const c_void, usize, usize, *const c_void, usize, *mut c_void, *mut usize) -> c_int;

impl Drop for Aead {
    fn drop(&mut self) {
        if let Ok(a) = api() {
            // SAFETY: freed once.
            unsafe { (a.gnutls_aead_cipher_deinit)(self.h) };
        }
    }
}

/// HMAC (`gnutls_hmac_*`); `mac` finishes one message and resets for the next.
pub struct Hmac {
    h: Handle,
    len: usize,
}

// SAFETY: as for `Cipher`.
unsafe impl Send for Hmac {}

impl Hmac {
    /// `name` is a GnuTLS MAC name ("SHA256").
    pub fn new(name: &str, key: &[u8]) -> Result<Hmac, GnutlsError> {
        let a = api()?;
        let alg = id(a.gnutls_mac_get_id, name, "MAC")?;
        let mut h: Handle = ptr::null_mut();
        // SAFETY: the key slice is live; GnuTLS copies it.
        check(
            a,
            unsafe { (a.gnutls_hmac_init)(&mut h, alg, key.as_ptr().cast(), key.len()) },
            "gnutls_hmac_init",
        )?;
        // SAFETY: plain query.
        let len = unsafe { (a.gnutls_hmac_get_len)(alg) } as usize;
        Ok(Hmac { h, len })
    }

    pub fn mac(&mut self, msg: &[u8], out: &mut [u8; 64]) -> Result<usize, GnutlsError> {
        let a = api()?;
        // SAFETY: live slices; `out` holds at least the MAC length (≤ 64).
        unsafe {
            check(a, (a.gnutls_hmac)(self.h, msg.as_ptr().cast(), msg.len()), "gnutls_hmac")?;
            (a.gnutls_hmac_output)(self.h, out.as_mut_ptr().cast());
        }
        Ok(self.len)
    }
}

impl Drop for Hmac {
    fn drop(&mut self) {
        if let Ok(a) = api() {
            // SAFETY: freed once; NULL digest discards the output.
            unsafe { (a.gnutls_hmac_deinit)(self.h, ptr::null_mut()) };
        }
    }
}

/// A hash (`gnutls_hash_*`); `digest` finishes one message and resets.
pub struct Hash {
    h: Handle,
    len: usize,
}

// SAFETY: as for `Cipher`.
unsafe impl Send for Hash {}

impl Hash {
    /// `name` is a GnuTLS digest name ("SHA256").
    pub fn new(name: &str) -> Result<Hash, GnutlsError> {
        let a = api()?;
        let alg = id(a.gnutls_digest_get_id, name, "digest")?;
        let mut h: Handle = ptr::null_mut();
        // SAFETY: valid algorithm id.
        check(a, unsafe { (a.gnutls_hash_init)(&mut h, alg) }, "gnutls_hash_init")?;
        // SAFETY: plain query.
        let len = unsafe { (a.gnutls_hash_get_len)(alg) } as usize;
        Ok(Hash { h, len })
    }

    pub fn digest(&mut self, msg: &[u8], out: &mut [u8; 64]) -> Result<usize, GnutlsError> {
        let a = api()?;
        // SAFETY: live slices; `out` holds at least the digest length (≤ 64).
        unsafe {
            check(a, (a.gnutls_hash)(self.h, msg.as_ptr().cast(), msg.len()), "gnutls_hash")?;
            (a.gnutls_hash_output)(self.h, out.as_mut_ptr().cast());
        }
        Ok(self.len)
    }
}

impl Drop for Hash {
    fn drop(&mut self) {
        if let Ok(a) = api() {
            // SAFETY: freed once.
            unsafe { (a.gnutls_hash_deinit)(self.h, ptr::null_mut()) };
        }
    }
}

/// `GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE`: the end of a list.
const E_REQUESTED_DATA_NOT_AVAILABLE: c_int = -56;

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: GnuTLS returns static NUL-terminated names (or NULL, handled above).
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn strerror(rc: c_int) -> String {
    match api() {
        // SAFETY: gnutls_strerror returns a static string for any code.
        Ok(a) => cstr(unsafe { (a.gnutls_strerror)(rc) }),
        Err(e) => e.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_and_reports_a_version() {
        let v = version().expect("libgnutls30 is installed by make test");
        assert!(v.starts_with('3'), "{v}");
    }

    #[test]
    fn sha256_abc_and_hmac_rfc4231() {
        let mut out = [0u8; 64];
        let mut h = Hash::new("SHA256").unwrap();
        for _ in 0..2 {
            let n = h.digest(b"abc", &mut out).unwrap();
            assert_eq!(
                hex::encode(&out[..n]),
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
            );
        }
        let mut m = Hmac::new("SHA256", b"Jefe").unwrap();
        for _ in 0..2 {
            let n = m.mac(b"what do ya want for nothing?", &mut out).unwrap();
            assert_eq!(
                hex::encode(&out[..n]),
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
            );
        }
        assert!(Hash::new("NO-SUCH-HASH").is_err());
    }
}
