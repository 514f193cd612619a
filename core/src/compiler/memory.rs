//! Memory for compiles: a compile starts only where what it needs is left.
//!
//! Why: a tune starts as many compiles as it has compile threads. Where memory is limited — a
//! Slurm job's `--mem`, a Kubernetes pod's limit, a container's, or a machine with little of it
//! — and each compile takes much of it (a large templated kernel through NVRTC can take
//! gigabytes), the out-of-memory killer ends compiler processes: each such config compiles
//! again with fewer beside it (see [`crate::compiler`]), but the other threads go on starting
//! compiles, and the next wave is killed again, its work lost.
//!
//! So the compiler processes are watched: the most memory of its own one has reached while
//! compiling (`VmHWM` as a compile answers, less the file pages it maps — the compiler's
//! library, which every compiler process shares and a cgroup counts once — and what a compile
//! running holds now: `RssAnon` and `RssShmem`) is a compiler's footprint ([`footprint`]). Each
//! compile's own peak is seen too, as its compile thread waits for the answer; once eight have
//! been measured, the check goes by what nine in ten of the tune's compiles stayed under, not by
//! the largest, which one config can set at twice the rest's. An idle compiler process holds
//! little of its own: it gives the memory a compile freed back to the system before it answers.
//!
//! Before another compile starts beside those running, `fits` asks whether what is left — the
//! least of what the tuner's memory cgroup and each cgroup above it may still use (its limit
//! less its working set: usage less inactive file pages, as Kubernetes counts it) and the
//! machine's `MemAvailable` — covers what the compiles
//! running may still take to reach that footprint, and what the next one needs beyond what its
//! idle compiler process already holds (an eighth more for what is not counted). If not, it
//! waits until a compile ends or memory is freed, and the tune's notes say how often; meanwhile
//! the idle compiler processes but one are closed, for the memory they hold (`shed_idle` in
//! [`crate::compiler`]).
//!
//! Before a compile of this tune has taken memory, the footprint an earlier tune of the same
//! kernel measured stands for it (`Remembered`: kept in the backend's compile cache folder as
//! `<kernel hash>.mem`), so that the first compiles — every thread starting one at once — are
//! held too: in a tuning farm, each shard of a kernel (a Slurm array task, a CI job) starts
//! knowing what its compiles take from the first shard on. Without one (a kernel never tuned
//! here, the compile cache off), the first compiles start as they always did. Compiles on the
//! tuner's threads (HIP's by default, or
//! `KERNTUNE_COMPILE_ISOLATION=0`) are not counted. Linux only (elsewhere every compile starts).

use std::path::PathBuf;
use std::sync::Mutex;

/// What this program knows of its compiler processes' memory.
struct State {
    /// The most memory of its own a compiler process reached while compiling, in bytes.
    footprint: u64,
    /// What an earlier tune of the kernel being tuned measured (0: nothing), in bytes.
    remembered: u64,
    /// The most a compiler process reached while compiling in this tune (since [`Remembered`]
    /// began), in bytes: what is kept for the next.
    this_tune: u64,
    /// Each compile's own peak in this tune, in bytes, as seen while it ran (its [`resident`]
    /// memory, looked at every 20 ms).
    peaks: Vec<u64>,
    /// The compiler processes alive, and whether each is compiling.
    processes: Vec<(u32, bool)>,
    /// Compiler processes being started ahead, not listed yet.
    starting: usize,
    /// Compile starts held back for memory since [`take_note`], whether one is held now, and the
    /// fewest compiles that ran while one was held.
    held: usize,
    holding: bool,
    /// Whether a compile start was held while only an earlier tune's footprint was known.
    early: bool,
    fewest: usize,
    /// What the last hold saw: bytes left, bytes needed, and where the least was left.
    last: Option<(u64, u64, String)>,
    /// Since when compile starts are held now, and the seconds they were held before, in this
    /// tune (since [`Remembered::begin`]).
    held_since: Option<std::time::Instant>,
    held_s: f64,
}

