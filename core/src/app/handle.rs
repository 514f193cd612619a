//! The runtime handle: what a program that uses tuned kernels holds.
//!
//! [`Autotuned::get`] maps a problem's sizes to a compiled winner. The first call for a key
//! resolves it by the handle's [`Policy`] — a valid winner in the database, else one embedded
//! in the program ([`EmbeddedWinner`], made by `kerntune db export --rust`), else tuning now,
//! or the default config (tuned in the background, or never) — and compiles it with the
//! handle's compiler: the tuning backend's own ([`Autotuned::new`]), or one that loads the
//! kernel into the application's context ([`Autotuned::with_compiler`], what the backend
//! crates' launch APIs use). Concurrent first calls for one key resolve it once.
//!
//! Later calls are lock-free: the table of keys is an [`ArcSwap`] that readers load without
//! locking, keys are the bucketed sizes as integers (no string is hashed), and nothing is
//! allocated. A key's [`Slot`] can be swapped to a better kernel later (the background policy)
//! without disturbing launches in flight.
//!
//! `KERNTUNE_TUNE=0` never tunes (the stored or embedded winner, else the default);
//! `KERNTUNE_DISABLE=1` always runs the default config.

use crate::backend::Backend;
use crate::plan::prepare::{Launch, Prepared};
use crate::run::error::Error;
use crate::run::report::TuneReport;
use crate::run::{TuneOptions, Tuner};
use crate::space::config::Config;
use crate::spec::job::TuneJob;
use crate::spec::key::Bucket;
use crate::spec::value::Value;
use arc_swap::ArcSwap;
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How a handle gets a kernel for a problem key it has not seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
///
/// ```
/// use kerntune_core::fake::app::FakeTunable;
/// use kerntune_core::Policy;
///
/// let (tuner, job) = kerntune_core::fake::example();
/// // Never tunes: no database and nothing embedded, so the default config runs.
/// let app = FakeTunable::new(tuner, job, Default::default(), Policy::Stored, &[]);
/// assert_eq!(app.kernel(&[1024])?.current().0.key(), "bx=256,vec=1");
/// # Ok::<(), kerntune_core::Error>(())
/// ```
pub enum Policy {
    /// Tune now (blocking) unless a valid winner is stored or embedded. Where the tuner cannot
    /// measure on this machine (its kernel worker process does not start, or the problem does
    /// not fit on the device beside what tuning keeps), the default config runs instead, with a
    /// warning, and the next process tries again; a tune that fails for the kernel's sake (no
    /// config compiles, or none is valid) is the error.
    #[default]
    Tune,
    /// Use the stored or embedded winner; the default config if there is none. Never tunes.
    Stored,
    /// Use the stored or embedded winner, or start with the default config and tune in the
    /// background, swapping the winner in when it is ready.
    Background,
    /// Always the default config.
    Default,
}

impl Policy {
    /// `requested`, unless the environment says otherwise: `KERNTUNE_DISABLE=1` gives
    /// [`Policy::Default`], `KERNTUNE_TUNE=0` turns a tuning policy into [`Policy::Stored`].
    ///
    /// ```
    /// use kerntune_core::Policy;
    /// // With neither variable set, the request stands.
    /// if std::env::var_os("KERNTUNE_TUNE").is_none() && std::env::var_os("KERNTUNE_DISABLE").is_none() {
    ///     assert_eq!(Policy::from_env(Policy::Background), Policy::Background);
    /// }
    /// ```
    pub fn from_env(requested: Policy) -> Policy {
        Policy::from_vars(requested, std::env::var("KERNTUNE_DISABLE").ok().as_deref(), std::env::var("KERNTUNE_TUNE").ok().as_deref())
    }

