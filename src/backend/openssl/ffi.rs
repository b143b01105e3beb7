//! The few libcrypto symbols that neither the `openssl` crate nor `openssl-sys`
//! declare. All raw declarations live here.

use std::ffi::c_char;

extern "C" {
    /// `OSSL_PARAM OSSL_PARAM_construct_utf8_string(const char *key, char *buf, size_t bsize)`
    pub fn OSSL_PARAM_construct_utf8_string(key: *const c_char, buf: *mut c_char, bsize: usize) -> openssl_sys::OSSL_PARAM;
}
