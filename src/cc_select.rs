//! Applies `--cc-algorithm NAME` and `--cc-param KEY=VALUE` to a
//! `quiche::Config`.
//!
//! Our algorithms (the `vegas-cc` registry) go through the patched
//! `Config::set_cc_controller`; quiche's own (reno, cubic, bbr2) through
//! `Config::set_cc_algorithm_name`. Either way the selection is checked by
//! `vegas_cc::resolve`, whose errors name the valid algorithms or keys.

use std::fmt;

use anyhow::anyhow;
use vegas_cc::registry;
use vegas_cc::{ControllerSpec, SpecError};

/// quiche's default, and so the apps' default.
pub const DEFAULT_CC_ALGORITHM: &str = "cubic";

/// A congestion controller as named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CcSelection {
    pub name: String,
    /// `KEY=VALUE` pairs, applied in order.
    pub params: Vec<String>,
}

impl Default for CcSelection {
    fn default() -> Self {
        CcSelection::new(DEFAULT_CC_ALGORITHM)
    }
}

impl CcSelection {
    pub fn new(name: &str) -> Self {
        CcSelection {
            name: name.to_string(),
            params: Vec::new(),
        }
    }

    pub fn with_params(name: &str, params: &[&str]) -> Self {
        CcSelection {
            name: name.to_string(),
            params: params.iter().map(|p| p.to_string()).collect(),
        }
    }

    /// Checks the selection without touching any configuration. The name
    /// is matched case-insensitively, with quiche's aliases
    /// ([`canonical_name`]).
    pub fn resolve(&self) -> Result<ResolvedCc, SpecError> {
        let name = canonical_name(&self.name);
        Ok(match vegas_cc::resolve(&name, &self.params)? {
            Some(spec) => ResolvedCc::Ours(spec),
            None => ResolvedCc::Quiche(name),
        })
    }

    /// Selects this controller in `config`, returning what was selected.
    pub fn apply(&self, config: &mut quiche::Config) -> anyhow::Result<ResolvedCc> {
        let resolved = self.resolve().map_err(|e| anyhow!("{e}"))?;
        match &resolved {
            ResolvedCc::Ours(spec) => config.set_cc_controller(*spec),
            ResolvedCc::Quiche(name) => config.set_cc_algorithm_name(name).map_err(|e| {
                anyhow!("quiche does not accept congestion control algorithm '{name}': {e}")
            })?,
        }
        Ok(resolved)
    }
}

/// A checked selection.
#[derive(Clone, Debug, PartialEq)]
// Built once per connection and copied into quiche's configuration, so the
// size of the spec (a fixed array of parameter values) does not matter.
#[allow(clippy::large_enum_variant)]
pub enum ResolvedCc {
    /// One of quiche's own algorithms, by name.
    Quiche(String),
    /// An algorithm of `vegas-cc` with its parameters.
    Ours(ControllerSpec),
}

impl ResolvedCc {
    pub fn name(&self) -> &str {
        match self {
            ResolvedCc::Quiche(name) => name,
            ResolvedCc::Ours(spec) => spec.name(),
        }
    }
}

impl fmt::Display for ResolvedCc {
    /// `cubic`, or `vegas(alpha=1 beta=3 ...)` with every parameter's value.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ResolvedCc::Quiche(name) => f.write_str(name),
            ResolvedCc::Ours(spec) => {
                let params = spec.params().describe();
                if params.is_empty() {
                    f.write_str(spec.name())
                } else {
                    write!(f, "{}({params})", spec.name())
                }
            }
        }
    }
}

/// quiche's other names for its algorithms (`CongestionControlAlgorithm`'s
/// `FromStr`), and the one each stands for here.
const QUICHE_ALIASES: &[(&str, &str)] = &[("bbr", "bbr2"), ("bbr2_gcongestion", "bbr2")];

/// An algorithm name as typed (`CUBIC`, `bbr`, `Vegas-Sat`) as the name it
/// selects: lower case, quiche's aliases resolved.
pub fn canonical_name(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    QUICHE_ALIASES
        .iter()
        .find(|(alias, _)| *alias == lower)
        .map_or(lower, |(_, name)| (*name).to_string())
}

/// Whether `--cc-param help` was asked for.
pub fn wants_param_help(params: &[String]) -> bool {
    params.iter().any(|p| p.trim().eq_ignore_ascii_case("help"))
}

/// `--cc-param help` for `--cc-algorithm name`: each parameter with its
/// type, default, accepted values and description, read from the
/// algorithm's own parameter table.
pub fn param_help_text(name: &str) -> anyhow::Result<String> {
    let name = canonical_name(name);
    if registry::QUICHE_ALGORITHMS.iter().any(|(n, _)| *n == name) {
        return Ok(format!(
            "{name} is quiche's own algorithm: it takes no --cc-param.\n"
        ));
    }
    let info = registry::find(&name).ok_or_else(|| {
        anyhow!(
            "unknown congestion control algorithm '{name}'; valid algorithms: {}",
            registry::all_names().join(", ")
        )
    })?;
    let mut text = format!(
        "Parameters of {name} (--cc-param KEY=VALUE, repeatable): {}\n",
        info.description
    );
    let width = info.params.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in info.params {
        let kind = match p.kind {
            vegas_cc::params::ParamKind::Number { .. } => "number",
            vegas_cc::params::ParamKind::Integer { .. } => "integer",
            vegas_cc::params::ParamKind::Choice(_) => "choice",
        };
        text.push_str(&format!(
            "  {:<width$}  {kind:<7}  default {:<8}  {}; {}\n",
            p.name,
            p.default_text(),
            p.accepted(),
            p.description
        ));
    }
    if info.params.is_empty() {
        text.push_str("  (none)\n");
    }
    Ok(text)
}