    /// [`Policy::from_env`] with the two variables' values given.
    ///
    /// ```
    /// use kerntune_core::Policy;
    /// assert_eq!(Policy::from_vars(Policy::Tune, None, Some("0")), Policy::Stored);
    /// assert_eq!(Policy::from_vars(Policy::Background, Some("1"), None), Policy::Default);
    /// assert_eq!(Policy::from_vars(Policy::Stored, None, None), Policy::Stored);
    /// ```
    pub fn from_vars(requested: Policy, disable: Option<&str>, tune: Option<&str>) -> Policy {
        let is = |v: Option<&str>, on: &[&str]| v.is_some_and(|v| on.iter().any(|x| v.trim().eq_ignore_ascii_case(x)));
        if is(disable, &["1", "true", "yes", "on"]) {
            Policy::Default
        } else if is(tune, &["0", "false", "no", "off"]) && matches!(requested, Policy::Tune | Policy::Background) {
            Policy::Stored
        } else {
            requested
        }
    }
}

/// Where a key's kernel came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
///
/// ```
/// use kerntune_core::{Autotuned, Origin};
/// let (tuner, job) = kerntune_core::fake::example();
/// let h = Autotuned::new(tuner, job, Default::default());
/// assert_eq!(h.get(&[1024])?.origin, Origin::Tuned);
/// # Ok::<(), kerntune_core::Error>(())
/// ```
pub enum Origin {
    /// Tuned by this process.
    Tuned,
    /// A valid winner in the database.
    Database,
    /// A winner embedded in the program.
    Embedded,
    /// The default config (nothing stored, or the policy said so).
    Default,
}

/// A winner compiled into a program (`kerntune db export --rust` writes a slice of these, for
/// `include!`): it is used when its kernel (name and source hash), target and problem key
/// match; the toolchain it was tuned with is informational.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
///
/// ```
/// use kerntune_core::{Autotuned, Database, EmbeddedWinner, Origin, Policy, TuneOptions};
///
/// // What `kerntune db export --rust` writes, from a database where the kernel was tuned.
/// let (tuner, job) = kerntune_core::fake::example();
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::at(dir.path().join("db.json"));
/// Autotuned::new(tuner.clone(), job.clone(), TuneOptions { db: Some(db.clone()), ..Default::default() }).get(&[1024])?;
/// let source = kerntune_core::store::export::rust_source(&db.load()?, Some("k"), "kerntune_core");
/// assert!(source.contains("config: \"bx=64,vec=4\""));
///
/// // A program compiles that list in (`static WINNERS: &[EmbeddedWinner] = include!(...)`):
/// let e = db.load()?.entries.into_values().next().unwrap();
/// let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
/// let winners: &'static [EmbeddedWinner] = Box::leak(Box::new([EmbeddedWinner {
///     kernel: leak(e.id.kernel), kernel_hash: leak(e.id.kernel_hash), target: leak(e.id.target),
///     toolchain: leak(e.id.toolchain), problem: leak(e.id.problem), config: "bx=64,vec=4",
/// }]));
/// // ... and needs neither tuning nor a database file.
/// let h = Autotuned::new(tuner, job, TuneOptions::default()).embedded(winners).policy(Policy::Stored);
/// let t = h.get(&[1024])?;
/// assert_eq!((t.origin, t.config.key().as_str()), (Origin::Embedded, "bx=64,vec=4"));
/// # Ok::<(), kerntune_core::Error>(())
/// ```
pub struct EmbeddedWinner {
    /// Kernel name.
    pub kernel: &'static str,
    /// Hash of the source and options ([`crate::KernelSource::identity_hash`]).
    pub kernel_hash: &'static str,
    /// Target fingerprint.
    pub target: &'static str,
    /// Compiler and driver versions it was tuned with.
    pub toolchain: &'static str,
    /// Problem key text.
    pub problem: &'static str,
    /// The winning config's key (`name=value,...`).
    pub config: &'static str,
}

/// A compiled kernel ready to launch, for one problem key.
///
/// ```
/// let (tuner, job) = kerntune_core::fake::example();
/// let h = kerntune_core::Autotuned::new(tuner, job, Default::default());
/// let t = h.get(&[1024])?;
/// assert_eq!(t.config.key(), "bx=64,vec=4");
/// assert_eq!((t.launch.grid[0], t.launch.block[0]), (4, 64)); // 1024 / (64 * 4) blocks
/// assert!(t.report.is_some());
/// # Ok::<(), kerntune_core::Error>(())
/// ```
pub struct Tuned<K> {
    /// The config.
    pub config: Config,
    /// Its launch geometry for the sizes it was resolved with.
    pub launch: Launch,
    /// The compiled kernel.
    pub kernel: K,
    /// Where the config came from.
    pub origin: Origin,
    /// The tune's report (tuned, or a database hit); `None` for embedded and default configs.
    pub report: Option<TuneReport>,
}

