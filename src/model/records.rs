//! The document's `verdicts[]` and `recommendations[]`, typed.
//!
//! These are the serialised shape, not the judge's or the ranking's working types
//! (`judge::Verdict`, `recommend::Recommendation` convert into them): a document may
//! come from another host, an older version or a hand-edited file, so a level or a
//! domain is the text it holds, a field it lacks takes its default, a field it has
//! is written back as it was (absent stays absent, `null` stays `null`), and a field
//! this version does not know is kept in `extra`.

use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// Fields this version does not know, kept so that reading and writing a document
/// loses nothing.
pub type Extra = serde_json::Map<String, serde_json::Value>;

/// For a field that may be absent, `null` or a value: absent is `None`, `null` is
/// `Some(None)` (use with `default` and `skip_serializing_if = "Option::is_none"`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

fn yes() -> bool {
    true
}

/// One entry of `verdicts[]`: the judge's answer for one subject.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VerdictRecord {
    #[serde(default)]
    pub subject: VerdictSubject,
    /// `recommended`, `secure`, `weak`, `insecure` or `unrated`.
    #[serde(default)]
    pub level: String,
    /// The source the level follows: `null` when unrated.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub follows: Option<Option<SourceRecord>>,
    #[serde(default)]
    pub reasons: Vec<ReasonRecord>,
    /// Other sources' views.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opinions: Vec<OpinionRecord>,
    /// Key sizes a policy's `[keys]` minimums apply to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_bits: Vec<KeyBitsRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl VerdictRecord {
    /// True when `name` is the subject's name or one of its aliases, ignoring case.
    pub fn names(&self, name: &str) -> bool {
        let s = &self.subject;
        s.name.eq_ignore_ascii_case(name) || s.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }
}

/// What a verdict is about.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VerdictSubject {
    /// `tls13-suite`, `ssh-cipher`, `primitive` ...
    #[serde(default)]
    pub domain: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

/// A citation (or the source an opinion comes from).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// One reason behind a verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReasonRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default)]
    pub text: String,
    /// The best level a subject with this reason can have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<String>,
    /// Shown as a warning even when the level is good.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caveat: Option<bool>,
    #[serde(default)]
    pub references: Vec<SourceRecord>,
}

/// Another source's view of the subject.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpinionRecord {
    #[serde(default)]
    pub source: SourceRecord,
    #[serde(default)]
    pub level: String,
    #[serde(default)]
    pub reason: ReasonRecord,
}

/// One key size of a subject: `symmetric`, `rsa`, `finite-field` or `elliptic-curve`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyBitsRecord {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub bits: u32,
}

/// One entry of `recommendations[]`: a protocol family's lines for one target, the
/// rankings they come from and, after `check`'s diff, what changing would gain.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecommendationRecord {
    /// `tls` or `ssh`.
    #[serde(default)]
    pub protocol: String,
    /// `--for` name of the target software.
    #[serde(default)]
    pub target: String,
    /// Where the lines go.
    #[serde(default)]
    pub location: String,
    #[serde(default)]
    pub policy: String,
    /// What is configured, per list (`tls13_suites`, `ssh_ciphers` ...), best first.
    #[serde(default)]
    pub choice: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub lines: Vec<String>,
    #[serde(default)]
    pub rankings: Vec<RankingRecord>,
    /// What the installed configuration negotiates now (`null`: it could not be read).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub now: Option<Option<Now>>,
    /// What changing would gain, one `metric: verdict` per measured change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gain: Option<String>,
    /// The change as a unified diff, one line each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<Vec<String>>,
    /// What the target's own parser made of `lines` (absent: not asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validated: Option<Validated>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A recommendation's lines checked by the target software's own parser
/// (`sshd -t`, `nginx -t`, `openssl ciphers` ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Validated {
    /// `accepted`, `rejected` or `not checked`.
    pub status: String,
    /// The parser as run (`sshd -t`); what it said when it refused the lines; or
    /// why nothing checked them (`haproxy is not installed`).
    pub detail: String,
}

impl RecommendationRecord {
    /// True when the installed-configuration diff annotated it (`now`, `gain` or `diff`).
    pub fn annotated(&self) -> bool {
        matches!(self.now, Some(Some(_))) || self.gain.is_some() || self.diff.is_some()
    }
}

/// What is installed now: the negotiated choice in one line, or (older documents)
/// the configured lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Now {
    Label(String),
    Lists(BTreeMap<String, Vec<String>>),
}

/// One list of a protocol (TLS 1.3 suites, SSH ciphers ...), ranked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankingRecord {
    /// The policy table: `tls13_suites`, `ssh_ciphers` ...
    #[serde(default)]
    pub list: String,
    /// `bytes_per_sec`, `handshakes_per_sec` or `seconds`.
    #[serde(default)]
    pub metric: String,
    #[serde(default = "yes")]
    pub higher_is_better: bool,
    /// Measured options that pass the policy, best first.
    #[serde(default)]
    pub ranked: Vec<RankedRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmeasured: Vec<String>,
    /// The configured order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest_refused: Option<RefusedRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_cost: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest_insecure: Option<RefusedRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure_cost: Option<f64>,
}

