//! The few libcrypto symbols that neither the `openssl` crate nor `openssl-sys`
//! declare. All raw declarations live here.

use std::ffi::c_char;

extern "C" {
    /// `OSSL_PARAM OSSL_PARAM_construct_utf8_string(const char *key, char *buf, size_t bsize)`
    pub fn OSSL_PARAM_construct_utf8_string(key: *const c_char, buf: *mut c_char, bsize: usize) -> openssl_sys::OSSL_PARAM;
}

extern "C" {
    /// `int EVP_DigestSignInit_ex(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const char *mdname,
    /// OSSL_LIB_CTX *libctx, const char *props, EVP_PKEY *pkey, const OSSL_PARAM params[])` (3.0)
    pub fn EVP_DigestSignInit_ex(
        ctx: *mut openssl_sys::EVP_MD_CTX,
        pctx: *mut *mut openssl_sys::EVP_PKEY_CTX,
        mdname: *const c_char,
        libctx: *mut openssl_sys::OSSL_LIB_CTX,
        props: *const c_char,
        pkey: *mut openssl_sys::EVP_PKEY,
        params: *const openssl_sys::OSSL_PARAM,
    ) -> std::ffi::c_int;
    /// `int EVP_DigestVerifyInit_ex(...)`, the same arguments (3.0).
    pub fn EVP_DigestVerifyInit_ex(
        ctx: *mut openssl_sys::EVP_MD_CTX,
        pctx: *mut *mut openssl_sys::EVP_PKEY_CTX,
        mdname: *const c_char,
        libctx: *mut openssl_sys::OSSL_LIB_CTX,
        props: *const c_char,
        pkey: *mut openssl_sys::EVP_PKEY,
        params: *const openssl_sys::OSSL_PARAM,
    ) -> std::ffi::c_int;
}
