//! NZBGet: its `ServerN.Cipher=` line (`/etc/nzbget.conf`, `~/.nzbget`).

pub mod emit;
pub mod read;

use super::negotiated::{self, Negotiation, Seen, Want, Who};
use super::validate::{unchecked, Checked, Refused, Scratch};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::discover::installed::{run, run_env};
use crate::recommend::choice::Emitter;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct Nzbget;

impl Target for Nzbget {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::Nzbget
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
        read::read(config_from)
    }
    /// The ServerX.Cipher value through the real OpenSSL parser (NZBGet gives it
    /// to `SSL_set_cipher_list`), and the OpenSSL configuration for NZBGet, when
    /// there is one, loaded by the real OpenSSL (`OPENSSL_CONF=FILE openssl
    /// ciphers`): its TLS 1.3 order must be the one written. What the real
    /// NZBGet negotiates with them is [`Target::negotiate`]'s.
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let (conf, cnf, _) = emit::parts(lines);
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
            how.push(format!("OPENSSL_CONF={} openssl ciphers", emit::OPENSSL_CNF));
        }
        if how.is_empty() {
            return unchecked("no line to check");
        }
        Ok(Checked::Parsed(how.join("; ")))
    }
    /// "Validated means negotiated": a private NZBGet (`backend::nzbget`,
    /// `OPENSSL_CONF` naming the emitted OpenSSL configuration when there is
    /// one) runs its own server test (`testserver`, with the emitted
    /// ServerX.Cipher) against a private news server on 127.0.0.1 that honours
    /// the client's order (`backend::nntp`); what that server recorded is judged
    /// against the answer. A server test that fails is a refusal too: NZBGet
    /// could not connect with these lines.
    fn negotiate(&self, lines: &[String], want: &Want) -> Result<Negotiation> {
        use crate::backend::nntp::{NewsServer, Spec};
        use crate::backend::nzbget::PrivateNzbget;
        let Some(binary) = inst::find_program(&["nzbget"]) else {
            return Ok(Negotiation::NotRun("nzbget is not installed".into()));
        };
        let within = match negotiated::time_for(Duration::from_secs(3)) {
            Ok(w) => w,
            Err(why) => return Ok(Negotiation::NotRun(why)),
        };
        let (conf, cnf, _) = emit::parts(lines);
        let groups = cnf
            .as_deref()
            .and_then(|t| t.lines().find_map(|l| l.strip_prefix("Groups = ")).map(str::to_string));
        let scratch = cnf.map(|text| Scratch::new("openssl-cipherbench.cnf", &text)).transpose()?;
        let cipher = conf.first().and_then(|l| l.split_once('=')).map(|(_, v)| v).unwrap_or("");
        let news = NewsServer::start(Spec {
            articles: Default::default(),
            connections: 1,
            within,
            tls12_only: false,
        })?;
        let nzbget = PrivateNzbget::start(Path::new(&binary), scratch.as_ref().map(|s| s.file.as_path()), within)?;
        if let Some(e) = nzbget.test_server("127.0.0.1", news.port(), cipher, within)? {
            let e = crate::untrusted::shown(&e);
            let server = news
                .failures()
                .first()
                .map(|f| format!("; the news server: {f}"))
                .unwrap_or_default();
            return Err(Refused(format!(
                "nzbget: NZBGet could not connect with these lines: its server test said `{e}`{server}"
            ))
            .into());
        }
        drop(nzbget);
        let Some(got) = news.settled(Duration::from_secs(2)).into_iter().next() else {
            return Err(anyhow::anyhow!(
                "nzbget's server test passed, yet the private news server saw no handshake"
            ));
        };
        let seen = Seen::Tls {
            version: got.protocol,
            suite: got.suite,
            group: got.group,
        };
        // It offers only the groups its OpenSSL configuration names, where it
        // names them (the emitter leaves out those the host's OpenSSL cannot
        // take): held to the answer's first among them.
        let groups: Option<Vec<String>> = groups.as_deref().map(negotiated::openssl_groups);
        let who = Who {
            software: "nzbget",
            peer: "NZBGet's server test",
            other_end_takes: groups.as_deref(),
        };
        Ok(Negotiation::Negotiated(negotiated::judge(&who, &seen, want)?))
    }
    /// `ServerN`: the server that was read.
    fn file_lines(&self, installed: &Installed, emitted: &[String]) -> Vec<String> {
        let key = installed
            .directives
            .first()
            .and_then(|d| d.text.split('=').next())
            .map(|k| k.trim().to_string());
        emit::parts(emitted)
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
    /// Before NZBGet 25.4: the OpenSSL configuration for NZBGet alone, and the
    /// drop-in that names it, under the root the installed NZBGet was read
    /// under. Where another drop-in already sets `OPENSSL_CONF` (the one that
    /// wins), its assignment is changed to name the file instead of adding a
    /// drop-in it would override or be overridden by.
    fn whole_files(&self, installed: &Installed, emitted: &[String]) -> Vec<(PathBuf, String)> {
        let (_, cnf, drop_in) = emit::parts(emitted);
        let Some(cnf) = cnf else { return Vec::new() };
        let root = installed
            .openssl_env
            .as_ref()
            .map(|e| e.root.clone())
            .unwrap_or_else(|| PathBuf::from("/"));
        let mut out = vec![(read::under(&root, emit::OPENSSL_CNF), cnf)];
        let ours = read::under(&root, emit::DROP_IN);
        match installed.openssl_env.as_ref().and_then(|e| e.drop_in.as_ref()) {
            Some((file, line, value)) if *file != ours => {
                if value != emit::OPENSSL_CNF {
                    if let Ok(text) = inst::read_config(file) {
                        out.push((file.clone(), renamed(&text, *line, value)));
                    }
                }
            }
            _ => out.extend(drop_in.map(|d| (ours, d))),
        }
        out
    }
}

