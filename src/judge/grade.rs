//! Grades for listings: a verdict in one table cell (level, short reason, reference
//! ids) and, with a policy, whether it passes.

use super::{Domain, Knowledge, Level, Policy, Verdict};

/// One graded name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Grade {
    pub level: Level,
    /// The deciding reason (the one whose ceiling is the level), shortened.
    pub reason: String,
    /// Source ids the deciding reason cites.
    pub references: Vec<String>,
    /// Whether the policy accepts it (when a policy was given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passes: Option<bool>,
    /// Why the policy refuses it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refusals: Vec<String>,
    /// Other sources' levels recorded in the data, e.g. `ssh-audit: insecure`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub opinions: Vec<String>,
}

/// Shortens a reason to its first clause.
fn short(text: &str) -> String {
    let cut = text.find([':', ';', '(']).map_or(text, |i| &text[..i]).trim().trim_end_matches('.');
    if cut.chars().count() > 60 {
        format!("{}…", cut.chars().take(59).collect::<String>())
    } else {
        cut.to_string()
    }
}

impl Grade {
    /// Grades a verdict, optionally under a policy.
    pub fn of(verdict: &Verdict, policy: Option<&Policy>) -> Grade {
        let deciding = verdict
            .reasons
            .iter()
            .find(|r| r.ceiling == verdict.level)
            .or_else(|| verdict.reasons.first());
        let decision = policy.map(|p| p.allows(verdict));
        Grade {
            level: verdict.level,
            reason: deciding.map(|r| short(&r.text)).unwrap_or_default(),
            references: deciding
                .map(|r| r.references.iter().map(|x| x.id.clone()).collect())
                .unwrap_or_default(),
            passes: decision.as_ref().map(|d| d.allowed),
            refusals: decision.map(|d| d.refusals).unwrap_or_default(),
            opinions: verdict.opinions.iter().map(|o| format!("{}: {}", o.source.id, o.level)).collect(),
        }
    }

    /// `secure: AEAD cipher [mozilla-tls-6.0]`.
    pub fn cell(&self) -> String {
        if self.references.is_empty() {
            format!("{}: {}", self.level, self.reason)
        } else {
            format!("{}: {} [{}]", self.level, self.reason, self.references.join(", "))
        }
    }

    /// `yes` / `no` for a policy column.
    pub fn pass_cell(&self) -> &'static str {
        match self.passes {
            Some(true) => "yes",
            Some(false) => "no",
            None => "",
        }
    }
}

/// Grades names of one domain against the built-in knowledge and an optional policy.
pub struct Grader {
    pub knowledge: Knowledge,
    pub policy: Option<Policy>,
}

impl Grader {
    /// The built-in knowledge base and the policy named by `--policy` (none: no pass column).
    pub fn new(policy: Option<Policy>) -> Result<Grader, super::JudgeError> {
        Ok(Grader {
            knowledge: Knowledge::builtin()?,
            policy,
        })
    }

    pub fn grade(&self, domain: Domain, name: &str) -> Grade {
        let v = if matches!(domain, Domain::Tls12Suite | Domain::Tls13Suite) {
            self.knowledge.judge_tls_suite(name)
        } else {
            self.knowledge.judge(domain, name)
        };
        Grade::of(&v, self.policy.as_ref())
    }

    /// Column headers: `grade` and, with a policy, `NAME passes`.
    pub fn headers(&self) -> Vec<String> {
        let mut h = vec!["grade".to_string()];
        if let Some(p) = &self.policy {
            h.push(format!("{} policy", p.name));
        }
        h
    }

    /// The grade cells for a row (one or two, matching `headers`).
    pub fn cells(&self, domain: Domain, name: &str) -> Vec<String> {
        let g = self.grade(domain, name);
        let mut c = vec![g.cell()];
        if self.policy.is_some() {
            c.push(g.pass_cell().to_string());
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grades_name_the_deciding_reason_and_the_policy_outcome() {
        let g = Grader::new(Some(Policy::builtin("intermediate").unwrap())).unwrap();
        let rc4 = g.grade(Domain::Tls12Suite, "RC4-MD5");
        assert_eq!(rc4.level, Level::Insecure);
        assert_eq!(rc4.passes, Some(false));
        assert!(rc4.references.iter().any(|r| r.contains("7465")), "{rc4:?}");
        let gcm = g.grade(Domain::Tls13Suite, "TLS_AES_128_GCM_SHA256");
        assert!(gcm.level >= Level::Secure && gcm.passes == Some(true), "{gcm:?}");
        assert_eq!(g.cells(Domain::Primitive, "aes-128-gcm").len(), 2);
        let unknown = g.grade(Domain::SshCipher, "rot13@example.com");
        assert_eq!((unknown.level, unknown.passes), (Level::Unrated, Some(false)));
        assert!(short("A: b").len() < 5);
    }
}