/// One key's current kernel, which a background tune may replace.
///
/// ```
/// use kerntune_core::{Autotuned, Policy};
/// let (tuner, job) = kerntune_core::fake::example();
/// let h = Autotuned::new(tuner, job, Default::default()).policy(Policy::Background);
/// let slot = h.slot(&[1024])?; // the default config now, the winner once the tune is done
/// h.settle();
/// assert_eq!(slot.load().config.key(), "bx=64,vec=4");
/// # Ok::<(), kerntune_core::Error>(())
/// ```
pub struct Slot<K> {
    current: ArcSwap<Tuned<K>>,
}

impl<K> Slot<K> {
    /// The current kernel (a lock-free load).
    ///
    /// ```
    /// # let (tuner, job) = kerntune_core::fake::example();
    /// # let h = kerntune_core::Autotuned::new(tuner, job, Default::default());
    /// let slot = h.slot(&[1024])?;
    /// let grid = slot.load().launch.grid; // what a launch reads, without locking
    /// # Ok::<(), kerntune_core::Error>(())
    /// ```
    pub fn load(&self) -> arc_swap::Guard<Arc<Tuned<K>>> {
        self.current.load()
    }

    /// The current kernel, as an owned handle.
    ///
    /// ```
    /// # let (tuner, job) = kerntune_core::fake::example();
    /// # let h = kerntune_core::Autotuned::new(tuner, job, Default::default());
    /// let kernel = h.slot(&[1024])?.get(); // kept alive even if a background tune swaps it out
    /// # Ok::<(), kerntune_core::Error>(())
    /// ```
    pub fn get(&self) -> Arc<Tuned<K>> {
        self.current.load_full()
    }
}

/// Compiles a resolved config into the handle's kernel type: the job, its prepared form, the
/// config and its launch.
///
/// ```
/// use kerntune_core::Autotuned;
/// let (tuner, job) = kerntune_core::fake::example();
/// // Any kernel type: here, the block size the application would launch with.
/// let h = Autotuned::with_compiler(tuner, job, Default::default(), |_job, _prep, cfg, launch| Ok((cfg.key(), launch.block[0])));
/// assert_eq!(h.get(&[1024])?.kernel, ("bx=64,vec=4".to_string(), 64));
/// # Ok::<(), kerntune_core::Error>(())
/// ```
pub type Compiler<K> = dyn Fn(&TuneJob, &Prepared, &Config, &Launch) -> Result<K, Error> + Send + Sync;

type Table<K> = FxHashMap<Box<[i64]>, Arc<Slot<K>>>;
type Pending<K> = Arc<Mutex<Option<Arc<Slot<K>>>>>;

struct Inner<B: Backend, K> {
    tuner: Arc<Tuner<B>>,
    template: TuneJob,
    opts: TuneOptions,
    policy: Policy,
    embedded: &'static [EmbeddedWinner],
    compile: Box<Compiler<K>>,
    bucket: Bucket,
    table: ArcSwap<Table<K>>,
    inflight: Mutex<FxHashMap<Box<[i64]>, Pending<K>>>,
    /// Background tunes, one at a time (they share the device with the program).
    background: Mutex<Vec<std::thread::JoinHandle<()>>>,
    tune_lock: Mutex<()>,
}

/// A tunable kernel with an in-memory table of compiled winners per problem key.
///
/// ```
/// use kerntune_core::Autotuned;
/// let (tuner, job) = kerntune_core::fake::example();
/// let h = Autotuned::new(tuner, job, Default::default());
/// let k = h.get(&[1024])?;           // tunes the first time
/// let again = h.get(&[1024])?;       // a lock-free lookup
/// assert!(std::sync::Arc::ptr_eq(&k, &again));
/// # Ok::<(), kerntune_core::Error>(())
/// ```
pub struct Autotuned<B: Backend, K = <B as Backend>::Kernel> {
    inner: Arc<Inner<B, K>>,
}

