//! The ssh client: `ssh -G HOST` prints what the client would use for HOST after
//! every `Host`/`Match` block and default. The usual peer of this machine's client
//! is its own sshd, so HOST is `localhost`.

use crate::discover::installed::{read_config, run, scan_directives, Config, Installed};
use crate::software::sshd::read::{parse_dump, KEYWORDS};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// The system-wide client configuration `ssh -G` reads without `-F`.
const SYSTEM_FILE: &str = "/etc/ssh/ssh_config";

/// The host `ssh -G` is asked about.
pub const HOST: &str = "localhost";

pub fn read(config_from: Option<&Path>) -> Result<Option<Installed>> {
    let ssh = crate::discover::openssh::ssh_binary().display().to_string();
    let user_file = dirs::home_dir().map(|h| h.join(".ssh/config"));
    let file: Option<PathBuf> = match config_from {
        Some(p) => Some(p.to_path_buf()),
        None => user_file.filter(|p| p.exists()),
    };
    let text = file.as_deref().map(read_config).transpose()?;
    let f = file.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    let mut args = vec!["-G"];
    if config_from.is_some() {
        args.extend(["-F", &f]);
    }
    args.push(HOST);
    let ran = match run(&ssh, &args) {
        Ok(r) => r,
        Err(_) if config_from.is_none() => return Ok(None),
        Err(e) => return Err(e),
    };
    // What ssh says may quote a file the configuration includes: relayed as
    // that file's name and line only.
    let ran = ran.about(file.as_deref().unwrap_or(Path::new(SYSTEM_FILE)));
    if !ran.ok {
        anyhow::bail!("`ssh {}` failed: {}", args.join(" "), ran.why());
    }
    let out = ran.out;
    let config = parse_dump(&out, false);
    if config.ciphers.is_empty() {
        anyhow::bail!("`ssh {}` printed no ciphers line", args.join(" "));
    }
    let directives = match (&file, &text) {
        (Some(p), Some(t)) => scan_directives(p, t, KEYWORDS, '#'),
        _ => Vec::new(),
    };
    // ssh takes the first value it reads: new lines go at the top.
    let insert_at = text.is_some().then_some(0);
    Ok(Some(
        Installed::new("ssh", file, format!("ssh {}", args.join(" ")), Config::Ssh(config)).with_lines(directives, insert_at),
    ))
}

/// How [`read_default`] asks the client.
pub const DEFAULT_SOURCE: &str = "ssh -F /dev/null -G localhost";

/// This machine's ssh client with no configuration at all (`ssh -F /dev/null
/// -G`: neither ~/.ssh/config nor /etc/ssh/ssh_config): its built-in lists, in
/// its own order. The usual peer of a server: a client that nobody configured
/// (another machine's, or this one's without a Host block), as sshd's
/// negotiation is checked and predicted.
pub fn read_default() -> Result<Installed> {
    let ssh = crate::discover::openssh::ssh_binary().display().to_string();
    let args = ["-F", "/dev/null", "-G", HOST];
    let ran = run(&ssh, &args)?;
    if !ran.ok {
        anyhow::bail!("`{DEFAULT_SOURCE}` failed: {}", ran.why());
    }
    let config = parse_dump(&ran.out, false);
    if config.ciphers.is_empty() {
        anyhow::bail!("`{DEFAULT_SOURCE}` printed no ciphers line");
    }
    Ok(Installed::new("ssh", None, DEFAULT_SOURCE, Config::Ssh(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real client: a Host block's lists come back from `ssh -G`.
    #[test]
    fn real_ssh_dash_g() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("ssh_config");
        std::fs::write(
            &f,
            "Host localhost\n    Ciphers aes256-ctr,aes128-ctr\n    MACs hmac-sha2-512\n    KexAlgorithms curve25519-sha256\n",
        )
        .unwrap();
        let i = read(Some(&f)).unwrap().unwrap();
        let Config::Ssh(c) = &i.config else { panic!() };
        assert!(!c.server);
        assert_eq!(c.ciphers, vec!["aes256-ctr", "aes128-ctr"]);
        assert_eq!(c.macs, vec!["hmac-sha2-512"]);
        assert_eq!(c.kex, vec!["curve25519-sha256"]);
        assert_eq!(i.directives.len(), 3);
        assert_eq!(i.directives[0].line, 2);
    }

    /// The default client ignores every configuration file: its lists are the
    /// client's own (chacha20-poly1305 first in OpenSSH 6.9 to 10.x).
    #[test]
    fn the_default_client_is_read_without_any_file() {
        let d = read_default().unwrap();
        let Config::Ssh(c) = &d.config else { panic!() };
        assert!(!c.server && d.file.is_none());
        assert_eq!(d.source, DEFAULT_SOURCE);
        assert!(c.ciphers.len() > 2 && !c.kex.is_empty() && !c.macs.is_empty(), "{c:?}");
    }
}
