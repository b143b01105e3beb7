//! What exists here: the machine, its libraries and what they can do. Discovery
//! only looks; it never measures.

pub mod cpucaps;
pub mod gnutls;
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
        let gnutls = s.spawn(gnutls::accepted_groups);
        let openssl = openssl::capabilities();
        let (sshd_hostkeys, sshd_hostkeys_unread) = split(sshd.join());
        let (sshd_defaults, sshd_defaults_unread) = split(defaults.join());
        crate::model::Capabilities {
            openssl: Some(openssl),
            openssh: ssh.join().unwrap_or(None),
            sshd_hostkeys,
            sshd_hostkeys_unread,
            sshd_defaults,
            sshd_defaults_unread,
            gnutls_groups: gnutls.join().unwrap_or(None),
        }
    })
}

/// What a reading thread read, or why not.
fn split<T>(r: std::thread::Result<Result<T, String>>) -> (Option<T>, Option<String>) {
    match r {
        Ok(Ok(v)) => (Some(v), None),
        Ok(Err(why)) => (None, Some(why)),
        Err(_) => (None, Some("reading it failed inside cipherbench (a thread panicked)".to_string())),
    }
}