const MAX_KEY: usize = 8;

impl<B: Backend + 'static> Autotuned<B, B::Kernel> {
    /// A handle over `template`, whose `sizes` name the problem variables (their values are
    /// replaced per call), compiling with the tuner's backend. The policy is
    /// [`Policy::from_env`] of [`Policy::Tune`].
    ///
    /// ```
    /// let (tuner, job) = kerntune_core::fake::example();
    /// let h = kerntune_core::Autotuned::new(tuner, job, kerntune_core::TuneOptions::default());
    /// ```
    pub fn new(tuner: Arc<Tuner<B>>, template: TuneJob, opts: TuneOptions) -> Self {
        let t = tuner.clone();
        Autotuned::with_compiler(tuner, template, opts, move |job, prep, cfg, _| Ok(t.compile_config(job, prep, cfg)?.0.kernel))
    }
}

impl<B: Backend + 'static, K: Send + Sync + 'static> Autotuned<B, K> {
    /// A handle whose kernels `compile` makes (for instance, loaded into an application's own
    /// device context). The policy is [`Policy::from_env`] of [`Policy::Tune`].
    ///
    /// ```
    /// let (tuner, job) = kerntune_core::fake::example();
    /// let h = kerntune_core::Autotuned::with_compiler(tuner, job, Default::default(), |_, _, cfg, _| Ok(cfg.key()));
    /// assert_eq!(h.get(&[1024])?.kernel, "bx=64,vec=4");
    /// # Ok::<(), kerntune_core::Error>(())
    /// ```
    pub fn with_compiler(
        tuner: Arc<Tuner<B>>,
        template: TuneJob,
        opts: TuneOptions,
        compile: impl Fn(&TuneJob, &Prepared, &Config, &Launch) -> Result<K, Error> + Send + Sync + 'static,
    ) -> Self {
        Autotuned {
            inner: Arc::new(Inner {
                bucket: template.bucket,
                tuner,
                template,
                opts,
                policy: Policy::from_env(Policy::Tune),
                embedded: &[],
                compile: Box::new(compile),
                table: ArcSwap::from_pointee(FxHashMap::default()),
                inflight: Mutex::new(FxHashMap::default()),
                background: Mutex::new(Vec::new()),
                tune_lock: Mutex::new(()),
            }),
        }
    }

    /// The same handle with another policy (still subject to [`Policy::from_env`]). Call before
    /// the first [`Autotuned::get`].
    ///
    /// ```
    /// # let (tuner, job) = kerntune_core::fake::example();
    /// let h = kerntune_core::Autotuned::new(tuner, job, Default::default()).policy(kerntune_core::Policy::Default);
    /// assert_eq!(h.get(&[1024])?.config.key(), "bx=256,vec=1");
    /// # Ok::<(), kerntune_core::Error>(())
    /// ```
    pub fn policy(mut self, policy: Policy) -> Self {
        Arc::get_mut(&mut self.inner).expect("set the policy before sharing the handle").policy = Policy::from_env(policy);
        self
    }

    /// The same handle with winners embedded in the program (see [`EmbeddedWinner`]).
    ///
    /// ```
    /// # let (tuner, job) = kerntune_core::fake::example();
    /// static WINNERS: &[kerntune_core::EmbeddedWinner] = &[]; // include!("winners.rs") in a program
    /// let h = kerntune_core::Autotuned::new(tuner, job, Default::default()).embedded(WINNERS);
    /// ```
    pub fn embedded(mut self, winners: &'static [EmbeddedWinner]) -> Self {
        Arc::get_mut(&mut self.inner).expect("set embedded winners before sharing the handle").embedded = winners;
        self
    }

    /// The policy in force.
    ///
    /// ```
    /// # let (tuner, job) = kerntune_core::fake::example();
    /// let h = kerntune_core::Autotuned::new(tuner, job, Default::default()).policy(kerntune_core::Policy::Stored);
    /// assert_ne!(h.current_policy(), kerntune_core::Policy::Tune);
    /// ```
    pub fn current_policy(&self) -> Policy {
        self.inner.policy
    }

