//! Timing at the clock a busy GPU runs at.
//!
//! CUDA and HIP contexts keep a datacenter GPU at its compute clock while they exist. Through
//! Vulkan, the driver manages power as for graphics: measured on an H100 (driver 580), the SM
//! clock fell from 1,980 to 345 MHz about four seconds into a tune whose GPU was busy 10–25 % of
//! the time (`clocks_event_reasons` 0x1, "GPU idle"), and every config timed after that ran
//! 5.5× slower than when timed first. A tuner cannot pin clocks without administrator rights, so
//! the guard checks instead: before a config is timed after the GPU sat idle, it times a fixed
//! reference kernel (a chain of FMAs whose time is inversely proportional to the SM clock); when
//! that runs slower than it ran at its fastest, it loads the GPU with the same kernel until the
//! clock is back, and only then lets the timing start. What it did is counted and reported.
//!
//! Software adapters (llvmpipe) have no such clock and are not guarded.

use crate::bench::{Buffers, Timer};
use crate::compile::WgpuKernel;
use kerntune_core::{BackendError, HostBuffer, Launch, TimeRequest};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The reference kernel: each invocation runs `iters` (read from the buffer, so the compiler
/// cannot fold it) steps of two dependent FMAs, and stores only in a case that never happens.
const PROBE: &str = "
@group(0) @binding(0) var<storage, read_write> cfg: array<f32>;
@compute @workgroup_size(128)
fn probe(@builtin(global_invocation_id) g: vec3<u32>) {
    let n = u32(cfg[0]);
    var x = f32(g.x) * 1e-7;
    var y = 1.0 + x;
    for (var i = 0u; i < n; i++) {
        x = fma(x, 0.999, y);
        y = fma(y, 0.998, x);
    }
    if (x == 12345.5) {
        cfg[1 + g.x % 64u] = y;
    }
}
";

/// Workgroups per probe: enough to fill a large GPU (132 SMs × 8 groups of 128).
const GROUPS: u32 = 1056;
/// A probe this long (at the clock seen at calibration) is long enough to time precisely and
/// short enough to cost little.
const PROBE_SECONDS: f64 = 50e-6;
/// The clock is checked at most this often (it falls over seconds of low load, in steps of
/// hundreds of MHz, so a check every few dozen milliseconds sees every step).
const CHECK_EVERY: Duration = Duration::from_millis(25);
/// A probe slower than the fastest by more than this starts a ramp...
const SLOW: f64 = 1.08;
/// ... which ends when a probe is within this of the fastest...
const BACK: f64 = 1.04;
/// ... or after this long (the clock is down for a reason the guard cannot lift: heat, power).
const CAP: Duration = Duration::from_secs(3);
/// The first check loads the GPU at least this long before it takes the probe's time as the
/// top clock's: a driver raises a fallen clock over hundreds of milliseconds of load (0.37 s
/// measured on an H100), and a first check that stopped after ten bursts without improvement
/// (0.15 s) learned an H200's 615 MHz as its top (a memory-bound triad then timed 2.5× slow,
/// every later check passing).
const LEARN: Duration = Duration::from_millis(600);
/// GPU time per burst of probes while ramping.
const BURST_SECONDS: f64 = 0.01;

/// What the guard did, for the report.
#[derive(Debug, Default, Clone)]
pub(crate) struct ClockLog {
    pub checks: u32,
    pub ramps: u32,
    pub ramp_seconds: f64,
    pub longest: f64,
    /// Ramps that hit [`CAP`] without the clock coming back.
    pub unrestored: u32,
    /// The slowest probe seen, as a multiple of the fastest (how far the clock had fallen).
    pub worst: f64,
    /// A later probe faster than the fastest learnt by more than [`SLOW`]: how many times, and
    /// by how much at most (configs timed before may have run at a lower clock).
    pub faster: u32,
    pub faster_by: f64,
}

struct State {
    /// (Both halves leave their device objects undestroyed after a launch in this process that
    /// never ended: see `device::leave_undestroyed`.)
    probe: Option<(WgpuKernel, Buffers)>,
    last_check: Option<Instant>,
    checker: Checker,
    /// Calibration failed: the guard stays off (said once in the report).
    broken: Option<String>,
}

/// The decision, apart from the GPU: the fastest probe seen and what was done.
struct Checker {
    /// The fastest probe time seen, seconds.
    fastest: f64,
    log: ClockLog,
    cap: Duration,
    /// The least loading of the first check (see [`LEARN`]).
    learn: Duration,
}

/// The clock guard of one device (see the module docs).
pub(crate) struct ClockGuard {
    enabled: bool,
    state: Mutex<State>,
}

impl ClockGuard {
    pub fn new(enabled: bool) -> ClockGuard {
        let checker = Checker { fastest: f64::INFINITY, log: ClockLog::default(), cap: CAP, learn: LEARN };
        let state = State { probe: None, last_check: None, checker, broken: None };
        ClockGuard { enabled, state: Mutex::new(state) }
    }

    /// Called before timing: at most every [`CHECK_EVERY`], checks the clock and brings it
    /// back up when it fell.
    pub fn before(&self, timer: &Timer<'_>) {
        if !self.enabled || !timer.timestamps {
            return;
        }
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.broken.is_some() || s.last_check.is_some_and(|t| t.elapsed() < CHECK_EVERY) {
            return;
        }
        // Its own error scope: a fault of the reference kernel turns the guard off, never
        // counts against the config about to be timed.
        let scope = timer.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let r = (|| {
            if s.probe.is_none() {
                s.probe = Some(calibrate(timer)?);
            }
            let State { probe, checker, .. } = &mut *s;
            let (k, ws) = probe.as_ref().expect("calibrated");
            checker.check(|n| timer.time(ws, k, &one_launch(), &req(n)))
        })();
        let r = match pollster::block_on(scope.pop()) {
            Some(e) => Err(BackendError::LaunchFailed(e.to_string())),
            None => r,
        };
        if let Err(e) = r {
            s.probe = None;
            tracing::warn!("clock guard off: {e}");
            s.broken = Some(e.to_string());
        }
        s.last_check = Some(Instant::now());
    }

    /// What the guard did since the last call, as report lines (and starts counting anew).
    pub fn take_notes(&self) -> Vec<String> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let log = std::mem::take(&mut s.checker.log);
        let mut notes = Vec::new();
        if let Some(e) = s.broken.take() {
            notes.push(format!("clock guard: off (its reference kernel failed: {e}); times may be taken at an idle clock"));
        }
        if log.ramps > 0 {
            let mut n = format!(
                "clock guard: the GPU had lowered its clock while idle before {} of {} checks (its reference kernel up to {:.1}× slower than at its fastest); each time it was loaded until the clock came back before timing went on ({:.2} s in all, longest {:.2} s)",
                log.ramps, log.checks, log.worst, log.ramp_seconds, log.longest
            );
            if log.unrestored > 0 {
                n.push_str(&format!("; {} times it did not come back within {} s, so some times are from a lower clock", log.unrestored, CAP.as_secs()));
            }
            notes.push(n);
        }
        if log.faster > 0 {
            notes.push(format!(
                "clock guard: its reference kernel later ran up to {:.1}× faster than when it was first timed (the GPU was not at its top clock then, even after loading it), so configs timed before then may have run at a lower clock (their times too long)",
                log.faster_by
            ));
        }
        notes
    }
}