static STATE: Mutex<State> = Mutex::new(State {
    footprint: 0,
    remembered: 0,
    this_tune: 0,
    peaks: Vec::new(),
    processes: Vec::new(),
    starting: 0,
    held: 0,
    holding: false,
    early: false,
    fewest: usize::MAX,
    last: None,
    held_since: None,
    held_s: 0.0,
});

/// Compiles of a tune measured before [`State::expected`] goes by them rather than by the
/// largest footprint known.
const PEAKS_KNOWN: usize = 8;

/// The latest compiles [`State::expected`] goes by (sorted at each look while starts are held:
/// a long tune's every compile would cost more than the compiles it holds).
const PEAKS_KEPT: usize = 512;

impl State {
    /// What a compile is taken to reach, in bytes: nine in ten of this tune's latest compiles
    /// ([`PEAKS_KEPT`]) reached no more, once [`PEAKS_KNOWN`] have been measured; before, the
    /// [`State::largest`]. Not the largest: one config's compile can take twice what the rest do
    /// (on an H200, 138 MiB of a convolution's, where a tune of 50 other configs of it stayed
    /// under 72 MiB), and holding every compile start to it left the compile threads idle; a
    /// compile that outgrows what is left is killed by the out-of-memory killer and compiled
    /// again with fewer beside it ([`crate::compiler`]).
    fn expected(&self) -> u64 {
        if self.peaks.len() < PEAKS_KNOWN {
            return self.largest();
        }
        nine_in_ten(&self.peaks)
    }

    /// The most a compiler process has reached, or an earlier tune of the kernel measured.
    fn largest(&self) -> u64 {
        self.footprint.max(self.remembered)
    }

    /// Seconds compile starts were held in this tune, the hold now included.
    fn held_for(&self) -> f64 {
        self.held_s + self.held_since.map_or(0.0, |t| t.elapsed().as_secs_f64())
    }
}

/// The least value nine in ten of `peaks` (not empty) do not exceed.
fn nine_in_ten(peaks: &[u64]) -> u64 {
    let mut p = peaks.to_vec();
    p.sort_unstable();
    p[(p.len() * 9).div_ceil(10) - 1]
}

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// `n` compiler processes are being started ahead (`true`), or one of those is listed or could
/// not be started (`false`).
pub(crate) fn starting(n: usize, more: bool) {
    let mut s = state();
    s.starting = if more { s.starting + n } else { s.starting.saturating_sub(n) };
}

/// Compiler process `pid` started (idle).
pub(crate) fn spawned(pid: u32) {
    state().processes.push((pid, false));
}

/// A compile was sent to compiler process `pid`.
pub(crate) fn started(pid: u32) {
    let mut s = state();
    match s.processes.iter_mut().find(|p| p.0 == pid) {
        Some(p) => p.1 = true,
        None => s.processes.push((pid, true)),
    }
}

/// The compile in compiler process `pid` answered, the most it was seen to hold of its own
/// being `seen` (bytes; `None` for a compile too short to be looked at): the most the process
/// has held is a compiler's footprint.
pub(crate) fn ended(pid: u32, seen: Option<u64>) {
    let peak = std::fs::read_to_string(format!("/proc/{pid}/status")).ok().and_then(|t| own_peak(&t));
    let mut s = state();
    if let Some(p) = s.processes.iter_mut().find(|p| p.0 == pid) {
        p.1 = false;
    }
    s.footprint = s.footprint.max(peak.unwrap_or(0));
    s.this_tune = s.this_tune.max(peak.unwrap_or(0));
    if let Some(p) = seen {
        if s.peaks.len() == PEAKS_KEPT {
            s.peaks.remove(0);
        }
        s.peaks.push(p);
    }
}

/// Compiler process `pid` is gone (killed, closed, or it died).
pub(crate) fn gone(pid: u32) {
    state().processes.retain(|p| p.0 != pid);
}

