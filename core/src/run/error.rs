//! The error a tune reports to its caller: each stage's own error, composed.

use crate::error::BackendError;

/// Errors a tuning job reports.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec is invalid.
    #[error(transparent)]
    Spec(#[from] crate::spec::error::SpecError),
    /// The search space is invalid. (Its text is in this error's; it is not also the error's
    /// `source()`, which a chain printer such as anyhow's `{:#}` would print a second time.)
    #[error("search space: {0}")]
    Space(crate::space::error::SpaceError),
    /// The database could not be read or written.
    #[error(transparent)]
    Db(#[from] crate::store::db::DbError),
    /// Every config was pruned or failed.
    #[error("no valid config left: {0}")]
    NoValidConfig(String),
    /// The reference output could not be produced.
    #[error("could not compute the reference output: {0}")]
    Reference(String),
    /// A backend error outside any single config (allocating buffers, device lost for good).
    /// A problem too large for the device says so in its own words (it names the buffers), as
    /// does a worker that could not start (it names the program and what to do).
    /// (Not the error's `source()` either: its text is in this one's.)
    #[error("{}", match .0 { BackendError::ProblemTooLarge(m) | BackendError::WorkerStart(m) => m.clone(), e => format!("backend: {e}") })]
    Backend(BackendError),
    /// An expression in the job failed to evaluate.
    #[error("{0}")]
    Eval(String),
    /// The tune was stopped ([`crate::TuneOptions::cancel`]): what was measured is in the
    /// database, and running it again resumes.
    #[error("interrupted: {kept} config(s) measured by this run were kept{}; run the same tune again to resume", if *.saved { " in the database" } else { " (no database: they are lost)" })]
    Interrupted {
        /// Configs this run measured (all written to the database, when there is one).
        kept: usize,
        /// Whether they were written to a database.
        saved: bool,
    },
    /// The devices given cannot be tuned together (different models, or a backend whose
    /// kernels cannot move between devices).
    #[error("{0}")]
    Devices(String),
    /// A runtime handle was asked for a kernel with the wrong number of problem sizes.
    #[error("kernel `{kernel}` takes {expected} problem size(s) ({names}), {given} were given")]
    Sizes {
        /// The kernel.
        kernel: String,
        /// How many sizes its template names.
        expected: usize,
        /// Their names.
        names: String,
        /// How many were given.
        given: usize,
    },
}

impl From<crate::space::error::SpaceError> for Error {
    fn from(e: crate::space::error::SpaceError) -> Error {
        Error::Space(e)
    }
}

impl From<BackendError> for Error {
    fn from(e: BackendError) -> Error {
        Error::Backend(e)
    }
}

impl From<crate::plan::error::PlanError> for Error {
    fn from(e: crate::plan::error::PlanError) -> Error {
        match e {
            crate::plan::error::PlanError::Spec(s) => Error::Spec(s),
            crate::plan::error::PlanError::NoValidConfig(m) => Error::NoValidConfig(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error and its sources as a chain printer shows them (anyhow's `{:#}`: each
    /// `source()` after a colon).
    fn chain(e: &dyn std::error::Error) -> String {
        let mut out = e.to_string();
        let mut next = e.source();
        while let Some(s) = next {
            out += &format!(": {s}");
            next = s.source();
        }
        out
    }

    /// An error whose text holds its cause's does not also give the cause as its `source()`:
    /// a program that prints the chain (anyhow's `{:#}`) said every word of it twice ("device
    /// lost: every device was lost: …: device lost: every device was lost: …").
    #[test]
    fn a_chain_printer_says_each_cause_once() {
        let lost = "every device was lost: device 0: it could not be recovered";
        let restriction = crate::space::SearchSpace::new(vec![crate::spec::job::Param::new("a", [1, 2])], &["a +"], Vec::new()).unwrap_err();
        let io = crate::store::db::DbError::Io { path: "/d/db.sqlite".into(), action: "writing", error: std::io::Error::other("disk full") };
        let cases: Vec<(Box<dyn std::error::Error>, &str)> = vec![
            (Box::new(Error::from(BackendError::DeviceLost(lost.into()))), lost),
            (Box::new(Error::from(restriction.clone())), "restriction 0 is invalid"),
            (Box::new(restriction), "`a +`"),
            (Box::new(Error::from(io)), "disk full"),
        ];
        for (e, said) in cases {
            let text = chain(e.as_ref());
            assert_eq!(text.matches(said).count(), 1, "{text}");
        }
    }
}