impl Checker {
    /// One check: `probe(n)` launches the reference kernel `n` times back to back and returns
    /// each launch's time. The first check only learns the probe's time (loading the GPU until
    /// it stops getting faster); later ones ramp when the probe is [`SLOW`]er than its fastest.
    fn check(&mut self, mut probe: impl FnMut(u32) -> Result<Vec<f64>, BackendError>) -> Result<(), BackendError> {
        let first = self.fastest.is_infinite();
        self.log.checks += u32::from(!first);
        let t = min(&probe(2)?);
        if !first {
            self.log.worst = self.log.worst.max(t / self.fastest);
            if t * SLOW < self.fastest {
                // The first check did not reach the top clock after all.
                self.log.faster += 1;
                self.log.faster_by = self.log.faster_by.max(self.fastest / t);
            }
            if t <= self.fastest * SLOW {
                self.fastest = self.fastest.min(t);
                return Ok(());
            }
        }
        // Load the GPU until the probe is back within BACK of its fastest (on the first check:
        // until it stops improving), or for at most the cap.
        let t0 = Instant::now();
        let mut best = t;
        let burst = ((BURST_SECONDS / t.max(1e-7)).ceil() as u32).clamp(4, 1024);
        let mut flat = 0;
        loop {
            let times = probe(burst)?;
            let m = min(&times[times.len() / 2..]);
            flat = if m < best * 0.99 { 0 } else { flat + 1 };
            best = best.min(m);
            if !first && m <= self.fastest * BACK {
                break;
            }
            if first && flat >= 10 && t0.elapsed() >= self.learn {
                break;
            }
            if t0.elapsed() > self.cap {
                self.log.unrestored += u32::from(!first);
                break;
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        if !first {
            self.log.ramps += 1;
            self.log.ramp_seconds += secs;
            self.log.longest = self.log.longest.max(secs);
        }
        tracing::debug!(probe = t, fastest = self.fastest, now = best, seconds = secs, "clock guard ramp");
        self.fastest = self.fastest.min(best);
        Ok(())
    }
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn one_launch() -> Launch {
    Launch { grid: [GROUPS, 1, 1], block: [128, 1, 1], shared_mem_bytes: 0 }
}

fn req(launches: u32) -> TimeRequest {
    TimeRequest { launches, flush: kerntune_core::L2Flush::Off, timeout: Duration::from_secs(10) }
}

/// Builds the probe and picks its length: iterations doubled until one probe takes about
/// [`PROBE_SECONDS`].
fn calibrate(timer: &Timer<'_>) -> Result<(WgpuKernel, Buffers), BackendError> {
    let desc = wgpu::ShaderModuleDescriptor { label: Some("kerntune clock probe"), source: wgpu::ShaderSource::Wgsl(PROBE.into()) };
    // SAFETY: the probe's one loop ends (its bound is a finite count read once), its indices
    // stay below 65 of a 65-element buffer, and it does not divide.
    let module = unsafe { timer.device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) };
    let pipeline = timer.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("kerntune clock probe"),
        layout: None,
        module: &module,
        entry_point: Some("probe"),
        compilation_options: Default::default(),
        cache: None,
    });
    let k = WgpuKernel::new(pipeline, Vec::new(), crate::compile::lengths_asked(PROBE, 1));
    let mut iters = 64.0f32;
    loop {
        let data: Vec<u8> = std::iter::once(iters).chain(std::iter::repeat_n(0.0, 64)).flat_map(f32::to_le_bytes).collect();
        let buf = HostBuffer {
            name: "cfg".into(),
            dtype: kerntune_core::DType::F32,
            data,
            access: kerntune_core::Access::ReadWrite,
            memory: kerntune_core::Memory::Global,
        };
        let ws = crate::bench::create_workspace(
            timer.device,
            timer.queue,
            crate::bench::buffers_only(vec![buf]),
            "the adapter",
            &kerntune_core::backend::Notes::default(),
        )?;
        let t = min(&timer.time(&ws, &k, &one_launch(), &req(3))?);
        if t >= PROBE_SECONDS || iters >= 1e6 {
            return Ok((k, ws));
        }
        // Aim at the target, at most 16× at a time (the first times are launch overhead).
        iters = (iters * ((PROBE_SECONDS / t.max(1e-9)) as f32).clamp(2.0, 16.0)).min(1e6).round();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A GPU whose clock is a fraction of its top: a probe takes 50 µs ÷ clock; every probe
    /// launch under load raises the clock by `step` up to `top`.
    struct Gpu {
        clock: Cell<f64>,
        top: f64,
        step: f64,
        launches: Cell<u32>,
    }

    impl Gpu {
        fn probe(&self, n: u32) -> Result<Vec<f64>, BackendError> {
            self.launches.set(self.launches.get() + n);
            Ok((0..n)
                .map(|_| {
                    let t = 50e-6 / self.clock.get();
                    self.clock.set((self.clock.get() + self.step).min(self.top));
                    t
                })
                .collect())
        }
    }

    fn checker() -> Checker {
        Checker { fastest: f64::INFINITY, log: ClockLog::default(), cap: Duration::from_millis(200), learn: Duration::from_millis(20) }
    }

    #[test]
    fn a_clock_that_fell_while_idle_is_brought_back_before_timing() {
        let gpu = Gpu { clock: Cell::new(1.0), top: 1.0, step: 0.002, launches: Cell::new(0) };
        let mut c = checker();
        c.check(|n| gpu.probe(n)).unwrap();
        assert!((c.fastest - 50e-6).abs() < 1e-9, "{}", c.fastest);
        // Busy at full clock: one probe pair, no ramp.
        let before = gpu.launches.get();
        c.check(|n| gpu.probe(n)).unwrap();
        assert_eq!(gpu.launches.get() - before, 2);
        assert_eq!((c.log.checks, c.log.ramps), (1, 0));
        // Idle: the clock fell to 345 of 1980 MHz. The check loads the GPU until it is back.
        gpu.clock.set(345.0 / 1980.0);
        c.check(|n| gpu.probe(n)).unwrap();
        assert!(gpu.clock.get() >= 1.0 / BACK, "clock {} after the ramp", gpu.clock.get());
        assert_eq!((c.log.checks, c.log.ramps, c.log.unrestored), (2, 1, 0));
        assert!(c.log.worst > 5.5 && c.log.worst <= 1980.0 / 345.0, "{}", c.log.worst);
        // A small dip (within SLOW) is not worth a ramp.
        gpu.clock.set(0.95);
        c.check(|n| gpu.probe(n)).unwrap();
        assert_eq!(c.log.ramps, 1);
    }

    #[test]
    fn a_clock_held_down_is_reported_not_waited_for_forever() {
        let gpu = Gpu { clock: Cell::new(1.0), top: 1.0, step: 0.0, launches: Cell::new(0) };
        let mut c = checker();
        c.check(|n| gpu.probe(n)).unwrap();
        gpu.clock.set(0.5);
        let t0 = Instant::now();
        c.check(|n| gpu.probe(n)).unwrap();
        assert!(t0.elapsed() < Duration::from_secs(2));
        assert_eq!((c.log.ramps, c.log.unrestored), (1, 1));
        let guard = ClockGuard::new(true);
        guard.state.lock().unwrap().checker = c;
        let notes = guard.take_notes();
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("before 1 of 1 checks") && notes[0].contains("2.0× slower") && notes[0].contains("did not come back within 3 s"),
            "{notes:?}"
        );
        assert!(guard.take_notes().is_empty(), "notes are taken once");
    }

