//! The libgnutls symbols cipherbench uses, resolved at run time from
//! `libgnutls.so.30`.
//!
//! Why load at run time instead of linking: most machines that have OpenSSL have
//! GnuTLS too, but not all, and cipherbench must build and run without it (GnuTLS
//! is then reported as unavailable). Loading the runtime library also measures
//! exactly the GnuTLS that the user's software (wget, Exim, curl-gnutls) loads,
//! without needing its development headers.

use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void};

/// `gnutls_datum_t`.
#[repr(C)]
pub struct Datum {
    pub data: *mut u8,
    pub size: c_uint,
}

pub type Handle = *mut c_void;

macro_rules! api {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// Function pointers into the loaded library; valid while `_lib` lives.
        pub struct Api {
            _lib: Library,
            $(pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
        }

        impl Api {
            /// Opens the library and resolves every symbol, or says which is missing.
            pub fn load() -> Result<Api, String> {
                let names = ["libgnutls.so.30", "libgnutls.so"];
                let mut last = String::new();
                for name in names {
                    // SAFETY: loading libgnutls runs its constructors, which only
                    // initialise the library itself.
                    match unsafe { Library::new(name) } {
                        Ok(lib) => {
                            // SAFETY: each symbol is declared with its C prototype from gnutls/crypto.h and gnutls/gnutls.h.
                            unsafe {
                                $(let $name = *lib
                                    .get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(concat!(stringify!($name), "\0").as_bytes())
                                    .map_err(|e| format!("{name} lacks {}: {e}", stringify!($name)))?;)*
                                return Ok(Api { _lib: lib, $($name,)* });
                            }
                        }
                        Err(e) => last = e.to_string(),
                    }
                }
                Err(format!("libgnutls is not installed ({last}); install libgnutls30"))
            }
        }
    };
}