/// A drop-in's `text` with its `OPENSSL_CONF=value` assignment on `line`
/// (1-based) naming the OpenSSL configuration for NZBGet instead.
fn renamed(text: &str, line: usize, value: &str) -> String {
    let from = format!("OPENSSL_CONF={value}");
    let to = format!("OPENSSL_CONF={}", emit::OPENSSL_CNF);
    let mut out: Vec<String> = text.lines().map(str::to_string).collect();
    if let Some(l) = out.get_mut(line.wrapping_sub(1)) {
        if let Some(at) = l.rfind(&from) {
            l.replace_range(at..at + from.len(), &to);
        }
    }
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NzbgetInstalled;
    use crate::recommend::choice::testdata;

    /// An existing drop-in's assignment is renamed on its own line, the rest kept.
    #[test]
    fn another_drop_ins_assignment_names_the_file() {
        let text = "[Service]\nEnvironment=\"A=1\" OPENSSL_CONF=/etc/x.cnf\nNice=5\n";
        assert_eq!(
            renamed(text, 2, "/etc/x.cnf"),
            format!("[Service]\nEnvironment=\"A=1\" OPENSSL_CONF={}\nNice=5\n", emit::OPENSSL_CNF)
        );
        assert_eq!(renamed(text, 3, "/etc/x.cnf"), text);
    }

    /// The installed NZBGet, or why the test cannot run.
    fn installed() -> Option<NzbgetInstalled> {
        if inst::find_program(&["nzbget"]).is_none() {
            crate::testing::missing("nzbget is not installed");
            return None;
        }
        Some(read::environment())
    }

    fn want() -> Want {
        Want::new(&crate::recommend::choice_lists(&crate::recommend::choice::Choice::Tls(
            testdata::tls(),
        )))
    }

    /// The lines emitted for the installed NZBGet pass the real OpenSSL parser
    /// and are negotiated by NZBGet itself: its server test reaches the answer's
    /// first TLS 1.3 choice (ChaCha20 here, not OpenSSL's own first, AES-256-GCM).
    #[test]
    fn the_installed_nzbget_negotiates_the_emitted_lines() {
        let Some(i) = installed() else { return };
        let lines = emit::lines(&testdata::tls(), &i);
        match Nzbget.validate(&lines) {
            Ok(Checked::Parsed(how)) => assert!(how.starts_with("openssl ciphers"), "{how}"),
            other => panic!("{other:?}\n{lines:#?}"),
        }
        match Nzbget.negotiate(&lines, &want()) {
            Ok(Negotiation::Negotiated(said)) => assert_eq!(
                said,
                "NZBGet's server test negotiates TLSv1.3 TLS_CHACHA20_POLY1305_SHA256 over X25519 (the answer's first choice)"
            ),
            other => panic!("{other:?}\n{lines:#?}"),
        }
    }

    /// The form of NZBGet 25.4 and later (TLS 1.3 names in ServerX.Cipher, no
    /// OpenSSL configuration: the TLS 1.3 order left out) does not steer NZBGet
    /// 21: it negotiates OpenSSL's default instead. Its parser accepts the line;
    /// the negotiation says what was negotiated first (status "negotiates
    /// otherwise") rather than calling the lines validated.
    #[test]
    fn a_line_the_installed_nzbget_does_not_honour_is_refused_with_what_it_negotiated() {
        let Some(i) = installed() else { return };
        if i.tls13_in_cipher() {
            return eprintln!(
                "skipped: the installed NZBGet ({:?}) honours TLS 1.3 names in ServerX.Cipher",
                i.version
            );
        }
        let newer = NzbgetInstalled {
            version: Some("25.4".into()),
            ..i
        };
        let lines = emit::lines(&testdata::tls(), &newer);
        assert!(matches!(Nzbget.validate(&lines), Ok(Checked::Parsed(_))), "{lines:#?}");
        let e = Nzbget
            .negotiate(&lines, &want())
            .expect_err("NZBGet 21 negotiated the answer's first choice from ServerX.Cipher alone");
        let msg = e
            .downcast_ref::<Refused>()
            .unwrap_or_else(|| panic!("not a refusal: {e:#}"))
            .0
            .clone();
        assert!(
            msg.starts_with("nzbget: NZBGet's server test negotiated TLSv1.3 TLS_AES_256_GCM_SHA384"),
            "{msg}"
        );
        assert!(msg.contains("suite TLS_CHACHA20_POLY1305_SHA256"), "{msg}");
    }
}
