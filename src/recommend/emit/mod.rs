//! The emitters not yet in their software's folder (`software/NAME/emit.rs`).

pub use super::choice::*;

pub mod gnutls;
pub mod nzbget;
pub mod openssh_client;
pub mod openssl;
pub mod sshd;