/// The most resident memory a compiler process of this program has reached while compiling,
/// in bytes (0: none measured).
pub fn footprint() -> u64 {
    state().footprint
}

/// Whether another compile may start beside the `running` ones: always alone, or while no
/// compiler's footprint is known; otherwise only where what is left covers what the compiles
/// running in processes may still take to reach the footprint, and what the next one needs
/// beyond what its idle compiler holds.
pub(crate) fn fits(running: usize) -> bool {
    let wait = if enabled() && running > 0 { shortfall(running) } else { None };
    if wait.is_some() {
        // Held: the idle compilers but the one the next compile goes to hold memory for nothing.
        super::shed_idle(1);
    }
    let mut s = state();
    let Some(last) = wait else {
        s.holding = false;
        if let Some(t) = s.held_since.take() {
            s.held_s += t.elapsed().as_secs_f64();
        }
        return true;
    };
    if !s.holding {
        s.held += 1;
        s.holding = true;
    }
    s.held_since.get_or_insert_with(std::time::Instant::now);
    s.fewest = s.fewest.min(running);
    s.last = Some(last);
    s.early |= s.remembered > s.footprint;
    false
}

/// Why another compile may not start beside the `running` ones (at least one), if so: what is
/// left beyond what they may still take, what it needs, and where the least is left.
fn shortfall(running: usize) -> Option<(u64, u64, String)> {
    let (known, processes, starting) = {
        let s = state();
        (s.expected(), s.processes.clone(), s.starting)
    };
    // No compiler process, none coming: the compiles run on the tuner's threads, which are not
    // counted. Nor, with none listed yet, when nothing is known. (The first compiles may be
    // asked for before the processes started ahead are listed: each counts a whole footprint.)
    if processes.is_empty() && (starting == 0 || known == 0) {
        return None;
    }
    let (left, from) = left()?;
    // Room for every compiler process, and one more, at the footprint: no need to look closer
    // (one read of what is left, where memory is plentiful).
    let bound = known.saturating_mul(processes.len().max(running) as u64 + 1);
    if known > 0 && left >= bound.saturating_add(bound / 8) {
        return None;
    }
    let held: Vec<(u64, bool)> = processes.iter().filter_map(|&(pid, compiling)| Some((resident(pid)?, compiling))).collect();
    let Verdict { ok, short, need } = judge(known, &held, running, left)?;
    (!ok).then_some((short, need, from))
}

/// [`fits`]'s answer: whether another compile starts, what is left beyond what the compiles
/// running may still take, and what the next one needs (bytes).
#[derive(Debug, PartialEq)]
struct Verdict {
    ok: bool,
    short: u64,
    need: u64,
}

/// [`fits`] from the footprint known (`known`), the compiler processes' resident bytes and
/// whether each compiles (`held`), the compiles running (`running`, those taken from the queue
/// and not yet sent included) and the bytes `left`; `None` while no footprint is known.
fn judge(known: u64, held: &[(u64, bool)], running: usize, left: u64) -> Option<Verdict> {
    // A compile running holds at least what it holds now: the footprint, before any has ended.
    let footprint = held.iter().filter(|h| h.1).map(|h| h.0).fold(known, u64::max);
    if footprint == 0 {
        return None;
    }
    let compiling = held.iter().filter(|h| h.1).count();
    // Taken from the queue and not yet sent: counted as a whole footprint.
    let unsent = running.saturating_sub(compiling) as u64;
    let coming: u64 = held.iter().filter(|h| h.1).map(|h| footprint.saturating_sub(h.0)).sum::<u64>() + unsent * footprint;
    // The next compile goes to an idle compiler, which holds some of it already.
    let idle = held.iter().filter(|h| !h.1).map(|h| h.0).max().unwrap_or(0);
    let need = footprint.saturating_sub(idle) + footprint / 8;
    let short = left.saturating_sub(coming);
    Some(Verdict { ok: short >= need, short, need })
}