api! {
    gnutls_check_version: fn(*const c_char) -> *const c_char;
    gnutls_strerror: fn(c_int) -> *const c_char;
    gnutls_cipher_get_id: fn(*const c_char) -> c_int;
    gnutls_cipher_get_key_size: fn(c_int) -> usize;
    gnutls_cipher_get_iv_size: fn(c_int) -> c_uint;
    gnutls_cipher_get_block_size: fn(c_int) -> c_int;
    gnutls_cipher_init: fn(*mut Handle, c_int, *const Datum, *const Datum) -> c_int;
    gnutls_cipher_encrypt: fn(Handle, *mut c_void, usize) -> c_int;
    gnutls_cipher_decrypt: fn(Handle, *mut c_void, usize) -> c_int;
    gnutls_cipher_decrypt2: fn(Handle, *const c_void, usize, *mut c_void, usize) -> c_int;
    gnutls_cipher_set_iv: fn(Handle, *mut c_void, usize);
    gnutls_cipher_deinit: fn(Handle);
    gnutls_aead_cipher_init: fn(*mut Handle, c_int, *const Datum) -> c_int;
    gnutls_aead_cipher_encrypt: fn(Handle, *const c_void, usize, *const c_void, usize, usize, *const c_void, usize, *mut c_void, *mut usize) -> c_int;
    gnutls_aead_cipher_decrypt: fn(Handle, *const c_void, usize, *const c_void, usize, usize, *const c_void, usize, *mut c_void, *mut usize) -> c_int;
    gnutls_aead_cipher_deinit: fn(Handle);
    gnutls_mac_get_id: fn(*const c_char) -> c_int;
    gnutls_hmac_get_len: fn(c_int) -> c_uint;
    gnutls_hmac_init: fn(*mut Handle, c_int, *const c_void, usize) -> c_int;
    gnutls_hmac: fn(Handle, *const c_void, usize) -> c_int;
    gnutls_hmac_output: fn(Handle, *mut c_void);
    gnutls_hmac_deinit: fn(Handle, *mut c_void);
    gnutls_digest_get_id: fn(*const c_char) -> c_int;
    gnutls_hash_get_len: fn(c_int) -> c_uint;
    gnutls_hash_init: fn(*mut Handle, c_int) -> c_int;
    gnutls_hash: fn(Handle, *const c_void, usize) -> c_int;
    gnutls_hash_output: fn(Handle, *mut c_void);
    gnutls_hash_deinit: fn(Handle, *mut c_void);
    // TLS sessions (gnutls/gnutls.h), used by session.rs.
    gnutls_init: fn(*mut Handle, c_uint) -> c_int;
    gnutls_deinit: fn(Handle);
    gnutls_priority_init2: fn(*mut Handle, *const c_char, *mut *const c_char, c_uint) -> c_int;
    gnutls_priority_deinit: fn(Handle);
    gnutls_priority_set: fn(Handle, Handle) -> c_int;
    gnutls_priority_get_cipher_suite_index: fn(Handle, c_uint, *mut c_uint) -> c_int;
    gnutls_priority_protocol_list: fn(Handle, *mut *const c_uint) -> c_int;
    gnutls_priority_group_list: fn(Handle, *mut *const c_uint) -> c_int;
    gnutls_priority_sign_list: fn(Handle, *mut *const c_uint) -> c_int;
    gnutls_cipher_suite_info: fn(usize, *mut u8, *mut c_int, *mut c_int, *mut c_int, *mut c_int) -> *const c_char;
    gnutls_kx_get_name: fn(c_int) -> *const c_char;
    gnutls_cipher_get_name: fn(c_int) -> *const c_char;
    gnutls_mac_get_name: fn(c_int) -> *const c_char;
    gnutls_sign_get_name: fn(c_int) -> *const c_char;
    gnutls_group_get_name: fn(c_int) -> *const c_char;
    gnutls_protocol_get_name: fn(c_int) -> *const c_char;
    gnutls_certificate_allocate_credentials: fn(*mut Handle) -> c_int;
    gnutls_certificate_free_credentials: fn(Handle);
    gnutls_certificate_set_x509_key_mem2: fn(Handle, *const Datum, *const Datum, c_int, *const c_char, c_uint) -> c_int;
    gnutls_certificate_set_known_dh_params: fn(Handle, c_int) -> c_int;
    gnutls_credentials_set: fn(Handle, c_int, Handle) -> c_int;
    gnutls_server_name_set: fn(Handle, c_int, *const c_void, usize) -> c_int;
    gnutls_transport_set_int2: fn(Handle, c_int, c_int);
    gnutls_handshake: fn(Handle) -> c_int;
    gnutls_handshake_set_timeout: fn(Handle, c_uint);
    gnutls_record_send: fn(Handle, *const c_void, usize) -> isize;
    gnutls_record_recv: fn(Handle, *mut c_void, usize) -> isize;
    gnutls_bye: fn(Handle, c_int) -> c_int;
    gnutls_error_is_fatal: fn(c_int) -> c_int;
    gnutls_alert_get: fn(Handle) -> c_int;
    gnutls_alert_get_name: fn(c_int) -> *const c_char;
    gnutls_protocol_get_version: fn(Handle) -> c_int;
    gnutls_ciphersuite_get: fn(Handle) -> *const c_char;
    gnutls_group_get: fn(Handle) -> c_int;
    gnutls_session_get_data: fn(Handle, *mut c_void, *mut usize) -> c_int;
    gnutls_session_set_data: fn(Handle, *const c_void, usize) -> c_int;
    gnutls_session_is_resumed: fn(Handle) -> c_int;
    gnutls_session_ticket_enable_server: fn(Handle, *const Datum) -> c_int;
    gnutls_rnd: fn(c_int, *mut c_void, usize) -> c_int;
    gnutls_transport_set_ptr: fn(Handle, *mut c_void);
    gnutls_transport_set_push_function: fn(Handle, PushFn);
    gnutls_transport_set_pull_function: fn(Handle, PullFn);
    gnutls_transport_set_pull_timeout_function: fn(Handle, PullTimeoutFn);
}

/// `gnutls_push_func`, `gnutls_pull_func`, `gnutls_pull_timeout_func`.
pub type PushFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> isize;
pub type PullFn = unsafe extern "C" fn(*mut c_void, *mut c_void, usize) -> isize;
pub type PullTimeoutFn = unsafe extern "C" fn(*mut c_void, c_uint) -> c_int;