    /// Whether tuning is off (the default config, always).
    ///
    /// ```
    /// # let (tuner, job) = kerntune_core::fake::example();
    /// let h = kerntune_core::Autotuned::new(tuner, job, Default::default()).policy(kerntune_core::Policy::Default);
    /// assert!(h.disabled());
    /// ```
    pub fn disabled(&self) -> bool {
        self.inner.policy == Policy::Default
    }

    /// The tuner.
    ///
    /// ```
    /// # let (tuner, job) = kerntune_core::fake::example();
    /// let h = kerntune_core::Autotuned::new(tuner, job, Default::default());
    /// println!("tuning on {}", kerntune_core::Backend::target(h.tuner().backend()).name);
    /// ```
    pub fn tuner(&self) -> &Arc<Tuner<B>> {
        &self.inner.tuner
    }

    /// The job template.
    ///
    /// ```
    /// # let (tuner, job) = kerntune_core::fake::example();
    /// let h = kerntune_core::Autotuned::new(tuner, job, Default::default());
    /// assert_eq!(h.template().sizes[0].0, "n");
    /// ```
    pub fn template(&self) -> &TuneJob {
        &self.inner.template
    }

    /// The compiled kernel for these sizes (in the template's size order).
    ///
    /// ```
    /// # let (tuner, job) = kerntune_core::fake::example();
    /// let h = kerntune_core::Autotuned::new(tuner, job, Default::default());
    /// let k = h.get(&[1024])?;
    /// assert!(h.get(&[1024, 8]).is_err()); // one size per problem variable
    /// # Ok::<(), kerntune_core::Error>(())
    /// ```
    pub fn get(&self, sizes: &[i64]) -> Result<Arc<Tuned<K>>, Error> {
        Ok(self.slot(sizes)?.get())
    }

    /// The slot of these sizes: hold it to launch its current kernel, which a background tune
    /// replaces when it finds a better one. An already-seen key takes neither a lock nor an
    /// allocation.
    ///
    /// ```
    /// # let (tuner, job) = kerntune_core::fake::example();
    /// let h = kerntune_core::Autotuned::new(tuner, job, Default::default());
    /// let slot = h.slot(&[1024])?;
    /// for _ in 0..3 {
    ///     let kernel = slot.load(); // launch kernel.kernel with kernel.launch
    /// }
    /// # Ok::<(), kerntune_core::Error>(())
    /// ```
    pub fn slot(&self, sizes: &[i64]) -> Result<Arc<Slot<K>>, Error> {
        if sizes.len() != self.inner.template.sizes.len() {
            return Err(self.inner.wrong_sizes(sizes.len()));
        }
        let mut buf = [0i64; MAX_KEY];
        let boxed;
        let key: &[i64] = if sizes.len() <= MAX_KEY {
            for (d, s) in buf.iter_mut().zip(sizes) {
                *d = self.inner.bucket.apply_i64(*s);
            }
            &buf[..sizes.len()]
        } else {
            boxed = sizes.iter().map(|s| self.inner.bucket.apply_i64(*s)).collect::<Vec<_>>();
            &boxed
        };
        if let Some(s) = self.inner.table.load().get(key) {
            return Ok(s.clone());
        }
        Inner::slow_path(&self.inner, key, sizes)
    }

    /// Waits for every background tune started so far.
    ///
    /// ```
    /// # let (tuner, job) = kerntune_core::fake::example();
    /// let h = kerntune_core::Autotuned::new(tuner, job, Default::default()).policy(kerntune_core::Policy::Background);
    /// h.get(&[1024])?;
    /// h.settle(); // the background tune has finished
    /// assert_eq!(h.get(&[1024])?.origin, kerntune_core::Origin::Tuned);
    /// # Ok::<(), kerntune_core::Error>(())
    /// ```
    pub fn settle(&self) {
        let handles = std::mem::take(&mut *self.inner.background.lock().unwrap_or_else(|p| p.into_inner()));
        for h in handles {
            let _ = h.join();
        }
    }
}

