//! NZBGet: its `ServerN.Cipher=` line (`/etc/nzbget.conf`, `~/.nzbget`).

use super::validate::{unchecked, Checked, Refused, Scratch};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::discover::installed::{run, run_env};
use crate::recommend::emit::{self, Emitter};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct Nzbget;

impl Target for Nzbget {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::nzbget::Nzbget
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn programs(&self) -> &'static [&'static str] {
        &["nzbget"]
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(PathBuf::from("/etc/nzbget.conf"))
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        inst::nzbget::read(config_from)
    }
    /// The ServerX.Cipher value through the real OpenSSL parser (NZBGet gives it
    /// to `SSL_set_cipher_list`), and the OpenSSL configuration for NZBGet, when
    /// there is one, loaded by the real OpenSSL (`OPENSSL_CONF=FILE openssl
    /// ciphers`): its TLS 1.3 order must be the one written.
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let (conf, cnf, _) = emit::nzbget::parts(lines);
        let mut how = Vec::new();
        for l in &conf {
            let Some((_, v)) = l.split_once('=') else { continue };
            let ran = run("openssl", &["ciphers", "-s", "--", v])?;
            if !ran.ok {
                return Err(Refused(format!("OpenSSL refuses `{l}` ({}): NZBGet could not connect", ran.why())).into());
            }
            how.push("openssl ciphers -s VALUE".to_string());
        }
        if let Some(text) = cnf {
            let s = Scratch::new("openssl-cipherbench.cnf", &text)?;
            let ran = run_env("openssl", &["ciphers", "-s", "-stdname"], &[("OPENSSL_CONF", &s.path())])?;
            if !ran.ok {
                return Err(Refused(format!("OpenSSL refuses the configuration for NZBGet ({})", ran.why())).into());
            }
            let want = text
                .lines()
                .find_map(|l| l.strip_prefix("Ciphersuites = "))
                .and_then(|v| v.split(':').next());
            let first = ran.out.split_whitespace().next().unwrap_or("").to_string();
            if let Some(w) = want.filter(|w| *w != first) {
                return Err(Refused(format!("with the configuration for NZBGet, OpenSSL puts {first} first, not {w}")).into());
            }
            how.push(format!("OPENSSL_CONF={} openssl ciphers", emit::nzbget::OPENSSL_CNF));
        }
        if how.is_empty() {
            return unchecked("no line to check");
        }
        Ok(Checked::Parsed(how.join("; ")))
    }
    /// `ServerN`: the server that was read.
    fn file_lines(&self, installed: &Installed, emitted: &[String]) -> Vec<String> {
        let key = installed
            .directives
            .first()
            .and_then(|d| d.text.split('=').next())
            .map(|k| k.trim().to_string());
        emit::nzbget::parts(emitted)
            .0
            .iter()
            .map(|l| match (&key, l.split_once('=')) {
                (Some(k), Some((_, v))) => format!("{k}={v}"),
                _ => l.clone(),
            })
            .collect()
    }
    fn keeps_comments(&self) -> bool {
        false
    }
}
