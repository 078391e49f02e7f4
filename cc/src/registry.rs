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
