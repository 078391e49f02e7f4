//! The algorithms this crate offers, by name, and how to build one.

use std::fmt;

// The algorithms import these from `controller`, below this module: the
// registry imports every algorithm, and none imports the registry.
use crate::careful_resume::CarefulResumeConfig;
use crate::controller::CongestionController;
pub use crate::controller::{no_constraints, AlgorithmInfo, WindowConfig};
use crate::params::{ParamError, ParamValues};

/// quiche's own algorithms, selectable beside ours but implemented by quiche.
pub const QUICHE_ALGORITHMS: &[(&str, &str)] = &[
    ("reno", "quiche's NewReno (RFC 9002), loss-based"),
    (
        "cubic",
        "quiche's CUBIC (RFC 9438) with HyStart++, loss-based; quiche's default",
    ),
    ("bbr2", "quiche's BBRv2 (gcongestion), model-based"),
];

/// Every algorithm of this crate, in the order they are listed.
pub static ALGORITHMS: &[&AlgorithmInfo] = &[
    &crate::vegas_sat::INFO,
    &crate::vegas::VEGAS,
    &crate::vegas_linux::INFO,
    &crate::vegas_a::INFO,
    &crate::vegas_l::INFO,
    &crate::veno::INFO,
    &crate::venodb::INFO,
    &crate::rovegas::INFO,
    &crate::vegas_w::INFO,
    &crate::westwood::INFO,
    // scripts/new-controller adds a new member's INFO above this line.
];

/// Names of all selectable algorithms: ours, then quiche's.
pub fn all_names() -> Vec<&'static str> {
    ALGORITHMS
        .iter()
        .map(|a| a.name)
        .chain(QUICHE_ALGORITHMS.iter().map(|(n, _)| *n))
        .collect()
}

/// `name  description` lines for every selectable algorithm.
pub fn listing() -> Vec<(&'static str, &'static str)> {
    ALGORITHMS
        .iter()
        .map(|a| (a.name, a.description))
        .chain(QUICHE_ALGORITHMS.iter().copied())
        .collect()
}

pub fn find(name: &str) -> Option<&'static AlgorithmInfo> {
    ALGORITHMS.iter().copied().find(|a| a.name == name)
}

/// Why a controller could not be selected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecError {
    UnknownAlgorithm {
        name: String,
        valid: Vec<&'static str>,
    },
    /// A quiche algorithm was given parameters; quiche's own take none here.
    ParamsForQuicheAlgorithm {
        name: String,
    },
    Param(ParamError),
    /// A selection text that names one of ours but is not `NAME` or
    /// `NAME(KEY=VALUE ...)` ([`parse_selection`]).
    Malformed {
        text: String,
        reason: &'static str,
    },
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            SpecError::UnknownAlgorithm { name, valid } => write!(
                f,
                "unknown congestion control algorithm '{name}'; valid algorithms: {}",
                valid.join(", ")
            ),
            SpecError::ParamsForQuicheAlgorithm { name } => write!(
                f,
                "{name} is quiche's own algorithm and takes no --cc-param"
            ),
            SpecError::Param(e) => e.fmt(f),
            SpecError::Malformed { text, reason } => write!(
                f,
                "'{text}': {reason}; expected NAME or NAME(KEY=VALUE KEY=VALUE ...)"
            ),
        }
    }
}

impl std::error::Error for SpecError {}

impl From<ParamError> for SpecError {
    fn from(e: ParamError) -> Self {
        SpecError::Param(e)
    }
}

/// A chosen algorithm of this crate with its parameters. `Copy`, so that it
/// can ride in quiche's recovery configuration.
#[derive(Clone, Copy)]
pub struct ControllerSpec {
    info: &'static AlgorithmInfo,
    params: ParamValues,
    /// `Some`: Careful Resume wraps the controller (off by default).
    careful_resume: Option<CarefulResumeConfig>,
}

impl ControllerSpec {
    /// The algorithm called `name` with its paper's defaults.
    pub fn new(name: &str) -> Result<Self, SpecError> {
        let info = find(name).ok_or_else(|| SpecError::UnknownAlgorithm {
            name: name.to_string(),
            valid: all_names(),
        })?;
        Ok(ControllerSpec {
            info,
            params: ParamValues::defaults(info.name, info.params),
            careful_resume: None,
        })
    }