/// What an earlier tune of a kernel measured of its compiles' memory, for the tune of it now:
/// read when the tune starts ([`Remembered::begin`]), and what this tune measured written back
/// (the larger of the two) when it ends (dropped). Best effort: a compile cache that cannot be
/// read or written only leaves the first compiles unheld.
pub(crate) struct Remembered {
    file: Option<(PathBuf, String)>,
    read: u64,
}

impl Remembered {
    /// Starts a tune of the kernel of hash `kernel` on `backend`: the footprint an earlier tune
    /// of it kept stands for this tune's until one is measured.
    pub(crate) fn begin(backend: &str, kernel: &str) -> Remembered {
        let file = crate::store::cache::folder(backend).map(|d| (d, kernel.to_string()));
        let read = file
            .as_ref()
            .and_then(|(d, k)| crate::store::cache::load(d, k, crate::store::cache::FOOTPRINT))
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|t| t.trim().parse::<u64>().ok())
            .unwrap_or(0);
        // More than the machine holds was never measured on it (a damaged or hand-edited file):
        // kept, it would hold every tune of the kernel to one compile at a time, and never be
        // written over (only a larger measurement is).
        let machine = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| kilobytes(&t, "MemTotal:"));
        let read = match (read, machine) {
            (r, Some(total)) if r > total => {
                let path = file.as_ref().map(|(d, k)| d.join(format!("{k}.{}", crate::store::cache::FOOTPRINT)));
                tracing::warn!(
                    "compile cache: {} remembers a compile of {} for this kernel, more than this machine's memory ({}): ignored (what this tune measures replaces it)",
                    path.map_or_else(String::new, |p| p.display().to_string()),
                    mib(r),
                    mib(total)
                );
                0
            }
            (r, _) => r,
        };
        let mut s = state();
        s.remembered = read;
        s.this_tune = 0;
        s.peaks.clear();
        s.held_since = None;
        s.held_s = 0.0;
        Remembered { file, read }
    }
}

impl Drop for Remembered {
    fn drop(&mut self) {
        let measured = {
            let mut s = state();
            s.remembered = 0;
            std::mem::take(&mut s.this_tune)
        };
        if let Some((dir, kernel)) = self.file.as_ref().filter(|_| measured > self.read) {
            crate::store::cache::store(dir, kernel, crate::store::cache::FOOTPRINT, measured.to_string().as_bytes());
        }
    }
}

/// Forgets every footprint this program has measured or read: for tests, which tune one kernel
/// after another in one program as tunes in separate ones.
#[doc(hidden)]
pub fn forget() {
    let mut s = state();
    s.footprint = 0;
    s.remembered = 0;
    s.this_tune = 0;
    s.peaks.clear();
}

/// Seconds compile starts have been held for memory in this tune so far (since it began): time
/// the compile threads stood idle that the tune's account of its time says was memory's.
pub fn held_seconds() -> f64 {
    state().held_for()
}

/// `0` (or `off`, `false`, `no`): compiles start without the memory check, as before it existed.
pub const CHECK_VAR: &str = "KERNTUNE_COMPILE_MEMORY_CHECK";

/// Whether the check is on ([`CHECK_VAR`], read once).
fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| super::switch(CHECK_VAR, "the memory check", "no memory check") != Some(false))
}

