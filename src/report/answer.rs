//! The main job's answer: what this machine should use, not a pile of numbers.
//! Built from the recommend stage's rankings; the full tables are in the report.

use crate::model::Document;
use crate::recommend::{figure, list_title, Outcome};

fn bold(s: &str) -> String {
    if super::colors_enabled() {
        console::style(s).bold().to_string()
    } else {
        s.to_string()
    }
}

/// Tied TLS 1.2 suites that differ only in the certificate type share one bulk
/// figure (the same Enc and Mac): `TLS_ECDHE_ECDSA_WITH_X` and `TLS_ECDHE_RSA_WITH_X`
/// read as `TLS_ECDHE_{ECDSA,RSA}_WITH_X`. Other names pass through; order is kept.
pub(crate) fn group_auth(names: &[&str]) -> Vec<String> {
    // (key exchange, rest) -> authentications, in order of first appearance.
    type Group<'a> = (Option<(&'a str, &'a str)>, Vec<&'a str>);
    let mut groups: Vec<Group> = Vec::new();
    for &n in names {
        let split = n
            .strip_prefix("TLS_")
            .and_then(|t| t.split_once("_WITH_"))
            .and_then(|(kxau, rest)| kxau.rsplit_once('_').map(|(kx, au)| ((kx, rest), au)));
        match split {
            Some((key, au)) => match groups.iter_mut().find(|(k, _)| *k == Some(key)) {
                Some((_, aus)) => aus.push(au),
                None => groups.push((Some(key), vec![au])),
            },
            None => groups.push((None, vec![n])),
        }
    }
    groups
        .into_iter()
        .map(|(key, aus)| match key {
            Some((kx, rest)) if aus.len() > 1 => format!("TLS_{kx}_{{{}}}_WITH_{rest}", aus.join(",")),
            Some((kx, rest)) => format!("TLS_{kx}_{}_WITH_{rest}", aus[0]),
            None => aus[0].to_string(),
        })
        .collect()
}

/// The answer for `cipherbench` / `cipherbench run`.
pub fn render(doc: &Document, outcome: &Outcome, targets: &[String], note: Option<&str>, report: Option<&str>, stored: bool) -> String {
    let h = &doc.run.host;
    let lib = |k: &str| doc.run.libraries.get(k).cloned();
    let mut libs = vec![lib("openssl").unwrap_or_default()];
    if let Some(g) = lib("gnutls").filter(|g| !g.starts_with("unavailable")) {
        libs.push(format!("GnuTLS {g}"));
    }
    if let Some(v) = doc.run.settings.get("openssh_version").and_then(|v| v.as_str()) {
        libs.push(v.to_string());
    }
    let mut s = format!(
        "This machine: {}, {} cores, {} · {}\n",
        h.cpu_model,
        h.cores,
        if h.cpu_flags.is_empty() {
            "no crypto instructions".to_string()
        } else {
            h.cpu_flags.join(" ")
        },
        libs.join(" · ")
    );
    let policy = doc.run.settings.get("policy").and_then(|v| v.as_str()).unwrap_or("intermediate");
    s.push_str(&bold(&format!("Fastest secure choices (policy: {policy})")));
    s.push('\n');
    let mut insecure: Vec<String> = Vec::new();
    for (_, rankings, _) in &outcome.protocols {
        for r in rankings {
            let best: Vec<_> = r.ranked.iter().filter(|x| x.rank == 1).collect();
            let Some(first) = best.first() else {
                if !r.unmeasured.is_empty() {
                    s.push_str(&format!("  {:<30} not measured in this run\n", list_title(&r.list)));
                }
                continue;
            };
            let names = group_auth(&best.iter().map(|x| x.name.as_str()).collect::<Vec<_>>());
            let tie = if best.len() > 1 { " (tied: the intervals overlap)" } else { "" };
            s.push_str(&format!(
                "  {:<30} {:<44} {}{tie}\n",
                list_title(&r.list),
                names.join(" = "),
                figure(&r.metric, first.median)
            ));
            if let (Some(bad), Some(cost)) = (&r.fastest_insecure, r.insecure_cost) {
                let verdict = if bad.tied_with_best {
                    "no measurable gain: not worth it".to_string()
                } else {
                    format!("{:+.0}%", (cost - 1.0) * 100.0)
                };
                insecure.push(format!(
                    "  {:<30} {} ({}) {} — {verdict}",
                    list_title(&r.list),
                    bad.name,
                    bad.level.as_str(),
                    figure(&r.metric, bad.median)
                ));
            }
        }
    }
    if !insecure.is_empty() {
        s.push_str(&bold("Fastest insecure options, for comparison"));
        s.push('\n');
        for l in insecure {
            s.push_str(&l);
            s.push('\n');
        }
    }
    if let Some(n) = note {
        s.push_str(&format!("  ({n})\n"));
    }
    if let Some(race) = doc.run.settings.get("race") {
        let lists: Vec<&str> = race["contests"]
            .as_array()
            .map(|a| a.iter().filter_map(|c| c["list"].as_str()).map(list_title).collect())
            .unwrap_or_default();
        if !lists.is_empty() {
            s.push_str(&format!(
                "  (raced for {:.0} s where the leaders were tied after the first pass: {}; ties left are shown as ties)\n",
                race["seconds"].as_f64().unwrap_or(0.0),
                lists.join(", ")
            ));
        }
    }
    let recs: Vec<_> = outcome
        .recommendations
        .iter()
        .filter(|r| targets.iter().any(|t| t.eq_ignore_ascii_case(&r.target)))
        .collect();
    if !recs.is_empty() {
        s.push_str(&bold(&format!(
            "Config for this machine's software ({}; or --for TARGET)",
            targets.join(", ")
        )));
        s.push('\n');
        for r in recs {
            s.push_str(&format!("  {} — {}:\n", r.target, r.location));
            for l in &r.lines {
                s.push_str(&format!("    {l}\n"));
            }
        }
    }
    if let Some(p) = report {
        s.push_str(&format!("Report: {p}\n"));
    }
    if stored {
        s.push_str(&format!(
            "Run {} stored; `cipherbench report --run {}` shows every figure.\n",
            doc.run.id, doc.run.id
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::group_auth;

    #[test]
    fn suites_that_differ_only_in_the_certificate_are_grouped() {
        let names = [
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_AES_128_GCM_SHA256",
            "aes128-gcm@openssh.com",
        ];
        assert_eq!(
            group_auth(&names),
            [
                "TLS_ECDHE_{ECDSA,RSA}_WITH_AES_128_GCM_SHA256",
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
                "TLS_AES_128_GCM_SHA256",
                "aes128-gcm@openssh.com",
            ]
        );
    }
}
