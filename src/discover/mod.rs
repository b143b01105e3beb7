//! What exists here: the machine, its libraries and what they can do. Discovery
//! only looks; it never measures.

pub mod cpucaps;
pub mod host;
pub mod installed;
pub mod openssh;
pub mod openssl;
pub mod primitives;

/// What this host's TLS and SSH software can be configured with, stored with each
/// run so that `recommend` reads the document, never the machine it runs on.
/// The three askings run side by side.
pub fn capabilities() -> crate::model::Capabilities {
    std::thread::scope(|s| {
        let ssh = s.spawn(openssh::capabilities);
        let sshd = s.spawn(openssh::server_hostkey_algorithms);
        let defaults = s.spawn(openssh::sshd_defaults);
        let gnutls = s.spawn(installed::gnutls::accepted_groups);
        let openssl = openssl::capabilities();
        crate::model::Capabilities {
            openssl: Some(openssl),
            openssh: ssh.join().unwrap_or(None),
            sshd_hostkeys: sshd.join().unwrap_or(None),
            sshd_defaults: defaults.join().unwrap_or(None),
            gnutls_groups: gnutls.join().unwrap_or(None),
        }
    })
}