impl<B: Backend + 'static, K: Send + Sync + 'static> Inner<B, K> {
    #[cold]
    fn wrong_sizes(&self, given: usize) -> Error {
        let t = &self.template;
        Error::Sizes {
            kernel: t.source.name.clone(),
            expected: t.sizes.len(),
            names: t.sizes.iter().map(|s| s.0.as_str()).collect::<Vec<_>>().join(", "),
            given,
        }
    }

    #[cold]
    fn slow_path(this: &Arc<Self>, key: &[i64], sizes: &[i64]) -> Result<Arc<Slot<K>>, Error> {
        let pending = this.inflight.lock().unwrap_or_else(|p| p.into_inner()).entry(key.into()).or_default().clone();
        let mut guard = pending.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = guard.as_ref() {
            return Ok(s.clone());
        }
        let mut job = this.template.clone();
        for (s, v) in job.sizes.iter_mut().zip(sizes) {
            s.1 = Value::Int(*v);
        }
        let (tuned, tune_later) = this.resolve(&job)?;
        let slot = Arc::new(Slot { current: ArcSwap::from_pointee(tuned) });
        *guard = Some(slot.clone());
        this.table.rcu(|t| {
            let mut t = (**t).clone();
            t.insert(key.into(), slot.clone());
            t
        });
        if tune_later {
            let (me, s) = (this.clone(), slot.clone());
            let h = std::thread::Builder::new().name("kerntune-background".into()).spawn(move || me.tune_in_background(&job, &s));
            match h {
                Ok(h) => this.background.lock().unwrap_or_else(|p| p.into_inner()).push(h),
                Err(e) => tracing::warn!(kernel = %this.template.source.name, error = %e, "could not start the background tune; keeping the default config"),
            }
        }
        Ok(slot)
    }

    /// The kernel a new key starts with, and whether to tune it in the background.
    fn resolve(&self, job: &TuneJob) -> Result<(Tuned<K>, bool), Error> {
        let prep = Prepared::new(job)?;
        if self.policy == Policy::Default {
            return Ok((self.build(job, &prep, prep.default.clone(), Origin::Default, None)?, false));
        }
        if let Some(r) = self.stored(job)? {
            let cfg = r.winner.clone();
            // The winner of a tune that was ended early (SIGUSR1 or SIGUSR2, a scheduler's
            // warning before a job's time limit) is the best of what it measured: where the
            // policy tunes, the tune goes on from those measurements, as `kerntune tune` does;
            // in the background, this winner runs meanwhile.
            match (r.ended_early, self.policy) {
                (true, Policy::Tune) => match self.tune(job) {
                    Ok(report) => return Ok((self.tuned(job, &prep, report)?, false)),
                    Err(e) => {
                        tracing::warn!(kernel = %job.source.name, error = %e, "could not go on with the tune that was ended early; using its winner ({cfg})");
                    }
                },
                (true, Policy::Background) => {
                    tracing::info!(kernel = %job.source.name, "the stored winner's tune was ended early; it runs while the tune goes on in the background");
                    return Ok((self.build(job, &prep, cfg, Origin::Database, Some(r))?, true));
                }
                _ => {}
            }
            return Ok((self.build(job, &prep, cfg, Origin::Database, Some(r))?, false));
        }
        if let Some(cfg) = self.embedded_winner(job, &prep) {
            return Ok((self.build(job, &prep, cfg, Origin::Embedded, None)?, false));
        }
        match self.policy {
            Policy::Tune => match self.tune(job) {
                Ok(report) => Ok((self.tuned(job, &prep, report)?, false)),
                Err(Error::Backend(e)) if e.device_unusable() => {
                    // The tuner could not measure here (its kernel worker did not start, or the
                    // problem did not fit beside what it keeps): nothing about the kernel. The
                    // program runs the default config on its own buffers, as it would untuned;
                    // the next process tunes again.
                    tracing::warn!(kernel = %job.source.name, error = %e, "could not tune this problem here; using the default config ({})", prep.default);
                    Ok((self.build(job, &prep, prep.default.clone(), Origin::Default, None)?, false))
                }
                Err(e) => Err(e),
            },
            Policy::Stored | Policy::Default => {
                tracing::info!(kernel = %job.source.name, "no stored or embedded winner for this problem; using the default config ({})", prep.default);
                Ok((self.build(job, &prep, prep.default.clone(), Origin::Default, None)?, false))
            }
            Policy::Background => {
                tracing::info!(kernel = %job.source.name, "no stored winner for this problem yet; the default config runs while tuning goes on in the background");
                Ok((self.build(job, &prep, prep.default.clone(), Origin::Default, None)?, true))
            }
        }
    }

