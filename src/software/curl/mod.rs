//! curl: command-line options; it has no configuration to read.

pub mod emit;

use super::negotiated::{self, Negotiation, Want, Who};
use super::validate::{parse_with, unchecked, Checked, Refused};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::choice::Emitter;
use anyhow::Result;
use std::path::Path;
use std::time::Duration;

pub struct Curl;

impl Target for Curl {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::Curl
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn programs(&self) -> &'static [&'static str] {
        &["curl"]
    }
    fn reads_installed(&self) -> bool {
        false
    }
    fn read_installed(&self, _config_from: Option<&Path>) -> Result<Option<Installed>> {
        Ok(None)
    }
    /// The line read as curl's arguments ([`options`]: refused when it cannot
    /// be), and its lists through the real OpenSSL parser, as curl's OpenSSL
    /// builds give them to it (`--ciphers` to `SSL_CTX_set_cipher_list`,
    /// `--tls13-ciphers` to `SSL_CTX_set_ciphersuites`): `openssl ciphers -s`.
    /// What curl itself negotiates with them is [`Target::negotiate`]'s.
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let Some(line) = lines.iter().find(|l| l.trim_start().starts_with("curl ")) else {
            return unchecked("no curl command line among the lines");
        };
        let opts = options(line).map_err(|e| Refused(format!("the curl line cannot be read as curl's arguments: {e}")))?;
        let value = |o: &str| opts.iter().position(|x| x == o).and_then(|i| opts.get(i + 1)).map(String::as_str);
        let mut args = vec!["ciphers", "-s"];
        if let Some(s) = value("--tls13-ciphers") {
            args.extend(["-ciphersuites", s]);
        }
        if let Some(c) = value("--ciphers") {
            // After `--`, a cipher list is never an option.
            args.extend(["--", c]);
        }
        parse_with(&["openssl"], &args)
    }
    /// The real curl run with exactly the emitted options ([`options`]: the
    /// `curl … https://HOST/` line read as words, no shell), `HOST` the private
    /// recording server on 127.0.0.1 (`backend::recording`, which accepts
    /// everything and honours the client's order), plus what a private run
    /// needs: `-q` (no ~/.curlrc), `--insecure` (its certificate is
    /// generated), no proxy and a bounded `--max-time`. What the server
    /// recorded must be the answer's first choice.
    fn negotiate(&self, lines: &[String], want: &Want) -> Result<Negotiation> {
        let Some(binary) = inst::find_program(&["curl"]) else {
            return Ok(Negotiation::NotRun("curl is not installed".into()));
        };
        let within = match negotiated::time_for(Duration::from_secs(3)) {
            Ok(w) => w,
            Err(why) => return Ok(Negotiation::NotRun(why)),
        };
        let Some(line) = lines.iter().find(|l| l.trim_start().starts_with("curl ")) else {
            return Ok(Negotiation::NotRun("no curl command line among the lines".into()));
        };
        let opts = options(line).map_err(|e| anyhow::anyhow!("the curl line cannot be run as it is: {e}"))?;
        let secs = within.as_secs().saturating_sub(1).max(1).to_string();
        let seen = negotiated::client_run("curl", crate::backend::recording::http(), within, |port| {
            let mut c = std::process::Command::new(&binary);
            // `-q` must come first: no ~/.curlrc adds options of its own.
            c.args(["-q", "--silent", "--show-error", "--output", "/dev/null", "--insecure"]);
            c.args(["--noproxy", "*", "--max-time", &secs, "--connect-timeout", &secs]);
            c.args(&opts);
            c.arg(format!("https://127.0.0.1:{port}/"));
            c
        })?;
        // It offers only the groups its `--curves` names (the emitter leaves
        // out those the host's OpenSSL cannot take): held to the answer's first
        // among them.
        let groups: Option<Vec<String>> = opts
            .iter()
            .position(|o| o == "--curves")
            .and_then(|i| opts.get(i + 1))
            .map(|v| negotiated::openssl_groups(v));
        let who = Who {
            software: "curl",
            peer: "curl",
            other_end_takes: groups.as_deref(),
        };
        Ok(Negotiation::Negotiated(negotiated::judge(&who, &seen, want)?))
    }
}

/// The options that take a value, as the emitter writes them.
const WITH_VALUE: &[&str] = &["--ciphers", "--tls13-ciphers", "--curves"];
/// The options without one (the protocol floor).
const FLAGS: &[&str] = &["--tlsv1", "--tlsv1.0", "--tlsv1.1", "--tlsv1.2", "--tlsv1.3"];

