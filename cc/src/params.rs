//! Algorithm parameters set with `--cc-param KEY=VALUE`.
//!
//! Every constant of a paper is a parameter with the paper's default. Each
//! algorithm declares a table of [`ParamInfo`]; a [`ParamValues`] holds one
//! value per table entry. Values are plain numbers so that the whole
//! selection stays `Copy` (quiche copies its recovery configuration around);
//! a parameter that is a choice among words stores the index of the word.
//!
//! Algorithms read their values through typed [`Key`]s, never by name at run
//! time: a key is resolved against the algorithm's table when the crate is
//! compiled ([`Key::in_table`] is a `const fn`), so a misspelt name, or a key
//! whose type does not match the entry (a number read as on/off, a choice
//! whose words differ), fails to compile. On/off entries read as [`OnOff`],
//! word choices as their enum ([`ChoiceParam`]).

use std::fmt;
use std::marker::PhantomData;

/// Most parameters any algorithm may declare.
pub const MAX_PARAMS: usize = 80;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// Any finite number in `min..=max`.
    Number { min: f64, max: f64 },
    /// A whole number in `min..=max`.
    Integer { min: u64, max: u64 },
    /// One of the given words; stored as its index.
    Choice(&'static [&'static str]),
}

/// The words of an on/off parameter, in the order of their indices.
pub const ON_OFF_WORDS: &[&str] = &["on", "off"];

/// The kind of an on/off parameter.
pub const ON_OFF: ParamKind = ParamKind::Choice(ON_OFF_WORDS);

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

    /// The value `key` names, typed. Keys are resolved against a table at
    /// compile time; handing a key of another algorithm's table is a bug,
    /// which every algorithm's construction test catches here.
    pub fn value<T: ParamType>(&self, key: Key<T>) -> T {
        let entry = self.table.get(key.index).map(|info| info.name);
        assert!(
            entry == Some(key.name),
            "{}: parameter key {} belongs to another table",
            self.algorithm,
            key.name
        );
        T::from_stored(self.values[key.index])
    }

    /// Whether `key`'s parameter was set to something other than its default.
    pub fn is_changed<T: ParamType>(&self, key: Key<T>) -> bool {
        self.table
            .get(key.index)
            .is_some_and(|info| info.name == key.name && info.default != self.values[key.index])
    }

    /// The number stored for the parameter called `name`, if the table has
    /// one (for reports and tests; algorithms read typed [`Key`]s).
    pub fn number(&self, name: &str) -> Option<f64> {
        self.index(name).map(|i| self.values[i])
    }

    /// The word of the choice parameter called `name`, if the table has
    /// one (for reports and tests; algorithms read typed [`Key`]s).
    pub fn word(&self, name: &str) -> Option<&'static str> {
        let index = self.index(name)?;
        match self.table[index].kind {
            ParamKind::Choice(words) => words.get(self.values[index] as usize).copied(),
            _ => None,
        }
    }

    /// The parameter called `name` as the user would write it, if the table
    /// has one (for reports and tests; algorithms read typed [`Key`]s).
    pub fn text_of(&self, name: &str) -> Option<String> {
        self.index(name)
            .map(|i| format_value(&self.table[i], self.values[i]))
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

/// A type a parameter's value is read as; [`Key::in_table`] checks at compile
/// time that the table's entry holds it.
pub trait ParamType: Copy {
    /// Which kind of entry holds it; for a choice, its words in index order.
    const SHAPE: ParamShape;

    /// The value from its stored number (validated when it was set).
    fn from_stored(stored: f64) -> Self;
}

/// What a [`ParamType`] needs of a table entry.
#[derive(Clone, Copy, Debug)]
pub enum ParamShape {
    Number,
    Integer,
    Choice(&'static [&'static str]),
}

impl ParamType for f64 {
    const SHAPE: ParamShape = ParamShape::Number;

    fn from_stored(stored: f64) -> Self {
        stored
    }
}

impl ParamType for u64 {
    const SHAPE: ParamShape = ParamShape::Integer;

    fn from_stored(stored: f64) -> Self {
        // Integers are stored exactly (they are at most 2^53 by their range).
        stored as u64
    }
}

/// A parameter chosen among words: an enum whose variants are the words,
/// in order. Implement it and the value reads as the enum.
pub trait ChoiceParam: Copy + 'static {
    /// The words, in the order of the variants.
    const WORDS: &'static [&'static str];

    /// The variant of the word at `index`; `None` past the end.
    fn from_index(index: usize) -> Option<Self>;
}

/// Reads a [`ChoiceParam`] as a [`ParamType`] (a blanket impl would overlap
/// the numbers' in the compiler's eyes).
#[macro_export]
macro_rules! choice_param_type {
    ($choice:ty, $fallback:expr) => {
        impl $crate::params::ParamType for $choice {
            const SHAPE: $crate::params::ParamShape =
                $crate::params::ParamShape::Choice(<$choice as $crate::params::ChoiceParam>::WORDS);

            fn from_stored(stored: f64) -> Self {
                // The index was validated when the value was set; the
                // fallback is never taken.
                <$choice as $crate::params::ChoiceParam>::from_index(stored as usize)
                    .unwrap_or($fallback)
            }
        }
    };
}

/// An on/off parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    On,
    Off,
}

impl OnOff {
    pub fn is_on(self) -> bool {
        self == OnOff::On
    }
}

impl ChoiceParam for OnOff {
    const WORDS: &'static [&'static str] = ON_OFF_WORDS;

    fn from_index(index: usize) -> Option<Self> {
        [OnOff::On, OnOff::Off].get(index).copied()
    }
}

choice_param_type!(OnOff, OnOff::Off);

