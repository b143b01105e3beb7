//! nginx: read with `nginx -T`, checked with `nginx -t` on a throw-away config.

use super::negotiated::{self, Negotiation, Want, Who};
use super::validate::{parse_with, Checked, Scratch};
use super::{Protocol, Target};
use crate::backend::nginx::{PrivateNginx, Spec};
use crate::backend::openssl::certs::Identity;
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::emit::{self, Emitter};
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct Nginx;

impl Target for Nginx {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::nginx::Nginx
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn programs(&self) -> &'static [&'static str] {
        &["nginx"]
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(PathBuf::from(inst::nginx::DEFAULT_FILE))
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        inst::nginx::read(config_from)
    }
    /// The lines in an `http` block of a minimal config, `nginx -t` under a
    /// private prefix (no root, no log file of the system's).
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let body: String = lines.iter().map(|l| format!("    {l}\n")).collect();
        let s = Scratch::new(
            "nginx.conf",
            &format!("pid nginx.pid;\nevents {{}}\nhttp {{\n    access_log off;\n{body}}}\n"),
        )?;
        let prefix = format!("{}/", s.dir.path().display());
        parse_with(&["nginx"], &["-t", "-q", "-e", "stderr", "-p", &prefix, "-c", &s.path()])
    }
    /// A private nginx (`backend::nginx`) started with the lines on 127.0.0.1,
    /// and one handshake by the installed libssl's default client: its usual peer.
    fn negotiate(&self, lines: &[String], want: &Want) -> Result<Negotiation> {
        let Some(binary) = inst::find_program(&["nginx"]) else {
            return Ok(Negotiation::NotRun("nginx is not installed".into()));
        };
        let within = match negotiated::time_for(Duration::from_secs(3)) {
            Ok(w) => w,
            Err(why) => return Ok(Negotiation::NotRun(why)),
        };
        let identity = Identity::generate(negotiated::cert_for(want))?;
        let tls: Vec<String> = lines.iter().filter(|l| !l.trim_start().starts_with('#')).cloned().collect();
        let server = PrivateNginx::start(&Spec {
            binary: Path::new(&binary),
            tls_lines: &tls,
            identity: &identity,
            body: b"cipherbench",
            start_within: within,
        })?;
        let seen = negotiated::default_client(server.addr().port(), within)?;
        let who = Who {
            software: "nginx",
            peer: "a default client",
            other_end_takes: None,
        };
        Ok(Negotiation::Negotiated(negotiated::judge(&who, &seen, want)?))
    }
    fn keywords(&self) -> &'static [&'static str] {
        inst::nginx::KEYWORDS
    }
    fn ansible(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recommend::emit::{testdata, Choice};
    use crate::target::Refused;

    fn installed() -> bool {
        let ok = inst::find_program(&["nginx"]).is_some();
        if !ok {
            crate::testing::missing("nginx is not installed");
        }
        ok
    }

    /// The emitted lines in a real nginx: a default client negotiates the
    /// answer's first TLS 1.3 suite (ChaCha20 here, not the client's own first,
    /// AES-256-GCM) over its first group.
    #[test]
    fn a_real_nginx_with_the_emitted_lines_gives_a_default_client_the_answer() {
        if !installed() {
            return;
        }
        let choice = Choice::Tls(testdata::tls());
        let want = Want::new(&crate::recommend::choice_lists(&choice));
        let lines = Nginx.lines(&choice).unwrap();
        match Nginx.negotiate(&lines, &want).unwrap() {
            Negotiation::Negotiated(said) => assert_eq!(
                said,
                "a default client negotiates TLSv1.3 TLS_CHACHA20_POLY1305_SHA256 over X25519 (the answer's first choice)"
            ),
            other => panic!("{other:?}"),
        }
    }

    /// Without `ssl_prefer_server_ciphers on` nginx follows the client, whose
    /// first TLS 1.3 suite is AES-256-GCM: the lines are refused with what was
    /// negotiated, never called the answer.
    #[test]
    fn lines_that_leave_the_order_to_the_client_are_refused_with_what_was_negotiated() {
        if !installed() {
            return;
        }
        let choice = Choice::Tls(testdata::tls());
        let want = Want::new(&crate::recommend::choice_lists(&choice));
        let lines: Vec<String> = Nginx
            .lines(&choice)
            .unwrap()
            .into_iter()
            .filter(|l| !l.starts_with("ssl_prefer_server_ciphers"))
            .collect();
        let e = Nginx.negotiate(&lines, &want).unwrap_err();
        let msg = &e.downcast_ref::<Refused>().unwrap_or_else(|| panic!("{e:#}")).0;
        assert!(
            msg.starts_with("nginx: a default client negotiated TLSv1.3 TLS_AES_256_GCM_SHA384"),
            "{msg}"
        );
        assert!(msg.contains("suite TLS_CHACHA20_POLY1305_SHA256"), "{msg}");
    }
}
