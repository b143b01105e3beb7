//! What exists here: the machine, its libraries and what they can do. Discovery
//! only looks; it never measures.

pub mod cpucaps;
pub mod host;
pub mod installed;
pub mod openssh;
pub mod openssl;
pub mod ssh_list;

/// What this host's TLS and SSH software can be configured with, stored with each
/// run so that `recommend` reads the document, never the machine it runs on.
pub fn capabilities() -> crate::model::Capabilities {
    crate::model::Capabilities {
        openssl: Some(openssl::capabilities()),
        openssh: openssh::capabilities(),
        sshd_hostkeys: openssh::server_hostkey_algorithms(),
    }
}