/// A parameter of one table, read as `T`. Made at compile time by
/// [`Key::in_table`]; reading it is an index, not a search.
pub struct Key<T> {
    index: usize,
    name: &'static str,
    value: PhantomData<fn() -> T>,
}

impl<T> Clone for Key<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Key<T> {}

impl<T> fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Key({} at {})", self.name, self.index)
    }
}

impl<T: ParamType> Key<T> {
    /// The entry called `name` of `table`, read as `T`. Use it in a `const`:
    /// a name the table lacks, or an entry that does not hold a `T`, then
    /// fails to compile.
    ///
    /// ```
    /// use vegas_cc::params::{Key, OnOff, ParamInfo, ParamKind, ParamValues, ON_OFF};
    /// const TABLE: &[ParamInfo] = &[
    ///     ParamInfo { name: "alpha", default: 1.0,
    ///                 kind: ParamKind::Number { min: 0.0, max: 9.0 }, description: "" },
    ///     ParamInfo { name: "pacing", default: 0.0, kind: ON_OFF, description: "" },
    /// ];
    /// const ALPHA: Key<f64> = Key::in_table(TABLE, "alpha");
    /// const PACING: Key<OnOff> = Key::in_table(TABLE, "pacing");
    /// let mut values = ParamValues::defaults("example", TABLE);
    /// values.set_pair("pacing=off").unwrap();
    /// assert_eq!((values.value(ALPHA), values.value(PACING)), (1.0, OnOff::Off));
    /// ```
    ///
    /// A misspelt name does not compile:
    ///
    /// ```compile_fail
    /// use vegas_cc::params::{Key, ParamInfo, ParamKind};
    /// const TABLE: &[ParamInfo] = &[ParamInfo { name: "alpha", default: 1.0,
    ///     kind: ParamKind::Number { min: 0.0, max: 9.0 }, description: "" }];
    /// const ALPHA: Key<f64> = Key::in_table(TABLE, "alpah");
    /// let _ = ALPHA;
    /// ```
    ///
    /// Nor does a number read as on/off:
    ///
    /// ```compile_fail
    /// use vegas_cc::params::{Key, OnOff, ParamInfo, ParamKind};
    /// const TABLE: &[ParamInfo] = &[ParamInfo { name: "alpha", default: 1.0,
    ///     kind: ParamKind::Number { min: 0.0, max: 9.0 }, description: "" }];
    /// const ALPHA: Key<OnOff> = Key::in_table(TABLE, "alpha");
    /// let _ = ALPHA;
    /// ```
    pub const fn in_table(table: &[ParamInfo], name: &'static str) -> Self {
        let index = index_named(table, name);
        let fits = match (T::SHAPE, table[index].kind) {
            (ParamShape::Number, ParamKind::Number { .. }) => true,
            (ParamShape::Integer, ParamKind::Integer { .. }) => true,
            (ParamShape::Choice(ours), ParamKind::Choice(theirs)) => same_words(ours, theirs),
            _ => false,
        };
        assert!(fits, "the parameter's entry does not hold this key's type");
        Key {
            index,
            name,
            value: PhantomData,
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }
}

const fn index_named(table: &[ParamInfo], name: &str) -> usize {
    let mut i = 0;
    while i < table.len() {
        if same_bytes(table[i].name.as_bytes(), name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    panic!("no parameter of that name in the table");
}

const fn same_words(a: &[&str], b: &[&str]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if !same_bytes(a[i].as_bytes(), b[i].as_bytes()) {
            return false;
        }
        i += 1;
    }
    true
}

/// The entry called `name` of `table`, for parameter tables that share
/// entries with another algorithm's. Fails to compile if there is none.
pub(crate) const fn param_named(table: &[ParamInfo], name: &str) -> ParamInfo {
    table[index_named(table, name)]
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

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Flavour {
        Paper,
        Linux,
    }

    impl ChoiceParam for Flavour {
        const WORDS: &'static [&'static str] = &["paper", "linux"];

        fn from_index(index: usize) -> Option<Self> {
            [Flavour::Paper, Flavour::Linux].get(index).copied()
        }
    }

    choice_param_type!(Flavour, Flavour::Paper);

    const ALPHA: Key<f64> = Key::in_table(TABLE, "alpha");
    const M: Key<u64> = Key::in_table(TABLE, "m");
    const FLAVOUR: Key<Flavour> = Key::in_table(TABLE, "flavour");

    #[test]
    fn defaults_and_setting() {
        let mut p = ParamValues::defaults("test", TABLE);
        assert_eq!(p.value(ALPHA), 1.0);
        assert_eq!(p.value(FLAVOUR), Flavour::Paper);
        assert!(!p.is_changed(ALPHA));
        p.set_pair("alpha=2.5").unwrap();
        p.set("flavour", "linux").unwrap();
        p.set("m", "30").unwrap();
        assert_eq!(p.value(ALPHA), 2.5);
        assert!(p.is_changed(ALPHA));
        assert_eq!(p.value(FLAVOUR), Flavour::Linux);
        assert_eq!(p.value(M), 30);
        assert_eq!(p.text_of("flavour").as_deref(), Some("linux"));
        assert_eq!(p.text_of("nothing"), None);
        assert_eq!(p.describe(), "alpha=2.5 m=30 flavour=linux");
    }

    #[test]
    #[should_panic(expected = "belongs to another table")]
    fn a_key_of_another_table_is_refused() {
        const OTHER: &[ParamInfo] = &[TABLE[2], TABLE[0]];
        const OTHER_ALPHA: Key<f64> = Key::in_table(OTHER, "alpha");
        ParamValues::defaults("test", TABLE).value(OTHER_ALPHA);
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
