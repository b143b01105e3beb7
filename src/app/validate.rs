//! The emitted lines checked by each target software's own parser where it is
//! installed (`Target::validate`: `sshd -t`, `nginx -t`, `haproxy -c`, `ssh -G`,
//! `openssl ciphers`, `gnutls-cli --priority`), and where the software can be run
//! with them against a private peer, what it negotiated (`Target::negotiate`: a
//! private nginx and a default client; curl, `openssl s_client`, `gnutls-cli`
//! and NZBGet's own server test against a private recording server): what
//! `recommend` and the main job say under their answer, and keep per
//! recommendation (`validated`).

use crate::model::{RecommendationRecord, Validated};
use crate::software::{self, Checked, Negotiation, Refused, Want};

pub(super) const ACCEPTED: &str = "accepted";
pub(super) const REJECTED: &str = "rejected";
pub(super) const NOT_CHECKED: &str = "not checked";
/// The parser accepted the lines, and the real software run with them
/// negotiated something other than the answer's first choice.
pub(super) const OTHERWISE: &str = "negotiates otherwise";

/// Why nothing was checked when the deadline was too close.
const SPENT: &str = "the run's budget was spent (`cipherbench recommend` of the stored run checks them)";

/// What the parsers need of the run's deadline: they take about 0.3 s together,
/// side by side, on a loaded machine, and a check still running when the run is
/// cut would make a whole run `partial`.
const LEAST: std::time::Duration = std::time::Duration::from_millis(1500);

/// Checks each recommendation's lines with its target's own parser (the parsers
/// run side by side, each a child process within the run's deadline), keeps what
/// each said in the recommendation, and returns one line per target for the
/// terminal. A refusal is also a warning naming what the parser said (escaped).
/// `skip` (`--no-validate`): nothing runs, nothing is said. With less than
/// [`LEAST`] left of the run's deadline nothing runs either, and that is said.
pub(super) fn validate(recs: &mut [RecommendationRecord], skip: bool) -> String {
    if skip || recs.iter().all(|r| r.lines.is_empty()) {
        return String::new();
    }
    if crate::deadline::run().left() < LEAST {
        for r in recs.iter_mut().filter(|r| !r.lines.is_empty()) {
            r.validated = Some(Validated {
                status: NOT_CHECKED.to_string(),
                detail: SPENT.to_string(),
            });
        }
        return format!("Config lines not checked by each software's own parser: {SPENT}\n");
    }
    let checked: Vec<Option<Validated>> = std::thread::scope(|s| {
        let running: Vec<_> = recs.iter().map(|r| s.spawn(move || check(r))).collect();
        running.into_iter().map(|h| h.join().ok().flatten()).collect()
    });
    let mut text = String::new();
    for (r, v) in recs.iter_mut().zip(checked) {
        let Some(v) = v else { continue };
        let said = match v.status.as_str() {
            // `PARSER; what the software negotiated with them`.
            ACCEPTED => match v.detail.split_once("; ") {
                Some((parser, negotiated)) => format!("checked: {parser} accepts these lines; {negotiated}"),
                None => format!("checked: {} accepts these lines", v.detail),
            },
            REJECTED => {
                crate::progress::warn(&format!("{}: its own parser refused the emitted lines: {}", r.target, v.detail));
                format!("REJECTED: {}", v.detail)
            }
            OTHERWISE => {
                crate::progress::warn(&format!(
                    "{}: the installed software does not negotiate the answer with these lines: {}",
                    r.target, v.detail
                ));
                format!("NOT THE ANSWER: {}", v.detail)
            }
            _ => format!("not checked: {}", v.detail),
        };
        text.push_str(&format!("  {:<8} {said}\n", r.target));
        r.validated = Some(v);
    }
    if text.is_empty() {
        return text;
    }
    format!("Config lines checked by each software's own parser, then run in the software against a private peer on 127.0.0.1 (--no-validate skips this):\n{text}")
}

/// What `r`'s target's parser makes of its lines; `None` without lines or target.
fn check(r: &RecommendationRecord) -> Option<Validated> {
    if r.lines.is_empty() {
        return None;
    }
    let t = software::find(&r.target)?;
    let (status, detail) = match t.validate(&r.lines) {
        Ok(Checked::Parsed(how)) => match t.negotiate(&r.lines, &Want::new(&r.choice)) {
            Ok(Negotiation::Negotiated(said)) => (ACCEPTED, format!("{}; {said}", short(&how))),
            Ok(Negotiation::NotRun(why)) => (ACCEPTED, format!("{}; not run with them: {why}", short(&how))),
            Err(e) => match e.downcast_ref::<Refused>() {
                Some(refused) => (OTHERWISE, refused.0.clone()),
                None => (
                    ACCEPTED,
                    format!("{}; not run with them: {}", short(&how), crate::untrusted::shown(&format!("{e:#}"))),
                ),
            },
        },
        Ok(Checked::Unchecked(why)) => (NOT_CHECKED, why),
        Err(e) => match e.downcast_ref::<Refused>() {
            Some(refused) => (REJECTED, refused.0.clone()),
            // The parser could not run (the deadline, a missing helper): nothing was
            // checked, which is not a refusal.
            None => (NOT_CHECKED, crate::untrusted::shown(&format!("{e:#}")).to_string()),
        },
    };
    Some(Validated {
        status: status.to_string(),
        detail,
    })
}

