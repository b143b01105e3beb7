//! Backends wrap the real libraries and programs behind small safe types. A backend
//! knows its library, never the benchmark.

pub mod apache;
pub mod gnutls;
pub mod haproxy;
pub mod libraries;
pub mod nginx;
pub mod nntp;
pub mod nzbget;
pub mod openssh;
pub mod openssl;
pub mod primitives;
pub mod private;
pub mod process;
pub mod record;
pub mod recording;
pub mod rustls;
pub mod stunnel;
pub mod tls;