/// The tune's note on compiles held back for memory since the last call, if any were.
pub fn take_note() -> Option<String> {
    let mut s = state();
    let held = std::mem::take(&mut s.held);
    let fewest = std::mem::replace(&mut s.fewest, usize::MAX);
    s.holding = false;
    let early = std::mem::take(&mut s.early);
    let (left, need, from) = s.last.take()?;
    (held > 0).then(|| {
        format!(
            "compile memory: a compile start waited {held} time{} for memory ({:.1} s in all), with {fewest} or more compiling{} (a compiler process takes up to {}{}{}; {} left to {from} beyond what the compiles running may still take, {} needed)",
            if held == 1 { "" } else { "s" },
            s.held_for(),
            if early { ", the first compiles held by what an earlier tune of this kernel measured" } else { "" },
            mib(s.largest()),
            if s.remembered > s.footprint { ", as an earlier tune of this kernel measured" } else { "" },
            if s.expected() < s.largest() { format!(", nine compiles in ten up to {}, which the check goes by", mib(s.expected())) } else { String::new() },
            mib(left),
            mib(need)
        )
    })
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// The memory this program may still use, in bytes, and where the least of it is counted (a
/// cgroup's folder, or `MemAvailable`): the least of each limited memory cgroup it is in (its
/// limit less its working set) and the machine's available memory. `None` where neither is
/// known.
fn left() -> Option<(u64, String)> {
    if let Some(limit) = *ASSUMED.lock().unwrap_or_else(|p| p.into_inner()) {
        let pids: Vec<u32> = state().processes.iter().map(|p| p.0).collect();
        let used: u64 = pids.into_iter().filter_map(resident).sum();
        return Some((limit.saturating_sub(used), "a test's limit".into()));
    }
    let machine =
        std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| kilobytes(&t, "MemAvailable:")).map(|b| (b, "the machine (MemAvailable)".to_string()));
    let cgroups = limited().iter().filter_map(|c| c.left().map(|b| (b, format!("its memory cgroup ({})", c.dir.display()))));
    machine.into_iter().chain(cgroups).min_by_key(|(b, _)| *b)
}

/// A limit for the compiler processes alone, in bytes, instead of the cgroups' and the
/// machine's ([`assume_limit`]).
static ASSUMED: Mutex<Option<u64>> = Mutex::new(None);

/// Counts the memory left as `limit` bytes less what the compiler processes hold, instead of
/// the cgroups' and the machine's (`None`: those again): for tests, which cannot limit their
/// own memory.
#[doc(hidden)]
pub fn assume_limit(limit: Option<u64>) {
    *ASSUMED.lock().unwrap_or_else(|p| p.into_inner()) = limit;
}

/// A memory cgroup with a limit, this program's or one above it.
#[derive(Debug, PartialEq)]
pub(crate) struct Limited {
    pub dir: PathBuf,
    pub v2: bool,
}

impl Limited {
    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(name)).ok()
    }

    /// Its limit, in bytes; `None` without one.
    fn limit(&self) -> Option<u64> {
        limit_bytes(&self.read(if self.v2 { "memory.max" } else { "memory.limit_in_bytes" })?)
    }

    /// Its limit less its working set, in bytes.
    fn left(&self) -> Option<u64> {
        let limit = self.limit()?;
        let usage = self.read(if self.v2 { "memory.current" } else { "memory.usage_in_bytes" })?;
        let stat = self.read("memory.stat")?;
        let usage: u64 = usage.trim().parse().ok()?;
        let inactive = stat_value(&stat, if self.v2 { "inactive_file" } else { "total_inactive_file" }).unwrap_or(0);
        Some(limit.saturating_sub(usage.saturating_sub(inactive)))
    }
}

/// A limit file's value in bytes; `None` for no limit (`max`, or v1's page-counter maximum).
fn limit_bytes(text: &str) -> Option<u64> {
    let v: u64 = text.trim().parse().ok()?;
    // cgroup v1 writes its "no limit" as the largest page count in bytes (about 2^63).
    (v < 1 << 60).then_some(v)
}

/// The value of `key` in a `memory.stat` text.
fn stat_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

/// This program's memory cgroups with a limit: its own and each above it, up to its
/// hierarchy's mount (found once per process).
fn limited() -> &'static [Limited] {
    static FOUND: std::sync::OnceLock<Vec<Limited>> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| {
        let found = limited_in(crate::worker::own_memory_cgroups());
        tracing::debug!(?found, "memory cgroups with a limit");
        found
    })
}

