//! GnuTLS priority strings (`gnutls_priority_init2`): compiled, and what they
//! enable (suites, protocols, groups, signatures); GnuTLS's suite table.

use super::ffi::Handle;
use super::{api, cstr, strerror, GnutlsError, E_REQUESTED_DATA_NOT_AVAILABLE};
use std::ffi::{c_char, c_int, c_uint, CString};
use std::ptr;

/// A priority string GnuTLS could not parse, with the position it stopped at.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PriorityError {
    #[error("GnuTLS rejects the priority string '{text}' at position {pos} ('{rest}'): {msg}")]
    Syntax {
        text: String,
        /// 0-based byte offset where GnuTLS stopped.
        pos: usize,
        rest: String,
        msg: String,
    },
    #[error("{0}")]
    Library(#[from] GnutlsError),
}

/// A compiled priority string (`gnutls_priority_init2`). GnuTLS allows one cache
/// to be shared by many sessions on many threads.
pub struct Priority {
    pub(super) h: Handle,
}

// SAFETY: a priority cache is immutable after init and reference-counted by GnuTLS.
unsafe impl Send for Priority {}
// SAFETY: as above; sessions only read it.
unsafe impl Sync for Priority {}

/// One cipher suite in GnuTLS's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteInfo {
    /// GnuTLS's name: `TLS_ECDHE_RSA_AES_128_GCM_SHA256`, `TLS_AES_128_GCM_SHA256`.
    pub name: String,
    /// The two IANA code bytes.
    pub code: [u8; 2],
    /// GnuTLS's algorithm names, as priority strings spell them (`ECDHE-RSA`,
    /// `AES-128-GCM`, `AEAD`); `kx` is empty for TLS 1.3 suites.
    pub kx: String,
    pub cipher: String,
    pub mac: String,
    /// `TLS1.0`, `TLS1.2`, `TLS1.3`, `SSL3.0`.
    pub min_version: String,
}

fn suite_info(idx: usize) -> Option<SuiteInfo> {
    let a = api().ok()?;
    let mut code = [0u8; 2];
    let (mut kx, mut cipher, mut mac, mut ver) = (0, 0, 0, 0);
    // SAFETY: out-pointers to live locals; `code` holds the 2 bytes GnuTLS writes.
    let name = unsafe { (a.gnutls_cipher_suite_info)(idx, code.as_mut_ptr(), &mut kx, &mut cipher, &mut mac, &mut ver) };
    if name.is_null() {
        return None;
    }
    // SAFETY: plain name lookups on ids GnuTLS just returned.
    let (kx, cipher, mac, ver) = unsafe {
        (
            if kx == 0 { String::new() } else { cstr((a.gnutls_kx_get_name)(kx)) },
            cstr((a.gnutls_cipher_get_name)(cipher)),
            cstr((a.gnutls_mac_get_name)(mac)),
            cstr((a.gnutls_protocol_get_name)(ver)),
        )
    };
    Some(SuiteInfo {
        name: cstr(name),
        code,
        kx,
        cipher,
        mac,
        min_version: ver,
    })
}

/// Every suite this GnuTLS implements (its whole table, whatever the priority).
pub fn all_suites() -> Result<Vec<SuiteInfo>, GnutlsError> {
    api()?;
    Ok((0..).map_while(suite_info).collect())
}

impl Priority {
    pub fn new(text: &str) -> Result<Priority, PriorityError> {
        let a = api()?;
        let c = CString::new(text).map_err(|_| GnutlsError("a priority string cannot contain NUL".into()))?;
        let mut h: Handle = ptr::null_mut();
        let mut err: *const c_char = ptr::null();
        // SAFETY: `c` lives across the call; `err` receives a pointer into `c`.
        let rc = unsafe { (a.gnutls_priority_init2)(&mut h, c.as_ptr(), &mut err, 0) };
        if rc < 0 {
            let pos = if err.is_null() {
                0
            } else {
                (err as usize).saturating_sub(c.as_ptr() as usize).min(text.len())
            };
            return Err(PriorityError::Syntax {
                text: text.to_string(),
                pos,
                rest: text.get(pos..).unwrap_or("").to_string(),
                msg: strerror(rc),
            });
        }
        Ok(Priority { h })
    }

    /// The suites the string enables, in its order (`gnutls-cli --priority X -l`).
    pub fn suites(&self) -> Vec<SuiteInfo> {
        let Ok(a) = api() else { return Vec::new() };
        let mut out = Vec::new();
        for i in 0.. {
            let mut idx: c_uint = 0;
            // SAFETY: a live cache and an out-pointer to a local.
            let rc = unsafe { (a.gnutls_priority_get_cipher_suite_index)(self.h, i, &mut idx) };
            if rc == E_REQUESTED_DATA_NOT_AVAILABLE {
                break;
            }
            if rc < 0 {
                continue; // not valid for the enabled protocols
            }
            if let Some(s) = suite_info(idx as usize) {
                out.push(s);
            }
        }
        out
    }

    fn names(
        &self,
        list: unsafe extern "C" fn(Handle, *mut *const c_uint) -> c_int,
        name: unsafe extern "C" fn(c_int) -> *const c_char,
    ) -> Vec<String> {
        let mut p: *const c_uint = ptr::null();
        // SAFETY: GnuTLS points `p` at an array it owns, of the returned length.
        let n = unsafe { list(self.h, &mut p) };
        if n <= 0 || p.is_null() {
            return Vec::new();
        }
        // SAFETY: `n` entries at `p`, valid while the cache lives.
        let ids = unsafe { std::slice::from_raw_parts(p, n as usize) };
        // SAFETY: plain name lookups.
        ids.iter().map(|&id| cstr(unsafe { name(id as c_int) })).collect()
    }

    /// Enabled protocols, best first (`TLS1.3`, `TLS1.2`...).
    pub fn protocols(&self) -> Vec<String> {
        api()
            .map(|a| self.names(a.gnutls_priority_protocol_list, a.gnutls_protocol_get_name))
            .unwrap_or_default()
    }

    /// Enabled key-exchange groups (`X25519`, `SECP256R1`, `FFDHE2048`...).
    pub fn groups(&self) -> Vec<String> {
        api()
            .map(|a| self.names(a.gnutls_priority_group_list, a.gnutls_group_get_name))
            .unwrap_or_default()
    }

    /// Enabled signature algorithms (`RSA-PSS-RSAE-SHA256`, `ECDSA-SECP256R1-SHA256`...).
    pub fn signatures(&self) -> Vec<String> {
        api()
            .map(|a| self.names(a.gnutls_priority_sign_list, a.gnutls_sign_get_name))
            .unwrap_or_default()
    }
}

impl Drop for Priority {
    fn drop(&mut self) {
        if let Ok(a) = api() {
            // SAFETY: created by gnutls_priority_init2, freed once.
            unsafe { (a.gnutls_priority_deinit)(self.h) };
        }
    }
}
