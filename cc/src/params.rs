//! Algorithm parameters set with `--cc-param KEY=VALUE`.
//!
//! Every constant of a paper is a parameter with the paper's default. Each
//! algorithm declares a table of [`ParamInfo`]; a [`ParamValues`] holds one
//! value per table entry. Values are plain numbers so that the whole
//! selection stays `Copy` (quiche copies its recovery configuration around);
//! a parameter that is a choice among words stores the index of the word.

use std::fmt;

/// Most parameters any algorithm may declare.
pub const MAX_PARAMS: usize = 24;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// Any finite number in `min..=max`.
    Number { min: f64, max: f64 },
    /// A whole number in `min..=max`.
    Integer { min: u64, max: u64 },
    /// One of the given words; stored as its index.
    Choice(&'static [&'static str]),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamInfo {
    pub name: &'static str,
    pub default: f64,
    pub kind: ParamKind,
    pub description: &'static str,
}

impl ParamInfo {
    /// Default value as the user would write it.
    pub fn default_text(&self) -> String {
        format_value(self, self.default)
    }

    /// What values are accepted, for error messages and help.
    pub fn accepted(&self) -> String {
        match self.kind {
            ParamKind::Number { min, max } => format!("a number from {min} to {max}"),
            ParamKind::Integer { min, max } => format!("a whole number from {min} to {max}"),
            ParamKind::Choice(words) => format!("one of {}", words.join(", ")),
        }
    }

    fn parse(&self, text: &str) -> Option<f64> {
        let text = text.trim();
        match self.kind {
            ParamKind::Number { min, max } => {
                let v: f64 = text.parse().ok()?;
                (v.is_finite() && v >= min && v <= max).then_some(v)
            }
            ParamKind::Integer { min, max } => {
                let v: u64 = text.parse().ok()?;
                (v >= min && v <= max).then_some(v as f64)
            }
            ParamKind::Choice(words) => words.iter().position(|w| *w == text).map(|i| i as f64),
        }
    }
}

fn format_value(info: &ParamInfo, value: f64) -> String {
    match info.kind {
        ParamKind::Choice(words) => words
            .get(value as usize)
            .copied()
            .unwrap_or("?")
            .to_string(),
        ParamKind::Integer { .. } => format!("{}", value as u64),
        ParamKind::Number { .. } => format!("{value}"),
    }
}

/// Parameters that were replaced, with what to write instead; a user who
/// gives one is told so, beside the list of valid parameters.
const RETIRED: &[(&str, &str)] = &[(
    "slow_start_pacing",
    "slow_start_pacing was replaced by profile: profile=quic (the default) paces slow start, \
     profile=paper does not",
)];

/// Why a parameter was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamError {
    UnknownKey {
        algorithm: &'static str,
        key: String,
        valid: Vec<&'static str>,
        /// What replaced `key`, if it is a retired parameter.
        hint: Option<&'static str>,
    },
    BadValue {
        algorithm: &'static str,
        key: &'static str,
        value: String,
        accepted: String,
    },
    NotKeyValue(String),
    /// Values that are each valid but contradict each other.
    Inconsistent {
        algorithm: &'static str,
        reason: String,
    },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ParamError::UnknownKey {
                algorithm,
                key,
                valid,
                ..
            } if valid.is_empty() => {
                write!(f, "{algorithm} takes no parameters, but got '{key}'")
            }
            ParamError::UnknownKey {
                algorithm,
                key,
                valid,
                hint,
            } => {
                write!(f, "{algorithm} has no parameter '{key}'")?;
                if let Some(hint) = hint {
                    write!(f, " ({hint})")?;
                }
                write!(f, "; valid parameters: {}", valid.join(", "))
            }
            ParamError::BadValue {
                algorithm,
                key,
                value,
                accepted,
            } => write!(
                f,
                "{algorithm}: '{value}' is not a valid {key}: expected {accepted}"
            ),
            ParamError::NotKeyValue(text) => {
                write!(f, "--cc-param expects KEY=VALUE, got '{text}'")
            }
            ParamError::Inconsistent { algorithm, reason } => write!(f, "{algorithm}: {reason}"),
        }
    }
}

impl std::error::Error for ParamError {}

/// One value per entry of an algorithm's parameter table.
#[derive(Clone, Copy, PartialEq)]
pub struct ParamValues {
    algorithm: &'static str,
    table: &'static [ParamInfo],
    values: [f64; MAX_PARAMS],
}

impl ParamValues {
    /// The defaults of `table`.
    pub fn defaults(algorithm: &'static str, table: &'static [ParamInfo]) -> Self {
        assert!(
            table.len() <= MAX_PARAMS,
            "{algorithm} declares too many parameters"
        );
        let mut values = [0.0; MAX_PARAMS];
        for (slot, info) in values.iter_mut().zip(table) {
            *slot = info.default;
        }
        ParamValues {
            algorithm,
            table,
            values,
        }
    }