    /// The kernel of a tune this thread just ran (`Policy::Tune`).
    fn tuned(&self, job: &TuneJob, prep: &Prepared, report: TuneReport) -> Result<Tuned<K>, Error> {
        if let Some(why) = &report.winner_withheld {
            // Its outputs agree with a reference most configs disagree with: not stored, so
            // every process tunes again until the spec's verification is one to trust.
            tracing::warn!(kernel = %job.source.name, "the tune's winner ({}) was not stored: {why}; this process runs it, and the next one tunes again", report.winner);
        }
        let cfg = report.winner.clone();
        self.build(job, prep, cfg, Origin::Tuned, Some(report))
    }

    fn build(&self, job: &TuneJob, prep: &Prepared, config: Config, origin: Origin, report: Option<TuneReport>) -> Result<Tuned<K>, Error> {
        let launch = prep.launch(&config).map_err(Error::Eval)?;
        let kernel = (self.compile)(job, prep, &config, &launch)?;
        Ok(Tuned { config, launch, kernel, origin, report })
    }

    /// A valid winner in the database, as a database hit's report.
    fn stored(&self, job: &TuneJob) -> Result<Option<TuneReport>, Error> {
        if self.opts.db.is_none() {
            return Ok(None);
        }
        let ctx = self.tuner.prepare(job)?;
        let entry = crate::run::lookup::stored_entry(self.opts.db.as_ref(), &ctx.id)?;
        Ok(crate::run::lookup::stored_winner(self.tuner.backend(), &ctx, entry.as_ref(), &self.opts, Instant::now()))
    }

    /// An embedded winner for this job on this target, if one matches and parses.
    fn embedded_winner(&self, job: &TuneJob, prep: &Prepared) -> Option<Config> {
        if self.embedded.is_empty() {
            return None;
        }
        let id = self.tuner.entry_id(job, prep);
        let w = self.embedded.iter().find(|w| w.kernel == id.kernel && w.kernel_hash == id.kernel_hash && w.target == id.target && w.problem == id.problem);
        let Some(w) = w else {
            tracing::info!(kernel = %id.kernel, target = %id.target, problem = %id.problem, "no embedded winner for this kernel, target and problem");
            return None;
        };
        if w.toolchain != id.toolchain {
            tracing::debug!(embedded = w.toolchain, here = %id.toolchain, "the embedded winner was tuned with another toolchain");
        }
        match Config::parse(w.config).filter(|c| prep.space.coords_of(c).is_some()) {
            Some(mut c) => {
                // Parsed values follow the text; the space's own values keep their types.
                if let Some(coords) = prep.space.coords_of(&c) {
                    let knobs = c.knobs.clone();
                    c = prep.space.config_at(&coords);
                    c.knobs = knobs;
                }
                Some(c)
            }
            None => {
                tracing::warn!(kernel = %id.kernel, config = w.config, "the embedded winner is not a config of this space; ignoring it");
                None
            }
        }
    }

    fn tune(&self, job: &TuneJob) -> Result<TuneReport, Error> {
        let _one = self.tune_lock.lock().unwrap_or_else(|p| p.into_inner());
        self.tuner.tune(job, &self.opts)
    }

    fn tune_in_background(&self, job: &TuneJob, slot: &Slot<K>) {
        let kernel = job.source.name.clone();
        let r = self.tune(job).and_then(|report| {
            let prep = Prepared::new(job)?;
            let cfg = report.winner.clone();
            self.build(job, &prep, cfg, Origin::Tuned, Some(report))
        });
        match r {
            Ok(t) => {
                tracing::info!(kernel = %kernel, config = %t.config, "background tune finished; the winner replaces the default config");
                slot.current.store(Arc::new(t));
            }
            Err(e) => tracing::warn!(kernel = %kernel, error = %e, "background tune failed; the default config stays"),
        }
    }
}
