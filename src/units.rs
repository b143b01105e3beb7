//! Units as newtypes. Numbers travel through the pipeline in base units (bytes,
//! seconds, bytes per second); human units (KiB, MB/s, "90s") appear only at the
//! edge, in parsing and in formatting.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// An amount of data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

/// A duration in seconds (wall or CPU).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seconds(pub f64);

/// A throughput.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BytesPerSec(pub f64);

impl Seconds {
    pub fn from_duration(d: Duration) -> Self {
        Seconds(d.as_secs_f64())
    }
}

impl fmt::Display for Bytes {
    /// Sizes print the way `openssl speed` users know them: `16 B`, `1 KiB`, `16 KiB`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
        for (size, name) in UNITS {
            if b >= size && b % size == 0 {
                return write!(f, "{} {}", b / size, name);
            }
        }
        write!(f, "{b} B")
    }
}

impl fmt::Display for BytesPerSec {
    /// Decimal units, as `openssl speed` (which prints 1000s of bytes per second).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v >= 1e9 {
            write!(f, "{:.2} GB/s", v / 1e9)
        } else if v >= 1e6 {
            write!(f, "{:.1} MB/s", v / 1e6)
        } else if v >= 1e3 {
            write!(f, "{:.1} kB/s", v / 1e3)
        } else {
            write!(f, "{v:.0} B/s")
        }
    }
}

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        if s >= 1.0 {
            write!(f, "{s:.2} s")
        } else if s >= 1e-3 {
            write!(f, "{:.2} ms", s * 1e3)
        } else {
            write!(f, "{:.1} µs", s * 1e6)
        }
    }
}

/// Why a size or duration typed by the user was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ParseUnitError {
    #[error("empty value")]
    Empty,
    #[error("'{0}' is not a number with an optional unit")]
    Malformed(String),
    #[error("unknown unit '{unit}' in '{input}' (use {allowed})")]
    UnknownUnit {
        input: String,
        unit: String,
        allowed: &'static str,
    },
    #[error("'{0}' must be greater than zero")]
    Zero(String),
    #[error("'{0}' is too large")]
    TooLarge(String),
}

fn split_number(input: &str) -> Result<(f64, String), ParseUnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(ParseUnitError::Empty);
    }
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let value: f64 = num.parse().map_err(|_| ParseUnitError::Malformed(input.to_string()))?;
    if !value.is_finite() {
        return Err(ParseUnitError::Malformed(input.to_string()));
    }
    Ok((value, unit.trim().to_ascii_lowercase()))
}

/// Parses `16`, `16k`, `16KiB`, `100M`, `1G`. Suffixes are binary (1k = 1024), like
/// `head -c` and `dd`, because block and file sizes are powers of two.
pub fn parse_bytes(input: &str) -> Result<Bytes, ParseUnitError> {
    let (value, unit) = split_number(input)?;
    let mult: u64 = match unit.as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => {
            return Err(ParseUnitError::UnknownUnit {
                input: input.to_string(),
                unit,
                allowed: "B, K, M, G or T",
            })
        }
    };
    let bytes = value * mult as f64;
    if bytes >= u64::MAX as f64 {
        return Err(ParseUnitError::TooLarge(input.to_string()));
    }
    let bytes = bytes.round() as u64;
    if bytes == 0 {
        return Err(ParseUnitError::Zero(input.to_string()));
    }
    Ok(Bytes(bytes))
}

/// Parses `90s`, `1.5m`, `500ms`, `2h`, or a bare number of seconds.
pub fn parse_duration(input: &str) -> Result<Seconds, ParseUnitError> {
    let (value, unit) = split_number(input)?;
    let secs = match unit.as_str() {
        "" | "s" | "sec" | "secs" => value,
        "ms" => value / 1e3,
        "m" | "min" | "mins" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(ParseUnitError::UnknownUnit {
                input: input.to_string(),
                unit,
                allowed: "ms, s, m or h",
            })
        }
    };
    if secs <= 0.0 {
        return Err(ParseUnitError::Zero(input.to_string()));
    }
    if secs > 7.0 * 24.0 * 3600.0 {
        return Err(ParseUnitError::TooLarge(input.to_string()));
    }
    Ok(Seconds(secs))
}

/// `10%`, `10 %`, `0.1` → 0.1.
pub fn parse_gain(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("'{s}' is not a gain: give a percentage such as 10%"))?;
    if !(0.0..=100.0).contains(&v) || !v.is_finite() {
        return Err(format!("'{s}' must be between 0% and 10000%"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    #[test]
    fn gains_parse() {
        assert_eq!(super::parse_gain("10%").unwrap(), 0.1);
        assert_eq!(super::parse_gain("0.25").unwrap(), 0.25);
        assert!(super::parse_gain("ten").is_err());
        assert!(super::parse_gain("-5%").is_err());
    }

    use super::*;

    #[test]
    fn parses_sizes() {
        assert_eq!(parse_bytes("16"), Ok(Bytes(16)));
        assert_eq!(parse_bytes("16k"), Ok(Bytes(16384)));
        assert_eq!(parse_bytes("16KiB"), Ok(Bytes(16384)));
        assert_eq!(parse_bytes("100M"), Ok(Bytes(100 << 20)));
        assert_eq!(parse_bytes("1.5k"), Ok(Bytes(1536)));
        assert!(matches!(parse_bytes("0"), Err(ParseUnitError::Zero(_))));
        assert!(matches!(parse_bytes("12q"), Err(ParseUnitError::UnknownUnit { .. })));
        assert!(matches!(parse_bytes("abc"), Err(ParseUnitError::Malformed(_))));
        assert!(matches!(parse_bytes(""), Err(ParseUnitError::Empty)));
    }

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration("90s"), Ok(Seconds(90.0)));
        assert_eq!(parse_duration("90"), Ok(Seconds(90.0)));
        assert_eq!(parse_duration("2m"), Ok(Seconds(120.0)));
        assert_eq!(parse_duration("500ms"), Ok(Seconds(0.5)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("5 parsecs").is_err());
    }

    #[test]
    fn formats_human_units() {
        assert_eq!(Bytes(16384).to_string(), "16 KiB");
        assert_eq!(Bytes(100).to_string(), "100 B");
        assert_eq!(BytesPerSec(4.25e9).to_string(), "4.25 GB/s");
        assert_eq!(BytesPerSec(512.3e6).to_string(), "512.3 MB/s");
        assert_eq!(Seconds(0.0025).to_string(), "2.50 ms");
    }

    proptest::proptest! {
        #[test]
        fn any_input_is_parsed_or_refused_never_a_panic(input in ".{0,64}") {
            let _ = parse_bytes(&input);
            let _ = parse_duration(&input);
        }

        #[test]
        fn sizes_and_durations_mean_what_they_say(n in 1u64..1_000_000, unit in 0usize..4) {
            let (suffix, mult) = [("", 1u64), ("k", 1 << 10), ("M", 1 << 20), ("g", 1 << 30)][unit];
            proptest::prop_assert_eq!(parse_bytes(&format!("{n}{suffix}")).unwrap().0, n * mult);
            let secs = parse_duration(&format!("{n}ms")).unwrap().0;
            proptest::prop_assert!((secs - n as f64 / 1e3).abs() < 1e-9);
        }
    }
}