/// Of `cgroups` (folder, mount point, v2), the first that exists, and each folder from it up to
/// its mount point, those with a limit.
fn limited_in(cgroups: &[crate::worker::MemoryCgroup]) -> Vec<Limited> {
    let Some(c) = cgroups.iter().find(|c| c.dir.is_dir()) else { return Vec::new() };
    let mut out = Vec::new();
    let mut dir = Some(c.dir.as_path());
    while let Some(d) = dir.filter(|d| d.starts_with(&c.mount)) {
        let cgroup = Limited { dir: d.to_path_buf(), v2: c.v2 };
        if cgroup.limit().is_some() {
            out.push(cgroup);
        }
        dir = d.parent();
    }
    out
}

/// The value of `key` (`VmHWM:`, `MemAvailable:`) in kilobytes in a `/proc` text, in bytes.
fn kilobytes(text: &str, key: &str) -> Option<u64> {
    let kb: u64 = text.lines().find_map(|l| l.strip_prefix(key))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb * 1024)
}

/// What a process holds of its own: its resident memory less the file pages it maps (the
/// compiler's library, the program's code), which every compiler process shares and a memory
/// cgroup counts once. (On an H200 a convolution's NVRTC compiler processes each reached
/// 146–163 MiB resident, while 16 of them compiling at once, with the tuner and its kernel
/// worker, peaked at 0.95 GB in their cgroup.)
pub(crate) fn resident(pid: u32) -> Option<u64> {
    let t = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some(kilobytes(&t, "RssAnon:")? + kilobytes(&t, "RssShmem:").unwrap_or(0))
}