    pub fn table(&self) -> &'static [ParamInfo] {
        self.table
    }

    /// Sets `key` from the text the user gave.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        let key = key.trim();
        let index = self.index(key).ok_or_else(|| ParamError::UnknownKey {
            algorithm: self.algorithm,
            key: key.to_string(),
            valid: self.table.iter().map(|p| p.name).collect(),
            hint: RETIRED
                .iter()
                .find(|(retired, _)| *retired == key)
                .map(|(_, hint)| *hint),
        })?;
        let info = &self.table[index];
        let parsed = info.parse(value).ok_or_else(|| ParamError::BadValue {
            algorithm: self.algorithm,
            key: info.name,
            value: value.to_string(),
            accepted: info.accepted(),
        })?;
        self.values[index] = parsed;
        Ok(())
    }

    /// Sets a parameter from `KEY=VALUE`.
    pub fn set_pair(&mut self, pair: &str) -> Result<(), ParamError> {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| ParamError::NotKeyValue(pair.to_string()))?;
        self.set(key, value)
    }

    /// The value of `name`. Names are the algorithm's own constants, so an
    /// unknown name is a bug in the algorithm, caught by its tests.
    pub fn get(&self, name: &str) -> f64 {
        match self.index(name) {
            Some(i) => self.values[i],
            None => panic!("{} has no parameter named {name}", self.algorithm),
        }
    }

    /// The value of a choice parameter as its word.
    pub fn word(&self, name: &str) -> &'static str {
        let index = self
            .index(name)
            .unwrap_or_else(|| panic!("{} has no parameter named {name}", self.algorithm));
        match self.table[index].kind {
            ParamKind::Choice(words) => words[self.values[index] as usize],
            _ => panic!("{}: parameter {name} is not a choice", self.algorithm),
        }
    }

    /// `KEY=VALUE` for every parameter, in table order.
    pub fn describe(&self) -> String {
        self.table
            .iter()
            .zip(&self.values)
            .map(|(info, v)| format!("{}={}", info.name, format_value(info, *v)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.table.iter().position(|p| p.name == name)
    }
}

impl fmt::Debug for ParamValues {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}({})", self.algorithm, self.describe())
    }
}

/// The entry called `name` of `table`, for parameter tables that share
/// entries with another algorithm's. Fails to compile if there is none.
pub(crate) const fn param_named(table: &[ParamInfo], name: &str) -> ParamInfo {
    let mut i = 0;
    while i < table.len() {
        if same_bytes(table[i].name.as_bytes(), name.as_bytes()) {
            return table[i];
        }
        i += 1;
    }
    panic!("no parameter of that name in the table");
}

/// `first` followed by `second`, as one table of `N` entries.
pub(crate) const fn concat_params<const N: usize>(
    first: &[ParamInfo],
    second: &[ParamInfo],
) -> [ParamInfo; N] {
    assert!(
        first.len() + second.len() == N,
        "N must be the sum of the lengths"
    );
    let mut out = [first[0]; N];
    let mut i = 0;
    while i < first.len() {
        out[i] = first[i];
        i += 1;
    }
    let mut j = 0;
    while j < second.len() {
        out[first.len() + j] = second[j];
        j += 1;
    }
    out
}

const fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[ParamInfo] = &[
        ParamInfo {
            name: "alpha",
            default: 1.0,
            kind: ParamKind::Number {
                min: 0.0,
                max: 100.0,
            },
            description: "lower threshold",
        },
        ParamInfo {
            name: "m",
            default: 20.0,
            kind: ParamKind::Integer { min: 1, max: 1000 },
            description: "samples",
        },
        ParamInfo {
            name: "flavour",
            default: 0.0,
            kind: ParamKind::Choice(&["paper", "linux"]),
            description: "which variant",
        },
    ];

    #[test]
    fn defaults_and_setting() {
        let mut p = ParamValues::defaults("test", TABLE);
        assert_eq!(p.get("alpha"), 1.0);
        p.set_pair("alpha=2.5").unwrap();
        p.set("flavour", "linux").unwrap();
        p.set("m", "30").unwrap();
        assert_eq!(p.get("alpha"), 2.5);
        assert_eq!(p.word("flavour"), "linux");
        assert_eq!(p.get("m"), 30.0);
        assert_eq!(p.describe(), "alpha=2.5 m=30 flavour=linux");
    }

    #[test]
    fn errors_name_valid_choices() {
        let mut p = ParamValues::defaults("test", TABLE);
        let e = p.set("alpah", "1").unwrap_err().to_string();
        assert!(e.contains("alpha, m, flavour"), "{e}");
        let e = p.set("alpha", "NaN").unwrap_err().to_string();
        assert!(e.contains("a number from 0 to 100"), "{e}");
        let e = p.set("m", "1.5").unwrap_err().to_string();
        assert!(e.contains("whole number"), "{e}");
        let e = p.set("flavour", "bsd").unwrap_err().to_string();
        assert!(e.contains("paper, linux"), "{e}");
        let e = p.set("slow_start_pacing", "on").unwrap_err().to_string();
        assert!(
            e.contains("replaced by profile") && e.contains("alpha, m, flavour"),
            "{e}"
        );
        assert!(matches!(
            p.set_pair("alpha"),
            Err(ParamError::NotKeyValue(_))
        ));
        assert_eq!(
            p,
            ParamValues::defaults("test", TABLE),
            "failed sets change nothing"
        );
    }
}