    #[test]
    fn the_first_check_learns_the_top_clock_from_a_slow_start() {
        // The tune starts on an idle GPU: the first check must not take the idle clock as the
        // reference, or a later fall would go unnoticed.
        let gpu = Gpu { clock: Cell::new(0.2), top: 1.0, step: 0.01, launches: Cell::new(0) };
        let mut c = checker();
        c.check(|n| gpu.probe(n)).unwrap();
        assert!(c.fastest < 50e-6 * 1.02, "{}", c.fastest);
        assert_eq!(c.log.checks, 0);
    }

    /// A clock that does not rise for a while under load (a Vulkan driver can take hundreds of
    /// milliseconds): the first check loads the GPU for at least its `learn` time, not ten
    /// bursts; and a clock that rose only later is said in the report.
    #[test]
    fn a_clock_slow_to_rise_is_waited_for_and_a_late_rise_is_reported() {
        /// Low for the first `lag` of wall time under load, then at its top.
        struct Lagging {
            start: Cell<Option<Instant>>,
            lag: Duration,
        }
        impl Lagging {
            fn probe(&self, n: u32) -> Result<Vec<f64>, BackendError> {
                let start = *self.start.get().get_or_insert_with(Instant::now);
                self.start.set(Some(start));
                std::thread::sleep(Duration::from_micros(500));
                Ok(vec![if start.elapsed() < self.lag { 150e-6 } else { 50e-6 }; n as usize])
            }
        }
        let gpu = Lagging { start: Cell::new(None), lag: Duration::from_millis(60) };
        let mut c = checker();
        c.learn = Duration::from_millis(100);
        c.check(|n| gpu.probe(n)).unwrap();
        assert!(c.fastest < 51e-6, "the top clock learnt: {}", c.fastest);
        // A first check that gave up before the clock rose: the rise is noticed and said.
        let gpu = Lagging { start: Cell::new(None), lag: Duration::from_millis(150) };
        let mut c = checker();
        c.check(|n| gpu.probe(n)).unwrap();
        assert!(c.fastest > 149e-6, "{}", c.fastest);
        std::thread::sleep(Duration::from_millis(150));
        c.check(|n| gpu.probe(n)).unwrap();
        assert_eq!(c.log.faster, 1);
        let guard = ClockGuard::new(true);
        guard.state.lock().unwrap().checker = c;
        let notes = guard.take_notes();
        assert!(notes.iter().any(|n| n.contains("later ran up to 3.0× faster")), "{notes:?}");
    }
}
