//! The emitters not yet in their software's folder (`software/NAME/emit.rs`).

pub use super::choice::*;

pub mod openssh_client;
pub mod sshd;