/// The text `--list-cc-algorithms` or `--cc-param help` asks for, when
/// either was given (the program then prints it and exits instead of
/// running): one answer for every app of ours.
pub fn cc_question(
    list: bool,
    algorithm: &str,
    params: &[String],
) -> Option<anyhow::Result<String>> {
    if list {
        return Some(Ok(listing_text()));
    }
    wants_param_help(params).then(|| param_help_text(algorithm))
}

/// [`cc_question`] answered on stdout, or its error on stderr under
/// `program`'s name; the exit status, or `None` when nothing was asked.
pub fn answer_cc_question(
    program: &str,
    list: bool,
    algorithm: &str,
    params: &[String],
) -> Option<std::process::ExitCode> {
    Some(match cc_question(list, algorithm, params)? {
        Ok(text) => {
            print!("{text}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{program}: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    })
}

/// The `--list-cc-algorithms` output: one `name  description` line per
/// selectable algorithm, names padded to one column.
pub fn listing_text() -> String {
    let listing = registry::listing();
    let width = listing.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    listing
        .iter()
        .map(|(name, description)| format!("{name:<width$}  {description}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_on_the_command_line_is_answered_instead_of_running() {
        let help = vec!["alpha=2".to_string(), "help".to_string()];
        let none: Vec<String> = Vec::new();
        // Nothing asked: the program runs.
        assert!(cc_question(false, "vegas", &none).is_none());
        assert!(cc_question(false, "vegas", &["alpha=2".to_string()]).is_none());
        // The listing wins over a parameter question, as both apps did.
        let listed = cc_question(true, "vegas", &help).unwrap().unwrap();
        assert_eq!(listed, listing_text());
        let params = cc_question(false, "Vegas-Sat", &help).unwrap().unwrap();
        assert_eq!(params, param_help_text("vegas-sat").unwrap());
        assert!(params.starts_with("Parameters of vegas-sat"));
        // An unknown algorithm is an error that names the valid ones.
        let unknown = cc_question(false, "tahoe", &help).unwrap().unwrap_err();
        assert!(format!("{unknown:#}").contains("valid algorithms"));
    }

    #[test]
    fn quiche_algorithms_apply() {
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        for name in ["reno", "cubic", "bbr2"] {
            let r = CcSelection::new(name).apply(&mut config).unwrap();
            assert_eq!(r, ResolvedCc::Quiche(name.to_string()));
            assert_eq!(r.to_string(), name);
        }
    }

    #[test]
    fn our_algorithms_apply() {
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        for info in registry::ALGORITHMS {
            let r = CcSelection::new(info.name).apply(&mut config).unwrap();
            assert_eq!(r.name(), info.name);
            assert!(r.to_string().starts_with(info.name));
        }
    }

    #[test]
    fn unknown_algorithm_lists_valid_names() {
        let e = CcSelection::new("tahoe").resolve().unwrap_err().to_string();
        for name in registry::all_names() {
            assert!(e.contains(name), "{e}");
        }
    }

    #[test]
    fn params_for_quiche_algorithm_are_refused() {
        let e = CcSelection::with_params("cubic", &["beta=0.7"])
            .resolve()
            .unwrap_err()
            .to_string();
        assert!(e.contains("cubic"), "{e}");
    }

    #[test]
    fn names_are_case_insensitive_with_quiche_aliases() {
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        for (typed, selected) in [
            ("CUBIC", "cubic"),
            ("Reno", "reno"),
            ("bbr", "bbr2"),
            ("BBR", "bbr2"),
            ("bbr2_gcongestion", "bbr2"),
            ("Vegas-Sat", "vegas-sat"),
            ("VENO", "veno"),
        ] {
            let r = CcSelection::new(typed).apply(&mut config).unwrap();
            assert_eq!(r.name(), selected, "{typed}");
        }
        assert!(CcSelection::new("bbr3").resolve().is_err());
    }

    #[test]
    fn param_help_lists_every_parameter_from_the_table() {
        for info in registry::ALGORITHMS {
            let text = param_help_text(&info.name.to_uppercase()).unwrap();
            assert_eq!(text.lines().count(), 1 + info.params.len().max(1), "{text}");
            for p in info.params {
                let line = text
                    .lines()
                    .find(|l| l.split_whitespace().next() == Some(p.name))
                    .unwrap_or_else(|| panic!("{}: no line for {}: {text}", info.name, p.name));
                assert!(line.contains(&p.default_text()), "{line}");
                assert!(line.contains(&p.accepted()), "{line}");
                assert!(line.contains(p.description), "{line}");
            }
        }
        assert!(param_help_text("bbr")
            .unwrap()
            .contains("takes no --cc-param"));
        assert!(param_help_text("tahoe").is_err());
        assert!(wants_param_help(&["alpha=1".into(), "HELP".into()]));
        assert!(!wants_param_help(&["alpha=1".into()]));
    }

    #[test]
    fn listing_has_one_line_per_algorithm() {
        let text = listing_text();
        assert_eq!(text.lines().count(), registry::listing().len());
        for (name, _) in registry::listing() {
            assert!(text.lines().any(|l| l.starts_with(name)), "{text}");
        }
    }
}