/// The options of an emitted `curl OPTIONS https://HOST/` line, as curl's
/// arguments, read without a shell: words split at blanks, a single-quoted
/// word taken as written. Anything a shell would read otherwise (double
/// quotes, backslashes, `$`, backticks, `;`, `&`, `|`, `<`, `>`, `*`, `?`, `#`,
/// `~`), an option the emitter does not write, or a value that starts with `-`
/// is refused, so nothing in the line can become an option it is not.
pub(super) fn options(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(q) => w.push(q),
                        None => return Err("a quote is not closed".into()),
                    }
                }
            }
            '"' | '\\' | '$' | '`' | ';' | '&' | '|' | '<' | '>' | '*' | '?' | '#' | '~' | '(' | ')' | '{' | '}' | '[' | ']' => {
                return Err(format!("`{c}` outside single quotes"))
            }
            c if c.is_control() => return Err("a control character".into()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    let mut it = words.into_iter();
    if it.next().as_deref() != Some("curl") {
        return Err("it does not start with `curl`".into());
    }
    let mut rest: Vec<String> = it.collect();
    if rest.pop().as_deref() != Some("https://HOST/") {
        return Err("it does not end with https://HOST/".into());
    }
    let mut out = Vec::new();
    let mut it = rest.into_iter();
    while let Some(o) = it.next() {
        if FLAGS.contains(&o.as_str()) {
            out.push(o);
        } else if WITH_VALUE.contains(&o.as_str()) {
            let v = it.next().ok_or_else(|| format!("{o} has no value"))?;
            if v.is_empty() || v.starts_with('-') {
                return Err(format!("the value of {o} is empty or starts with `-`"));
            }
            out.extend([o, v]);
        } else {
            return Err(format!("`{o}` is not an option the curl lines are made of"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recommend::choice::{testdata, Choice};

    fn want() -> Want {
        Want::new(&crate::recommend::choice_lists(&Choice::Tls(testdata::tls())))
    }

    fn installed() -> bool {
        let ok = inst::find_program(&["curl"]).is_some();
        if !ok {
            crate::testing::missing("curl is not installed");
        }
        ok
    }

    #[test]
    fn the_emitted_line_is_read_as_words_and_nothing_else() {
        let line =
            "curl --tlsv1.2 --ciphers 'ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256' --curves 'X25519:P-256' https://HOST/";
        assert_eq!(
            options(line).unwrap(),
            [
                "--tlsv1.2",
                "--ciphers",
                "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256",
                "--curves",
                "X25519:P-256"
            ]
        );
        for bad in [
            "curl --ciphers 'A' https://HOST/; rm -rf x",
            "curl --ciphers \"A\" https://HOST/",
            "curl --ciphers $(id) https://HOST/",
            "curl --ciphers '-K/etc/passwd' https://HOST/",
            "curl --config 'x' https://HOST/",
            "curl --ciphers 'A https://HOST/",
            "curl --ciphers https://HOST/",
            "wget --ciphers 'A' https://HOST/",
            "curl --ciphers 'A' https://example.org/",
        ] {
            assert!(options(bad).is_err(), "{bad}");
        }
    }

    /// The emitted options pass OpenSSL's parser, and in the real curl they
    /// negotiate the answer's first TLS 1.3 suite (ChaCha20 here, not curl's
    /// own first, AES-256-GCM) over its first group.
    #[test]
    fn the_real_curl_with_the_emitted_options_negotiates_the_answer() {
        if !installed() {
            return;
        }
        let lines = Curl.lines(&Choice::Tls(testdata::tls())).unwrap();
        match Curl.validate(&lines).unwrap() {
            Checked::Parsed(how) => assert!(how.contains("ciphers -s -ciphersuites TLS_CHACHA20_POLY1305_SHA256:"), "{how}"),
            other => panic!("{other:?}"),
        }
        let bad = ["curl --ciphers 'NO-SUCH-CIPHER' https://HOST/".to_string()];
        assert!(Curl.validate(&bad).unwrap_err().downcast_ref::<Refused>().is_some());
        match Curl.negotiate(&lines, &want()).unwrap() {
            Negotiation::Negotiated(said) => assert_eq!(
                said,
                "curl negotiates TLSv1.3 TLS_CHACHA20_POLY1305_SHA256 over X25519 (the answer's first choice)"
            ),
            other => panic!("{other:?}"),
        }
    }

    /// Options with which curl cannot connect at all are refused too, with
    /// what curl said.
    #[test]
    fn options_curl_cannot_connect_with_are_refused_with_what_it_said() {
        if !installed() {
            return;
        }
        let line = "curl --curves 'no-such-group' https://HOST/".to_string();
        let e = Curl.negotiate(&[line], &want()).unwrap_err();
        let msg = &e.downcast_ref::<Refused>().unwrap_or_else(|| panic!("{e:#}")).0;
        assert!(
            msg.starts_with("curl: curl could not connect with these lines (exit status "),
            "{msg}"
        );
    }

    /// Without `--tls13-ciphers` curl offers its own TLS 1.3 order: refused,
    /// with what it negotiated first.
    #[test]
    fn options_without_the_tls13_order_are_refused_with_what_curl_negotiated() {
        if !installed() {
            return;
        }
        let line = &Curl.lines(&Choice::Tls(testdata::tls())).unwrap()[0];
        let at = line.find("--tls13-ciphers").unwrap();
        let end = at + line[at..].find("' ").unwrap() + 2;
        let without = format!("{}{}", &line[..at], &line[end..]);
        let e = Curl.negotiate(&[without], &want()).unwrap_err();
        let msg = &e.downcast_ref::<Refused>().unwrap_or_else(|| panic!("{e:#}")).0;
        assert!(msg.starts_with("curl: curl negotiated TLSv1.3 TLS_AES_256_GCM_SHA384"), "{msg}");
        assert!(msg.contains("suite TLS_CHACHA20_POLY1305_SHA256"), "{msg}");
    }
}