/// An option the policy accepts, in ranking order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankedRecord {
    #[serde(default)]
    pub name: String,
    /// 1-based competition rank; options in one tie share it.
    #[serde(default)]
    pub rank: usize,
    #[serde(default)]
    pub tied: bool,
    #[serde(default)]
    pub level: String,
    #[serde(default)]
    pub median: f64,
    #[serde(default)]
    pub ci95_low: f64,
    #[serde(default)]
    pub ci95_high: f64,
    #[serde(default)]
    pub basis: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The fastest option the policy refuses (or the fastest insecure one).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RefusedRecord {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub level: String,
    #[serde(default)]
    pub median: f64,
    #[serde(default)]
    pub ci95_low: f64,
    #[serde(default)]
    pub ci95_high: f64,
    #[serde(default)]
    pub tied_with_best: bool,
    #[serde(default)]
    pub basis: String,
    #[serde(default)]
    pub refusals: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_real_export_reads_back_as_it_was_written() {
        // `cipherbench run --budget 40s --export-json` of 2026-11-26, trimmed (see tests/fixtures/README.md).
        let text = include_str!("../../tests/fixtures/documents/run.json");
        let json: serde_json::Value = serde_json::from_str(text).unwrap();
        let doc: crate::model::Document = serde_json::from_str(text).unwrap();
        assert!(doc.verdicts.iter().any(|v| !v.opinions.is_empty()) && doc.verdicts.iter().any(|v| v.follows.is_some()));
        assert!(doc.recommendations.iter().any(|r| r.annotated()) && doc.recommendations.iter().any(|r| !r.annotated()));
        assert!(doc.verdicts.iter().all(|v| v.extra.is_empty()) && doc.recommendations.iter().all(|r| r.extra.is_empty()));
        assert_eq!(serde_json::to_value(&doc).unwrap(), json);
    }

    #[test]
    fn a_verdict_reads_back_as_it_was_written() {
        let v = json!({
            "subject": {"domain": "tls12-suite", "name": "TLS_RSA_WITH_RC4_128_MD5", "aliases": ["RC4-MD5"]},
            "level": "insecure",
            "follows": null,
            "reasons": [{"id": "rc4", "text": "RC4", "ceiling": "insecure", "caveat": false,
                         "references": [{"id": "rfc7465", "title": "RFC 7465", "url": "https://www.rfc-editor.org/rfc/rfc7465"}]}],
            "key_bits": [{"kind": "symmetric", "bits": 128}],
            "from_a_later_version": {"x": 1},
        });
        let r: VerdictRecord = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.follows, Some(None));
        assert!(r.names("rc4-md5"));
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        // A hand-written one: no id, ceiling, caveat or follows; nothing is added.
        let bare =
            json!({"subject": {"domain": "x", "name": "y"}, "level": "odd", "reasons": [{"text": "t", "references": [{"title": "only"}]}]});
        let r: VerdictRecord = serde_json::from_value(bare.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), bare);
    }

    #[test]
    fn a_recommendation_keeps_its_annotations_and_unknown_fields() {
        let v = json!({
            "protocol": "ssh", "target": "sshd", "location": "/etc/ssh/sshd_config", "policy": "modern",
            "choice": {"ssh_ciphers": ["aes128-gcm@openssh.com"]}, "lines": ["Ciphers aes128-gcm@openssh.com"],
            "rankings": [{"list": "ssh_ciphers", "metric": "bytes_per_sec", "higher_is_better": true,
                          "ranked": [{"name": "aes128-gcm@openssh.com", "rank": 1, "tied": false, "level": "recommended",
                                      "median": 1.0e9, "ci95_low": 0.9e9, "ci95_high": 1.1e9, "basis": "ssh-bulk"}],
                          "fastest_refused": {"name": "aes128-cbc", "level": "weak", "median": 1.2e9, "ci95_low": 1.1e9,
                                              "ci95_high": 1.3e9, "tied_with_best": false, "basis": "ssh-bulk", "refusals": ["cbc"]},
                          "safety_cost": 1.2}],
            "now": null, "gain": "nothing to change", "diff": ["--- a", "+++ b"], "later": true,
        });
        let r: RecommendationRecord = serde_json::from_value(v.clone()).unwrap();
        assert!(r.annotated());
        assert_eq!(r.extra["later"], json!(true));
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        let lists = json!({"protocol": "tls", "now": {"groups": ["x25519"]}});
        let r: RecommendationRecord = serde_json::from_value(lists).unwrap();
        assert!(matches!(r.now, Some(Some(Now::Lists(_)))));
        assert!(r.rankings.is_empty() && !r.annotated() || r.now.is_some());
    }
}