    /// The algorithm called `name` with `KEY=VALUE` parameters applied in order.
    pub fn with_params<S: AsRef<str>>(name: &str, pairs: &[S]) -> Result<Self, SpecError> {
        let mut spec = Self::new(name)?;
        for pair in pairs {
            spec.params.set_pair(pair.as_ref())?;
        }
        (spec.info.validate)(&spec.params).map_err(|reason| {
            SpecError::Param(ParamError::Inconsistent {
                algorithm: spec.info.name,
                reason,
            })
        })?;
        Ok(spec)
    }

    pub fn name(&self) -> &'static str {
        self.info.name
    }

    pub fn info(&self) -> &'static AlgorithmInfo {
        self.info
    }

    pub fn params(&self) -> &ParamValues {
        &self.params
    }

    /// This spec with Careful Resume on, resuming `saved` if given.
    pub fn with_careful_resume(mut self, config: CarefulResumeConfig) -> Self {
        self.careful_resume = Some(config);
        self
    }

    pub fn careful_resume(&self) -> Option<CarefulResumeConfig> {
        self.careful_resume
    }

    pub fn build(&self, window: WindowConfig) -> Box<dyn CongestionController> {
        (self.info.build)(&self.params, window)
    }
}

impl PartialEq for ControllerSpec {
    fn eq(&self, other: &Self) -> bool {
        self.info.name == other.info.name
            && self.params == other.params
            && self.careful_resume == other.careful_resume
    }
}

impl fmt::Debug for ControllerSpec {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.params.fmt(f)
    }
}

/// Checks a selection made on a command line: an algorithm of ours with its
/// parameters, or one of quiche's with none. Returns our spec, or `None` for
/// quiche's own.
pub fn resolve<S: AsRef<str>>(
    name: &str,
    pairs: &[S],
) -> Result<Option<ControllerSpec>, SpecError> {
    if QUICHE_ALGORITHMS.iter().any(|(n, _)| *n == name) {
        if pairs.is_empty() {
            return Ok(None);
        }
        return Err(SpecError::ParamsForQuicheAlgorithm {
            name: name.to_string(),
        });
    }
    ControllerSpec::with_params(name, pairs).map(Some)
}

/// A selection as one text: `NAME` with its defaults, or
/// `NAME(KEY=VALUE KEY=VALUE ...)`, the form the apps print a selection in.
/// quiche's `Config::set_cc_algorithm_name` takes it (through the plug-in
/// seam), so that frameworks that configure quiche by algorithm name only
/// (tokio-quiche's `QuicSettings::cc_algorithm`) can carry parameters.
/// Whitespace around the name, inside the parentheses and between pairs is
/// ignored. `None`: NAME is not one of ours (quiche's own, or unknown: the
/// caller says which); `Some(Err)`: ours, but the parentheses or the
/// parameters are wrong.
pub fn parse_selection(text: &str) -> Option<Result<ControllerSpec, SpecError>> {
    let text = text.trim();
    let (name, params) = match text.split_once('(') {
        Some((name, rest)) => (name.trim(), Some(rest)),
        None => (text, None),
    };
    find(name)?;
    let malformed = |reason| {
        Some(Err(SpecError::Malformed {
            text: text.to_string(),
            reason,
        }))
    };
    let pairs: Vec<&str> = match params {
        None => Vec::new(),
        Some(rest) => {
            let Some(inner) = rest.strip_suffix(')') else {
                return malformed("the parameter list does not end with ')'");
            };
            if inner.contains(['(', ')']) {
                return malformed("parentheses inside the parameter list");
            }
            inner.split_whitespace().collect()
        }
    };
    Some(ControllerSpec::with_params(name, &pairs))
}

#[cfg(test)]
mod parse_selection_tests {
    use super::*;

    /// What `with_params` makes of the same name and pairs, the reference.
    fn spec(name: &str, pairs: &[&str]) -> ControllerSpec {
        match ControllerSpec::with_params(name, pairs) {
            Ok(spec) => spec,
            Err(e) => panic!("{name} {pairs:?}: {e}"),
        }
    }