/// The most a process has held of its own (see [`resident`]), from its `/proc/PID/status`
/// text: its peak resident memory (`VmHWM`) less the file pages it maps now, which stay mapped.
fn own_peak(status: &str) -> Option<u64> {
    let hwm = kilobytes(status, "VmHWM:")?;
    Some(hwm.saturating_sub(kilobytes(status, "RssFile:").unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_compile_starts_where_what_it_needs_is_left() {
        // No footprint known and no compiler process (compiles on threads): nothing to go by.
        assert_eq!(judge(0, &[], 1, 0), None);
        assert_eq!(judge(0, &[(10 * MIB, false)], 1, 0), None, "an idle compiler says nothing of a compile");
        // One compile at 60 MiB of a 160 MiB footprint (it may take 100 more), an idle compiler
        // holding 40: the next needs 120 + 20.
        let v = judge(160 * MIB, &[(60 * MIB, true), (40 * MIB, false)], 1, 250 * MIB).unwrap();
        assert_eq!(v, Verdict { ok: true, short: 150 * MIB, need: 140 * MIB });
        assert!(!judge(160 * MIB, &[(60 * MIB, true), (40 * MIB, false)], 1, 230 * MIB).unwrap().ok);
        // Before any compile has ended, one running shows the footprint is at least what it holds.
        assert_eq!(judge(0, &[(80 * MIB, true)], 1, 100 * MIB).unwrap(), Verdict { ok: true, short: 100 * MIB, need: 90 * MIB });
        // A compile taken from the queue and not yet sent counts whole; so does a new process.
        assert_eq!(judge(100 * MIB, &[(100 * MIB, true)], 2, 300 * MIB).unwrap(), Verdict { ok: true, short: 200 * MIB, need: 112 * MIB + MIB / 2 });
        assert!(!judge(100 * MIB, &[(100 * MIB, true)], 3, 300 * MIB).unwrap().ok);
    }

    #[test]
    fn nine_in_ten_compiles_take_no_more() {
        // Eight or nine: the largest; ten: one may take more; twenty: two may.
        assert_eq!(nine_in_ten(&[5, 1, 2, 3, 4, 6, 7, 100]), 100);
        assert_eq!(nine_in_ten(&[5, 1, 2, 3, 4, 6, 7, 8, 9, 100]), 9);
        let twenty: Vec<u64> = (1..=18).chain([100, 200]).collect();
        assert_eq!(nine_in_ten(&twenty), 18);
        // A process's own memory now, as a compile thread reads it while it waits.
        if std::path::Path::new("/proc/self/status").exists() {
            assert!(resident(std::process::id()).is_some_and(|b| b > 0));
        }
        assert_eq!(resident(u32::MAX), None);
    }

    #[test]
    fn limits_and_counts_are_read_from_cgroup_and_proc_texts() {
        assert_eq!(limit_bytes("max\n"), None);
        assert_eq!(limit_bytes("9223372036854771712\n"), None, "cgroup v1's no limit");
        assert_eq!(limit_bytes("419430400\n"), Some(400 * MIB));
        let stat = "cache 0\nrss 10\ninactive_file 4096\ntotal_inactive_file 8192\n";
        assert_eq!((stat_value(stat, "inactive_file"), stat_value(stat, "total_inactive_file")), (Some(4096), Some(8192)));
        assert_eq!(kilobytes("MemTotal:  100 kB\nMemAvailable:   2048 kB\n", "MemAvailable:"), Some(2048 * 1024));
        assert_eq!(kilobytes("VmHWM:\t  1000 kB\nVmRSS:\t 900 kB\n", "VmRSS:"), Some(900 * 1024));
        // A compiler's own peak: its peak resident memory less the library pages it maps.
        let status = "VmHWM:\t  150000 kB\nVmRSS:\t 120000 kB\nRssAnon:\t 40000 kB\nRssFile:\t 80000 kB\nRssShmem:\t 0 kB\n";
        assert_eq!(own_peak(status), Some(70000 * 1024));
        assert_eq!(own_peak("VmHWM:\t 100 kB\n"), Some(100 * 1024), "no RssFile line (an older kernel): the whole peak");
    }

    /// A cgroup's limit, or one above it (a Slurm job's, above its step's), bounds what is left:
    /// each limited folder from the process's own up to the mount counts; working set is usage
    /// less inactive file pages.
    #[test]
    fn every_limited_cgroup_from_the_processs_up_to_the_mount_counts() {
        let root = tempfile::tempdir().unwrap();
        let mount = root.path().join("memory");
        let job = mount.join("slurm/uid_0/job_7");
        let step = job.join("step_0");
        std::fs::create_dir_all(&step).unwrap();
        let write = |d: &std::path::Path, limit: &str, usage: u64, inactive: u64| {
            std::fs::write(d.join("memory.limit_in_bytes"), limit).unwrap();
            std::fs::write(d.join("memory.usage_in_bytes"), usage.to_string()).unwrap();
            std::fs::write(d.join("memory.stat"), format!("rss 1\ntotal_inactive_file {inactive}\n")).unwrap();
        };
        write(&mount, "9223372036854771712", 0, 0);
        write(&job, "1073741824", 700 * MIB, 100 * MIB);
        write(&step, "9223372036854771712", 500 * MIB, 0);
        let cg = crate::worker::MemoryCgroup { dir: step.clone(), mount: mount.clone(), v2: false };
        let missing = crate::worker::MemoryCgroup { dir: mount.join("nowhere"), mount: mount.clone(), v2: false };
        let limited = limited_in(&[missing, cg]);
        assert_eq!(limited, [Limited { dir: job.clone(), v2: false }]);
        assert_eq!(limited[0].left(), Some(1024 * MIB - 600 * MIB));
        // cgroup v2's names.
        let v2 = root.path().join("v2");
        std::fs::create_dir_all(&v2).unwrap();
        std::fs::write(v2.join("memory.max"), "524288000\n").unwrap();
        std::fs::write(v2.join("memory.current"), (300 * MIB).to_string()).unwrap();
        std::fs::write(v2.join("memory.stat"), format!("anon 1\ninactive_file {}\n", 50 * MIB)).unwrap();
        assert_eq!(Limited { dir: v2, v2: true }.left(), Some(500 * MIB - 250 * MIB));
    }
}