/// The parser as a reader knows it: the program's name and its first argument
/// (`/usr/sbin/sshd -t -f /tmp/…/sshd_config` → `sshd -t`).
fn short(how: &str) -> String {
    let mut words = how.split_whitespace();
    let program = words.next().unwrap_or_default();
    let name = program.rsplit('/').next().unwrap_or(program);
    // The program and its first word, without the value of a `--flag=VALUE`
    // (`gnutls-cli --priority=…` reads as `gnutls-cli --priority`).
    match words.next() {
        Some(first) => format!("{name} {}", first.split('=').next().unwrap_or(first)),
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(target: &str, lines: &[&str]) -> RecommendationRecord {
        RecommendationRecord {
            target: target.into(),
            lines: lines.iter().map(|l| l.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_parser_is_named_without_its_scratch_files() {
        assert_eq!(short("/usr/sbin/sshd -t -f /tmp/x/sshd_config"), "sshd -t");
        assert_eq!(short("openssl ciphers -s"), "openssl ciphers");
        assert_eq!(short("gnutls-cli"), "gnutls-cli");
        assert_eq!(
            short("/usr/bin/gnutls-cli --priority=NONE:+AES-128-GCM -l"),
            "gnutls-cli --priority"
        );
    }

    /// Validated means negotiated, for the client targets: curl's emitted
    /// options are accepted with what curl negotiated; without their TLS 1.3
    /// order they pass the parser yet negotiate curl's own first, which is said
    /// first with status "negotiates otherwise", never called the answer.
    #[test]
    fn a_client_that_negotiates_otherwise_is_said_first() {
        use crate::recommend::choice::{testdata, Choice};
        for need in ["curl", "openssl"] {
            if !software::installed(&[need]) {
                return crate::testing::missing(&format!("{need} is not installed"));
            }
        }
        let choice = Choice::Tls(testdata::tls());
        let line = software::find("curl").unwrap().lines(&choice).unwrap().remove(0);
        let at = line.find("--tls13-ciphers").unwrap();
        let end = at + line[at..].find("' ").unwrap() + 2;
        let mut recs = [line.clone(), format!("{}{}", &line[..at], &line[end..])].map(|l| RecommendationRecord {
            target: "curl".into(),
            lines: vec![l],
            choice: crate::recommend::choice_lists(&choice),
            ..Default::default()
        });
        let text = validate(&mut recs, false);
        let v: Vec<&Validated> = recs.iter().map(|r| r.validated.as_ref().unwrap()).collect();
        assert_eq!((v[0].status.as_str(), v[1].status.as_str()), (ACCEPTED, OTHERWISE), "{text}");
        assert!(
            v[0].detail
                .starts_with("openssl ciphers; curl negotiates TLSv1.3 TLS_CHACHA20_POLY1305_SHA256"),
            "{text}"
        );
        assert!(
            text.contains("NOT THE ANSWER: curl: curl negotiated TLSv1.3 TLS_AES_256_GCM_SHA384"),
            "{text}"
        );
    }

    /// The real parsers: sshd, nginx and openssl accept good lines and refuse a
    /// bad one; a target without lines is not checked; --no-validate runs nothing.
    #[test]
    fn real_parsers_accept_and_refuse() {
        let mut recs = vec![
            rec("sshd", &["Ciphers aes128-gcm@openssh.com,chacha20-poly1305@openssh.com"]),
            rec("sshd", &["Ciphers no-such-cipher"]),
            rec("nginx", &["ssl_protocols TLSv1.3;"]),
            rec("nginx", &["ssl_protocols TLSv9;"]),
            rec("openssl", &["ciphersuites: TLS_AES_128_GCM_SHA256"]),
            rec("openssl", &["cipher list: NO-SUCH-CIPHER"]),
            rec("sshd", &[]),
        ];
        for need in ["sshd", "nginx", "openssl"] {
            if !software::installed(&[need]) {
                crate::testing::missing(&format!("{need} is not installed"));
                return;
            }
        }
        let text = validate(&mut recs, false);
        let status: Vec<Option<&str>> = recs.iter().map(|r| r.validated.as_ref().map(|v| v.status.as_str())).collect();
        assert_eq!(
            status,
            [
                Some(ACCEPTED),
                Some(REJECTED),
                Some(ACCEPTED),
                Some(REJECTED),
                Some(ACCEPTED),
                Some(REJECTED),
                None
            ],
            "{text}"
        );
        assert!(text.contains("checked: sshd -t accepts these lines"), "{text}");
        assert!(text.contains("checked: nginx -t accepts these lines"), "{text}");
        let refused = recs[1].validated.as_ref().unwrap();
        assert!(refused.detail.contains("no-such-cipher"), "{refused:?}");
        let mut again = vec![rec("sshd", &["Ciphers no-such-cipher"])];
        assert_eq!(validate(&mut again, true), "");
        assert!(again[0].validated.is_none());
    }
}
