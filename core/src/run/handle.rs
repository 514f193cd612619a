//! The runtime handle: tune once, cache, launch.
//!
//! [`Autotuned::get`] maps problem sizes to the compiled winner. The first call for a key tunes
//! (or loads the winner from the database, compiling only it); later calls find the compiled
//! winner in memory through a read lock and a hash lookup of the bucketed sizes, with no
//! allocation. Concurrent first calls for one key tune once: the others wait for it.
//! With `KERNTUNE_DISABLE=1` every key gets the default config, untuned.

use crate::backend::Backend;
use crate::plan::prepare::Launch;
use crate::plan::prepare::Prepared;
use crate::run::error::Error;
use crate::run::report::TuneReport;
use crate::run::tuner::{TuneOptions, Tuner};
use crate::space::config::Config;
use crate::spec::job::TuneJob;
use crate::spec::key::Bucket;
use crate::spec::value::Value;
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex, RwLock};

/// A compiled winner ready to launch.
pub struct Tuned<K> {
    /// The winning config.
    pub config: Config,
    /// Its launch geometry for the sizes it was tuned with.
    pub launch: Launch,
    /// The compiled kernel.
    pub kernel: K,
    /// The tune's report (`db_hit` says whether anything was benchmarked); `None` when tuning
    /// is disabled.
    pub report: Option<TuneReport>,
}

type Slot<K> = Arc<Mutex<Option<Arc<Tuned<K>>>>>;
type Cache<K> = RwLock<FxHashMap<Box<[i64]>, Arc<Tuned<K>>>>;
type Inflight<K> = Mutex<FxHashMap<Box<[i64]>, Slot<K>>>;

/// A tunable kernel with an in-memory cache of winners per problem key.
pub struct Autotuned<B: Backend> {
    tuner: Arc<Tuner<B>>,
    template: TuneJob,
    opts: TuneOptions,
    bucket: Bucket,
    disabled: bool,
    cache: Cache<B::Kernel>,
    inflight: Inflight<B::Kernel>,
}

const MAX_KEY: usize = 8;

impl<B: Backend> Autotuned<B> {
    /// A handle over `template`, whose `sizes` name the problem variables (their values are
    /// replaced per call). Reads `KERNTUNE_DISABLE`.
    pub fn new(tuner: Arc<Tuner<B>>, template: TuneJob, opts: TuneOptions) -> Autotuned<B> {
        let disabled = std::env::var("KERNTUNE_DISABLE").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
        Autotuned {
            bucket: template.bucket,
            tuner,
            template,
            opts,
            disabled,
            cache: RwLock::new(FxHashMap::default()),
            inflight: Mutex::new(FxHashMap::default()),
        }
    }

    /// Whether `KERNTUNE_DISABLE` turned tuning off.
    pub fn disabled(&self) -> bool {
        self.disabled
    }

    /// The compiled winner for these sizes (in the template's size order).
    pub fn get(&self, sizes: &[i64]) -> Result<Arc<Tuned<B::Kernel>>, Error> {
        assert_eq!(
            sizes.len(),
            self.template.sizes.len(),
            "Autotuned::get: expected one value per problem size ({:?})",
            self.template.sizes.iter().map(|s| &s.0).collect::<Vec<_>>()
        );
        let mut buf = [0i64; MAX_KEY];
        let boxed;
        let key: &[i64] = if sizes.len() <= MAX_KEY {
            for (d, s) in buf.iter_mut().zip(sizes) {
                *d = self.bucket.apply_i64(*s);
            }
            &buf[..sizes.len()]
        } else {
            boxed = sizes.iter().map(|s| self.bucket.apply_i64(*s)).collect::<Vec<_>>();
            &boxed
        };
        if let Some(t) = self.cache.read().expect("cache lock").get(key) {
            return Ok(t.clone());
        }
        self.slow_path(key, sizes)
    }

    #[cold]
    fn slow_path(&self, key: &[i64], sizes: &[i64]) -> Result<Arc<Tuned<B::Kernel>>, Error> {
        let slot = self.inflight.lock().expect("inflight lock").entry(key.into()).or_default().clone();
        let mut guard = slot.lock().expect("slot lock");
        if let Some(t) = guard.as_ref() {
            return Ok(t.clone());
        }
        let mut job = self.template.clone();
        for (s, v) in job.sizes.iter_mut().zip(sizes) {
            s.1 = Value::Int(*v);
        }
        let tuned = if self.disabled {
            let prep = Prepared::new(&job)?;
            let (c, launch) = self.tuner.compile_config(&job, &prep, &prep.default)?;
            Tuned { config: prep.default.clone(), launch, kernel: c.kernel, report: None }
        } else {
            let report = self.tuner.tune(&job, &self.opts)?;
            let prep = Prepared::new(&job)?;
            let (c, launch) = self.tuner.compile_config(&job, &prep, &report.winner)?;
            Tuned { config: report.winner.clone(), launch, kernel: c.kernel, report: Some(report) }
        };
        let tuned = Arc::new(tuned);
        *guard = Some(tuned.clone());
        self.cache.write().expect("cache lock").insert(key.into(), tuned.clone());
        Ok(tuned)
    }
}
