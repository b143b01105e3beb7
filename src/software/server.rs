//! "Validated means negotiated" for a TLS server target (nginx, Apache, HAProxy,
//! stunnel): its private instance (`backend::NAME`) started with the lines on
//! 127.0.0.1, and one handshake by the installed libssl's default client, its
//! usual peer, judged by [`negotiated::judge`].

use super::negotiated::{self, Negotiation, Want, Who};
use crate::backend::openssl::certs::Identity;
use crate::backend::private::{Served, Spec};
use crate::discover::installed as inst;
use anyhow::Result;
use std::path::Path;
use std::time::Duration;

/// The lines without comment lines (the emitters' `# …` notes).
pub fn tls_lines(lines: &[String]) -> Vec<String> {
    lines.iter().filter(|l| !l.trim_start().starts_with('#')).cloned().collect()
}

/// Runs `software` (the first of `programs` installed) with `start` (its
/// private instance: `backend::NAME`) and `lines` on 127.0.0.1, with a
/// certificate the answer's first choice needs; one handshake by a default
/// client; what it negotiated judged against `want`. Not installed, or no time
/// left: `NotRun` with why.
pub fn negotiate<S: Served>(
    software: &str,
    programs: &[&str],
    lines: &[String],
    want: &Want,
    start: impl FnOnce(&Spec) -> Result<S>,
) -> Result<Negotiation> {
    let Some(binary) = inst::find_program(programs) else {
        return Ok(Negotiation::NotRun(format!("{software} is not installed")));
    };
    let within = match negotiated::time_for(Duration::from_secs(3)) {
        Ok(w) => w,
        Err(why) => return Ok(Negotiation::NotRun(why)),
    };
    let identity = Identity::generate(negotiated::cert_for(want))?;
    let tls = tls_lines(lines);
    let server = start(&Spec {
        binary: Path::new(&binary),
        tls_lines: &tls,
        identity: &identity,
        body: b"cipherbench",
        start_within: within,
    })?;
    let seen = negotiated::default_client(server.addr().port(), within)?;
    let who = Who {
        software,
        peer: "a default client",
        other_end_takes: None,
    };
    Ok(Negotiation::Negotiated(negotiated::judge(&who, &seen, want)?))
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::recommend::choice::{testdata, Choice};
    use crate::software::{Refused, Target};

    /// Whether one of `programs` is installed (a missing one is said, and
    /// fails under CI=true).
    pub fn installed(programs: &[&str]) -> bool {
        let ok = inst::find_program(programs).is_some();
        if !ok {
            crate::testing::missing(&format!("{} is not installed", programs[0]));
        }
        ok
    }

    /// The answer of the emitters' test data (ChaCha20 first) and `t`'s lines for it.
    pub fn answer(t: &dyn Target) -> (Want, Vec<String>) {
        let choice = Choice::Tls(testdata::tls());
        (Want::new(&crate::recommend::choice_lists(&choice)), t.lines(&choice).unwrap())
    }

    /// `t`'s emitted lines in the real software: a default client negotiates
    /// the answer's first TLS 1.3 suite (ChaCha20, not its own first,
    /// AES-256-GCM) over its first group.
    pub fn gives_the_answer(t: &dyn Target) {
        let (want, lines) = answer(t);
        match t.negotiate(&lines, &want).unwrap() {
            Negotiation::Negotiated(said) => assert_eq!(
                said,
                "a default client negotiates TLSv1.3 TLS_CHACHA20_POLY1305_SHA256 over X25519 (the answer's first choice)"
            ),
            other => panic!("{other:?}"),
        }
    }

    /// `t`'s lines for a TLS 1.2-only answer (ChaCha20 with ECDSA first, not
    /// the default client's own first, AES-256-GCM): a default client
    /// negotiates it, on the ECDSA certificate the answer needs.
    pub fn gives_the_tls12_answer(t: &dyn Target) {
        let mut tls = testdata::tls();
        tls.protocols = vec!["TLSv1.2".into()];
        let choice = Choice::Tls(tls);
        let want = Want::new(&crate::recommend::choice_lists(&choice));
        match t.negotiate(&t.lines(&choice).unwrap(), &want).unwrap() {
            Negotiation::Negotiated(said) => assert_eq!(
                said,
                "a default client negotiates TLSv1.2 TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 over X25519 (the answer's first choice)"
            ),
            other => panic!("{other:?}"),
        }
    }

    /// `t`'s lines made to leave the order to the client (`client_order`): the
    /// client's first TLS 1.3 suite, AES-256-GCM, is negotiated, and the lines
    /// are refused with what was, never called the answer.
    pub fn refused_in_the_clients_order(t: &dyn Target, client_order: impl Fn(Vec<String>) -> Vec<String>) {
        let (want, lines) = answer(t);
        let kept = client_order(lines.clone());
        assert_ne!(kept, lines);
        let e = t.negotiate(&kept, &want).unwrap_err();
        let msg = &e.downcast_ref::<Refused>().unwrap_or_else(|| panic!("{e:#}")).0;
        let start = format!("{}: a default client negotiated TLSv1.3 TLS_AES_256_GCM_SHA384", t.name());
        assert!(msg.starts_with(&start), "{msg}");
        assert!(msg.contains("suite TLS_CHACHA20_POLY1305_SHA256"), "{msg}");
    }
}