    fn parsed(text: &str) -> Result<ControllerSpec, SpecError> {
        match parse_selection(text) {
            Some(result) => result,
            None => panic!("'{text}' was not taken as ours"),
        }
    }

    fn malformed(text: &str) -> &'static str {
        match parsed(text) {
            Err(SpecError::Malformed { text: t, reason }) => {
                assert_eq!(t, text.trim());
                reason
            }
            other => panic!("'{text}': {other:?}"),
        }
    }

    #[test]
    fn a_name_alone_or_with_pairs_is_the_spec_with_those_pairs() {
        assert_eq!(parsed("vegas"), Ok(spec("vegas", &[])));
        assert_eq!(parsed("vegas()"), Ok(spec("vegas", &[])));
        assert_eq!(
            parsed("vegas(alpha=2 beta=4)"),
            Ok(spec("vegas", &["alpha=2", "beta=4"]))
        );
        // Every algorithm of ours, by its own name.
        for info in ALGORITHMS {
            assert_eq!(parsed(info.name), Ok(spec(info.name, &[])));
        }
        let changed = parsed("vegas(alpha=2 beta=4)").map(|s| s.params().number("alpha"));
        assert_eq!(changed, Ok(Some(2.0)));
    }

    #[test]
    fn the_form_the_apps_print_parses_back_to_the_same_spec() {
        // `NAME(every KEY=VALUE)` as `cc_select` prints a selection, with
        // every parameter of every algorithm at its default.
        for info in ALGORITHMS {
            let reference = spec(info.name, &[]);
            let printed = format!("{}({})", info.name, reference.params().describe());
            assert_eq!(parsed(&printed), Ok(reference), "{printed}");
        }
    }

    #[test]
    fn whitespace_around_the_name_in_the_parentheses_and_between_pairs_is_ignored() {
        assert_eq!(
            parsed("  vegas ( alpha=2 \t beta=4 )  "),
            Ok(spec("vegas", &["alpha=2", "beta=4"]))
        );
        assert_eq!(parsed("\tvegas-sat\n"), Ok(spec("vegas-sat", &[])));
    }

    #[test]
    fn quiche_algorithms_unknown_names_and_empty_text_are_not_ours() {
        for text in [
            "cubic",
            "reno",
            "bbr2",
            "cubic(alpha=2)",
            "vegass",
            "",
            "   ",
            "()",
        ] {
            assert!(parse_selection(text).is_none(), "'{text}'");
        }
    }

    #[test]
    fn an_unknown_key_or_a_bad_pair_is_the_parameter_error() {
        let reference = ControllerSpec::with_params("vegas", &["nosuch=1"]);
        assert!(matches!(
            reference,
            Err(SpecError::Param(ParamError::UnknownKey { .. }))
        ));
        assert_eq!(parsed("vegas(nosuch=1)"), reference);
        assert_eq!(
            parsed("vegas(alpha)"),
            Err(SpecError::Param(ParamError::NotKeyValue("alpha".into())))
        );
        assert_eq!(
            parsed("vegas(alpha=x)"),
            ControllerSpec::with_params("vegas", &["alpha=x"])
        );
        // alpha above beta: each valid, together refused.
        assert!(matches!(
            parsed("vegas(alpha=5 beta=4)"),
            Err(SpecError::Param(ParamError::Inconsistent { .. }))
        ));
    }

    #[test]
    fn unbalanced_nested_or_extra_parentheses_are_malformed() {
        let unclosed = malformed("vegas(alpha=2");
        assert!(unclosed.contains("')'"), "{unclosed}");
        // Text after the closing parenthesis: the list does not end there.
        assert_eq!(malformed("vegas(alpha=2)x"), unclosed);
        let nested = malformed("vegas((alpha=2))");
        assert!(nested.contains("inside"), "{nested}");
        assert_eq!(malformed("vegas(alpha=2)(beta=4)"), nested);
        assert_eq!(malformed("vegas(alpha=2))"), nested);
        // Whitespace after the list is not extra text.
        assert_eq!(parsed("vegas(alpha=2) "), Ok(spec("vegas", &["alpha=2"])));
        // The message shows the text and the form expected.
        let shown = parsed("vegas(alpha=2")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            shown.contains("'vegas(alpha=2'") && shown.contains("NAME(KEY=VALUE"),
            "{shown}"
        );
    }
}
