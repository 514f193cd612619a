//! Explaining failures: one diagnosis per cause, not one per config.
//!
//! - [`group`] sorts failed configs by cause: the failure's kind and its message with the
//!   numbers that vary between configs masked out (element counts, indices, addresses).
//! - For a memory fault (an illegal address), [`buffer_extents`] compares each buffer's size
//!   with the index extent the launch implies (the problem size and what the grid covers,
//!   where the spec gives a problem size; else the threads launched) and names the buffers a
//!   kernel could read or write past; the tuner adds the backend's memory checker's first
//!   report ([`crate::Backend::memcheck`]) for one config of the cause.
//! - [`disagreement`]: when more than half of the verified configs disagree with the
//!   reference, the parameter whose values best split agreeing from disagreeing configs, and
//!   the option that fits (expected outputs per value, looser tolerances, no reference).
//! - [`nothing_passed`]: the one message of a tune where every config failed.

use crate::error::FailureKind;
use crate::measure::verify::Mismatch;
use crate::plan::prepare::{Launch, Prepared};
use crate::run::report::{ConfigResult, ResultOutcome};
use crate::space::config::Config;
use crate::spec::job::{Param, Reference, Verification};
use crate::spec::problem::{Access, HostBuffer};
use crate::worker::PRINTED_BEFORE;
use serde::Serialize;
use std::collections::BTreeMap;

/// Failed configs that share a cause.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cause {
    /// The failure class.
    pub kind: FailureKind,
    /// The message with what varies between configs masked (`#`).
    pub pattern: String,
    /// How many configs failed so.
    pub count: usize,
    /// One of them.
    pub example: Config,
    /// Its message (at most three non-empty lines).
    pub message: String,
    /// What was found out about this cause (buffers a launch could read past, the memory
    /// checker's report), one finding per line.
    pub diagnosis: Vec<String>,
}

impl Cause {
    /// Whether the cause is a memory fault (an illegal or misaligned address).
    pub fn is_memory_fault(&self) -> bool {
        is_memory_fault(&self.message)
    }

    /// Its diagnosis, each line after the kind (`device lost: …`): how a run's note stores its
    /// findings ([`crate::store::db::RunNote::findings`]) and the report lists them.
    pub fn findings(&self) -> impl Iterator<Item = String> + '_ {
        self.diagnosis.iter().map(|d| format!("{}: {d}", self.kind))
    }
}

/// How a [`shared_finding`] begins, after its kind's verb.
const SHARED: &str = "every config that";

/// The kind a finding line ([`Cause::findings`]) is a [`shared_finding`] of, or `None` for
/// another finding.
pub fn shared_kind(line: &str) -> Option<&str> {
    line.split_once(&format!(": {SHARED}")).map(|(kind, _)| kind)
}

/// Whether a failure message tells of a memory fault.
pub fn is_memory_fault(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    ["illegal address", "illegal_address", "illegaladdress", "out of bounds", "out-of-bounds", "misaligned", "memory access fault", "invalid __global__"]
        .iter()
        .any(|p| m.contains(p))
}

/// Nouns a message counts (`1 line`, `2 lines`), whose singular [`pattern`] makes plural.
const COUNTED: &[&str] = &["line", "element", "config", "byte", "thread", "block", "time", "compile"];

/// A message's first lines with the numbers that vary between configs masked, and without what
/// the kernel printed before it failed ([`PRINTED_BEFORE`]): whether that was read in time
/// varies between launches of one fault (an H200 told two configs that failed the same
/// assertion apart by it, one run in four), and a counted noun always plural ([`COUNTED`]: the
/// same H200 told them apart by `1 line` and `2 lines` of the assertion read).
fn pattern(message: &str) -> String {
    let message = message.split_once(PRINTED_BEFORE).map_or(message, |(m, _)| m);
    let head: String = message.lines().map(str::trim).filter(|l| !l.is_empty()).take(2).collect::<Vec<_>>().join(" | ");
    let mut out = String::with_capacity(head.len());
    let mut prev_masked = false;
    for token in head.split_inclusive(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' || c == '+')) {
        let (word, sep) = token.split_at(token.trim_end_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' || c == '+')).len());
        let numeric =
            !word.is_empty() && (word.parse::<f64>().is_ok() || word.starts_with("0x") || word.chars().all(|c| c.is_ascii_hexdigit()) && word.len() >= 8);
        if numeric {
            if !prev_masked {
                out.push('#');
            }
            prev_masked = true;
        } else {
            out.push_str(word);
            // A count's noun, singular or plural as the count was (`1 line`, `2 lines`), is the
            // plural here: how many lines an assertion printed before the failure was read is
            // timing.
            if prev_masked && COUNTED.contains(&word) {
                out.push('s');
            }
            prev_masked = false;
        }
        out.push_str(sep);
    }
    out
}

/// A message's first three lines (blank lines and a diagnostic's bare `│` gutters left out),
/// one line: where they end at a location of a naga (wgpu) diagnostic, `┌─ wgsl:1:28`, with the
/// source line it points at (`1 │ const BOGUS = x;`), which says more than the rest.
fn first_lines(message: &str) -> String {
    let lines: Vec<&str> = message.lines().map(str::trim).filter(|l| !l.trim_matches(|c: char| c == '│' || c.is_whitespace()).is_empty()).collect();
    let mut out: Vec<&str> = lines.iter().take(3).copied().collect();
    if let Some(at) = out.iter().position(|l| l.starts_with("┌─")) {
        let source = |l: &&str| l.split_once(" │ ").is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if let Some(src) = lines.iter().skip(at + 1).take(2).find(|l| source(l)).filter(|l| !out.contains(l)) {
            out.push(src);
        }
    }
    out.join(" | ")
}

/// Failed configs grouped by cause, most frequent first (ties: kind, then pattern).
pub fn group<'a>(results: impl IntoIterator<Item = &'a ConfigResult>) -> Vec<Cause> {
    group_failures(results.into_iter().filter_map(|r| match &r.outcome {
        ResultOutcome::Failed { kind, message } => Some((&r.config, *kind, message.as_str())),
        _ => None,
    }))
}

/// Failures — config, kind, message — grouped by cause, most frequent first (ties: kind, then
/// pattern): what [`group`] does for a run's results, for any record of failures (a database
/// entry's, in a report).
pub fn group_failures<'a>(failures: impl IntoIterator<Item = (&'a Config, FailureKind, &'a str)>) -> Vec<Cause> {
    let mut by: BTreeMap<(FailureKind, String), Cause> = BTreeMap::new();
    for (config, kind, message) in failures {
        // The message often repeats the kind ("wrong output: ..."); the cause says it once.
        let message = message.strip_prefix(&format!("{kind}: ")).unwrap_or(message);
        // A compile error's first line is the compiler's options (`compile failed (options:
        // --gpu-architecture=sm_90 … -DFAULT=1 …):`, each config's own): the cause says the
        // compiler's log, and each config's record keeps its options.
        let message = message.strip_prefix("compile failed (options: ").and_then(|m| m.split_once("):\n")).map_or(message, |(_, log)| log);
        let p = pattern(message);
        let e = by.entry((kind, p.clone())).or_insert_with(|| Cause {
            kind,
            pattern: p,
            count: 0,
            example: config.clone(),
            message: first_lines(message),
            diagnosis: Vec::new(),
        });
        e.count += 1;
        // A stable example: the lowest config key.
        if config.key() < e.example.key() {
            e.example = config.clone();
            e.message = first_lines(message);
        }
    }
    let mut v: Vec<Cause> = by.into_values().collect();
    v.sort_by(|a, b| b.count.cmp(&a.count).then(a.kind.cmp(&b.kind)).then(a.pattern.cmp(&b.pattern)));
    v
}

/// The expression of a failed device-side assertion a failure's message quotes: CUDA's
/// ``Assertion `EXPR` failed.``, HIP's ``Device-side assertion `EXPR' failed.``
pub fn assertion_of(message: &str) -> Option<&str> {
    [("Assertion `", "` failed"), ("Device-side assertion `", "' failed")].iter().find_map(|(open, close)| {
        let rest = &message[message.find(open)? + open.len()..];
        Some(&rest[..rest.find(close)?])
    })
}

/// A C condition as a spec's expression (Python's syntax): `&&`, `||` and `!` as words. `None`
/// where it holds more than names, numbers, arithmetic, comparisons and parentheses (a cast, a
/// ternary, a member, a call).
fn c_condition(expr: &str) -> Option<String> {
    if !expr.chars().all(|c| c.is_ascii_alphanumeric() || " _*+-/%<>=!&|()".contains(c)) {
        return None;
    }
    let mut out = String::with_capacity(expr.len() + 8);
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('&', Some('&')) | ('|', Some('|')) => {
                chars.next();
                out.push_str(if c == '&' { " and " } else { " or " });
            }
            ('!', Some('=')) => out.push('!'),
            ('!', _) => out.push_str(" not "),
            _ => out.push(c),
        }
    }
    Some(out.split_whitespace().collect::<Vec<_>>().join(" ").replace("( ", "(").replace(" )", ")"))
}

/// For a cause whose message quotes a failed device-side assertion ([`assertion_of`]) over the
/// space's parameters only, that is false in every config of the cause among `results` and
/// true in every config measured: the restriction that would have kept those configs out,
/// in words. `params` are every parameter's name.
pub fn assertion_restriction<'a>(cause: &Cause, results: impl IntoIterator<Item = &'a ConfigResult>, params: &[&str]) -> Option<String> {
    let asserted = assertion_of(&cause.message)?;
    let condition = c_condition(asserted)?;
    let expr = crate::spec::expr::Expr::compile(&condition, params).ok()?;
    if expr.vars_used().is_empty() {
        return None;
    }
    let holds = |c: &Config| {
        let slots: Option<Vec<crate::spec::value::Value>> = params.iter().map(|n| c.get(n).cloned()).collect();
        expr.eval_bool(&slots?).ok()
    };
    let (mut failed, mut measured) = (0, 0);
    for r in results {
        match &r.outcome {
            ResultOutcome::Failed { kind, message } if *kind == cause.kind && assertion_of(message) == Some(asserted) => {
                (holds(&r.config) == Some(false)).then_some(())?;
                failed += 1;
            }
            ResultOutcome::Measured { .. } => {
                (holds(&r.config) == Some(true)).then_some(())?;
                measured += 1;
            }
            _ => {}
        }
    }
    (failed > 0).then(|| {
        format!(
            "the assertion `{asserted}` names only parameters, and is false in every config that failed so ({failed}) and true in every config measured ({measured}): make it a restriction of the spec ([space] restrictions = [\"{condition}\"]) and such configs are never compiled or launched"
        )
    })
}

/// What a compile error of a published kernel usually means, where it is one of the known
/// removals from CUDA — the warp intrinsics without a mask (`__shfl_down`, `__any`, …; deprecated
/// in CUDA 9, gone for sm_70 and later) and texture references (gone in CUDA 12) — or host code,
/// which NVRTC refuses: a header that holds some (`cub/cub.cuh`), a published file's own (`main`,
/// helpers without `__device__`), the C and C++ standard library's headers (which NVRTC lacks).
/// One finding per cause the compiler's `message` shows.
pub fn compile_hints(message: &str) -> Vec<String> {
    const WARP: &[&str] = &["__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__any", "__all", "__ballot"];
    let mut out = Vec::new();
    for name in WARP {
        if message.contains(&format!("identifier \"{name}\" is undefined")) {
            let call = if name.starts_with("__shfl") { "(0xffffffff, value, …)" } else { "(0xffffffff, predicate)" };
            out.push(format!(
                "`{name}` without a mask was deprecated in CUDA 9 and is gone for sm_70 and later: write `{name}_sync{call}`, the mask naming the lanes that take part (all 32 here)"
            ));
        }
    }
    if message.contains("is not allowed in JIT mode") {
        out.push(
            "NVRTC compiles device code only, and a header this source includes holds host code (`cub/cub.cuh` includes CUB's device-wide algorithms, which launch kernels from the host through Thrust): include only the device-side headers the kernel uses, such as `cub/block/block_reduce.cuh`"
                .into(),
        );
    }
    if let Some(header) = standard_header(message) {
        let libcu = LIBCUXX
            .iter()
            .find(|(names, _)| names.contains(&header))
            .map(|(_, std)| {
                format!("; for what it declares in device code, CUDA's own `<cuda/std/{std}>` (libcu++, on NVRTC's include path) is the one to include")
            })
            .unwrap_or_default();
        out.push(format!(
            "NVRTC compiles device code only and has none of the C or C++ standard library's headers (`{header}` here); a kernel needs none for `printf` or the math functions (`sqrtf`, `expf`, …), which NVRTC knows{libcu}. Remove the include, or put it, with any host code of the file, {GUARD}"
        ));
    }
    // NVRTC on a function without `__device__` or `__global__` in the kernel's own file (a
    // published file's `main` and helpers). Its own advice, `-default-device`, fits helpers that
    // lack `__device__`, not host code.
    if message.contains("host functions are not allowed in JIT mode") {
        let line = message.split(" | ").nth(1).map(|l| format!(" (`{}`)", l.trim())).unwrap_or_default();
        let (file, lead) = match error_file(message) {
            Some(f) if in_header(f) => (format!("the header `{f}`"), "a function without `__device__`"),
            _ => ("the source".to_string(), "host code"),
        };
        out.push(format!(
            "{file} holds {lead}{line}, which NVRTC does not compile: give a helper meant for the GPU `__device__` (or `__host__ __device__`), and put host code (`main`, `cudaMalloc`, `<<<…>>>` launches, standard headers) {GUARD} or in a file of its own"
        ));
    }
    // NVRTC 13 on a `texture<float, 2> tex;` line: `error: texture is not a template`.
    if ["texture is not a template", "identifier \"texture\" is undefined", "identifier \"tex1Dfetch\" is undefined"].iter().any(|m| message.contains(m)) {
        out.push(
            "texture references were removed in CUDA 12: read through `__ldg` (or `const __restrict__` pointers), or a texture object (`cudaTextureObject_t`)"
                .into(),
        );
    }
    out
}

/// How to keep a file's host part from NVRTC and still build the file with nvcc, as the host-code
/// hints of [`compile_hints`] say it.
const GUARD: &str = "between `#ifndef __CUDACC_RTC__` and `#endif` (NVRTC defines `__CUDACC_RTC__`, nvcc does not, so the file still builds as it did)";

/// The C standard library's headers (C11) and the POSIX ones published kernels' host code
/// includes; a name without an extension is taken for a C++ standard header (`vector`,
/// `cstdio`).
const C_HEADERS: &[&str] = &[
    "assert.h",
    "complex.h",
    "ctype.h",
    "errno.h",
    "fenv.h",
    "float.h",
    "inttypes.h",
    "iso646.h",
    "limits.h",
    "locale.h",
    "math.h",
    "setjmp.h",
    "signal.h",
    "stdalign.h",
    "stdarg.h",
    "stdatomic.h",
    "stdbool.h",
    "stddef.h",
    "stdint.h",
    "stdio.h",
    "stdlib.h",
    "stdnoreturn.h",
    "string.h",
    "tgmath.h",
    "threads.h",
    "time.h",
    "uchar.h",
    "wchar.h",
    "wctype.h",
    "unistd.h",
    "sys/time.h",
    "sys/types.h",
    "omp.h",
    "malloc.h",
    "memory.h",
];

/// Standard headers whose device-side counterpart libcu++ ships as `<cuda/std/…>`: the names a
/// source may include, and the counterpart's.
const LIBCUXX: &[(&[&str], &str)] = &[
    (&["cstdint", "stdint.h", "inttypes.h", "cinttypes"], "cstdint"),
    (&["cstddef", "stddef.h"], "cstddef"),
    (&["climits", "limits.h"], "climits"),
    (&["cfloat", "float.h"], "cfloat"),
    (&["limits"], "limits"),
    (&["type_traits"], "type_traits"),
    (&["utility"], "utility"),
    (&["tuple"], "tuple"),
    (&["array"], "array"),
    (&["complex", "complex.h"], "complex"),
    (&["atomic", "stdatomic.h"], "atomic"),
    (&["cassert", "assert.h"], "cassert"),
];

/// The standard library header a compile log says it could not open (NVRTC: ``catastrophic
/// error: cannot open source file "stdio.h"``), if it is one.
fn standard_header(message: &str) -> Option<&str> {
    let rest = message.split("cannot open source file \"").nth(1)?;
    let name = &rest[..rest.find('"')?];
    let cxx = !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    (cxx || C_HEADERS.contains(&name)).then_some(name)
}

/// The file the error a compile log opens with is in (`FILE(LINE): error: …`).
fn error_file(message: &str) -> Option<&str> {
    message.split("): ").next().and_then(|f| f.rsplit_once('(')).map(|(f, _)| f).filter(|f| !f.is_empty())
}

/// Whether `file` is a header rather than the kernel's own source, which NVRTC names
/// `<kernel>.cu`: a path, or a header's name.
fn in_header(file: &str) -> bool {
    file.contains('/') || [".h", ".hpp", ".cuh", ".hh", ".inl"].iter().any(|e| file.ends_with(e))
}

/// Where every config that computed a wrong output differs from the reference in only a few
/// elements of one output (at most 1,000, and at most one in 100,000: pnpoly's points on the
/// polygon's edge), what allowing them would take (`verify.mismatches`), from the configs'
/// `messages` ([`Mismatch::message`]'s words); `None` otherwise, or where a message is of
/// another kind (a sum, a sorted comparison, another length).
pub fn few_mismatches<'a>(messages: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let (mut name, mut most, mut of) = (None::<&str>, 0u64, 0u64);
    for m in messages {
        // A NaN or an infinity where the reference is finite is no tie and no edge.
        if Mismatch::nonfinite_in(m) {
            return None;
        }
        let (o, bad, n) = Mismatch::counts_in(m)?;
        if *name.get_or_insert(o) != o {
            return None;
        }
        (most, of) = (most.max(bad), of.max(n));
    }
    let name = name?;
    (most <= 1000 && most.saturating_mul(100_000) <= of).then(|| {
        format!(
            "the configs that computed a wrong output differ from the reference in at most {most} of the {of} elements of `{name}`: if so few may differ between correct configs (a tie broken another way, a point on an edge), allow them (verify.mismatches = {{ {name} = {most} }}, --mismatches {name}={most}); else those configs are wrong"
        )
    })
}

/// Where configs computed NaN or infinity where the reference is finite (the comparison's
/// `messages` say so, [`Mismatch::nonfinite_in`]), what that points at: no tolerance or
/// allowance is the remedy. `None` where none did.
pub fn nonfinite_outputs<'a>(messages: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let (mut wrong, mut nonfinite) = (0usize, 0usize);
    for m in messages {
        wrong += 1;
        nonfinite += usize::from(Mismatch::nonfinite_in(m));
    }
    let which = match (nonfinite, wrong) {
        (0, _) => return None,
        (1, 1) => "the config that computed a wrong output wrote".to_string(),
        (n, w) if n == w => format!("all {n} configs that computed a wrong output wrote"),
        (1, w) => format!("1 of the {w} configs that computed a wrong output wrote"),
        (n, w) => format!("{n} of the {w} configs that computed a wrong output wrote"),
    };
    Some(format!(
        "{which} NaN or infinity where the reference is finite, which no tolerance covers: look in those configs for a division by zero, a square root or logarithm of a negative number, an overflow, or a value read before anything wrote it (shared memory, a local variable)"
    ))
}

/// The most input bytes [`inputs_to_check`] reads back after the reference launch.
pub const MAX_CHECKED_INPUT_BYTES: usize = 256 << 20;

/// Which buffers (in argument order) the reference launch reads back besides the outputs it
/// compares, so that [`written_inputs`] can tell whether the kernel wrote one declared
/// read-only: every global-memory buffer with `access = "read"`, while their sizes together stay
/// within [`MAX_CHECKED_INPUT_BYTES`] (larger problems are not checked).
pub fn inputs_to_check<'a>(buffers: impl IntoIterator<Item = &'a HostBuffer>) -> Vec<bool> {
    let mut room = MAX_CHECKED_INPUT_BYTES;
    buffers
        .into_iter()
        .map(|b| {
            let take = b.access == Access::Read && !b.memory.is_constant() && !b.data.is_empty() && b.data.len() <= room;
            if take {
                room -= b.data.len();
            }
            take
        })
        .collect()
}

/// A buffer declared `access = "read"` that the reference launch wrote ([`written_inputs`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenInput {
    /// The buffer.
    pub name: String,
    /// How many of its elements differ from its initial data.
    pub changed: usize,
    /// Its elements.
    pub elements: usize,
}

impl WrittenInput {
    /// What the tune says of it, naming the reference `config` and what to change.
    pub fn line(&self, config: &Config) -> String {
        format!(
            "the reference config ({config}) writes `{}`, declared `access = \"read\"` (the default): {} of its {} elements changed. kerntune restores it before every verified launch but does not compare it; if it is an output (a kernel that works in place), declare it `access = \"readwrite\"` so that every config's is compared",
            self.name, self.changed, self.elements
        )
    }
}

/// After the reference launch: each buffer declared `access = "read"` whose contents read back
/// (`read`, in argument order, as [`crate::Backend::read_outputs`] gives them) differ from its
/// initial data (`initial`): the kernel writes it. kerntune restores such a buffer before every
/// verified launch, so nothing is measured wrong, but never compares it: an in-place output
/// declared read-only goes unverified. Buffers read back without their data are skipped. Run
/// where the launch ran (a device's thread), not in the tuner's loop: it compares up to
/// [`MAX_CHECKED_INPUT_BYTES`].
pub fn written_inputs<'a>(initial: impl IntoIterator<Item = &'a HostBuffer>, read: &[HostBuffer]) -> Vec<WrittenInput> {
    initial
        .into_iter()
        .zip(read)
        .filter(|(b, r)| b.access == Access::Read && !r.data.is_empty() && r.data.len() == b.data.len())
        .filter_map(|(b, r)| {
            let size = b.dtype.size().max(1);
            let changed = b.data.chunks(size).zip(r.data.chunks(size)).filter(|(x, y)| x != y).count();
            (changed > 0).then(|| WrittenInput { name: b.name.clone(), changed, elements: b.data.len() / size })
        })
        .collect()
}

/// How the message of a config whose compile ran past the compile timeout begins (a timeout
/// too, but of the compiler, not of a launch: [`timeouts`] leaves it out).
pub const COMPILE_TIMED_OUT: &str = "compile timed out";

/// Whether a failure is a compile that ran past the compile timeout.
pub fn is_compile_timeout(kind: FailureKind, message: &str) -> bool {
    kind == FailureKind::TimedOut && message.starts_with(COMPILE_TIMED_OUT)
}

/// What explains configs that timed out, one finding per line: how far the launch timeout is
/// above the slowest config measured (a kernel that never ends, or only a slow one), and the
/// parameter value that every timed-out config has and no measured config has, where one does.
pub fn timeouts<'a>(results: impl IntoIterator<Item = &'a ConfigResult>, names: &[&str], timeout: std::time::Duration) -> Vec<String> {
    let (mut late, mut measured) = (Vec::new(), Vec::new());
    for r in results.into_iter().filter(|r| !r.from_db) {
        match &r.outcome {
            ResultOutcome::Failed { kind: FailureKind::TimedOut, message } if !is_compile_timeout(FailureKind::TimedOut, message) => late.push(r),
            ResultOutcome::Measured { stats } => measured.push((r, stats.mean)),
            _ => {}
        }
    }
    if late.is_empty() {
        return Vec::new();
    }
    let limit = timeout.as_secs_f64();
    let mut out = Vec::new();
    let slowest = measured.iter().map(|m| m.1).fold(0.0, f64::max);
    out.push(if slowest > 0.0 && limit / slowest >= 100.0 {
        format!(
            "a launch did not end within the {limit} s limit ([bench] timeout), {:.0}× the slowest config measured ({:.3} ms): a kernel that never ends for these values is likelier than a slow one; if it is only slow, raise [bench] timeout (or --timeout)",
            limit / slowest,
            slowest * 1e3
        )
    } else if slowest > 0.0 {
        format!(
            "a launch did not end within the {limit} s limit ([bench] timeout), only {:.1}× the slowest config measured ({:.3} ms): these configs may be slow rather than stuck; raise [bench] timeout (or --timeout) to measure them",
            limit / slowest,
            slowest * 1e3
        )
    } else {
        format!("a launch did not end within the {limit} s limit ([bench] timeout) and no config was measured: if the kernel is only slow, raise [bench] timeout (or --timeout)")
    });
    let late: Vec<&Config> = late.iter().map(|r| &r.config).collect();
    let measured: Vec<&Config> = measured.iter().map(|m| &m.0.config).collect();
    out.extend(shared_finding(FailureKind::TimedOut, &late, &measured, names.iter().copied()));
    out
}

/// The parameter (the first of `names` that does) whose values every config of `failed` has and
/// no config of `measured` has, with those values in order: what a kind of failure shares that
/// the configs that ran lack. `None` with fewer than two failed configs (with one, any of its
/// values would do) or none measured.
pub fn shared_values<'a>(failed: &[&Config], measured: &[&Config], names: impl IntoIterator<Item = &'a str>) -> Option<(String, Vec<String>)> {
    if failed.len() < 2 || measured.is_empty() {
        return None;
    }
    names.into_iter().find_map(|p| {
        let t = distinct(failed, p);
        let m = distinct(measured, p);
        (t.is_disjoint(&m) && !t.is_empty()).then(|| (p.to_string(), sorted_values(t)))
    })
}

/// The values parameter `p` takes over `cs`, as text: each config's value hashed, and only the
/// distinct ones written out (a report's entry of 100,000 configs formatted every value, per
/// parameter and failure kind, into a tree of strings: 43 % of the report's time).
fn distinct(cs: &[&Config], p: &str) -> std::collections::BTreeSet<String> {
    let seen: rustc_hash::FxHashSet<&crate::spec::value::Value> = cs.iter().filter_map(|c| c.get(p)).collect();
    seen.into_iter().map(|v| v.to_string()).collect()
}

/// Values in numeric order (4 before 16), others by text.
fn sorted_values(values: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut t: Vec<String> = values.into_iter().collect();
    t.sort_by(|a, b| crate::spec::value::natural_cmp(a, b));
    t
}

/// Where no one parameter tells the `failed` configs from the `measured` ones ([`shared_values`]),
/// two or three that do together: each term a parameter and values of it that no measured config
/// has, covering at least two failed configs the terms before it left, and every failed config
/// covered — `between_method = 2 or 3` or `use_precomputed_slopes = 1`, two causes that one kind
/// of failure mixes. Each term with the failed configs it adds. Chosen greedily (the term that
/// covers most first; of equals, the parameter named first); `None` with fewer than four failed
/// configs or fewer than eight measured: with few measured, most values are ones no measured
/// config has (with the reference alone, every value but its own), and terms would say nothing.
pub fn shared_union(failed: &[&Config], measured: &[&Config], names: &[&str]) -> Option<Vec<(String, Vec<String>, usize)>> {
    const TERMS: usize = 3;
    const MEASURED: usize = 8;
    if failed.len() < 4 || measured.len() < MEASURED {
        return None;
    }
    let value = |c: &Config, p: &str| c.get(p).map(|v| v.to_string());
    // Per parameter, the values some failed config has and no measured config has.
    let pure: Vec<(&str, std::collections::BTreeSet<String>)> = names
        .iter()
        .map(|&p| {
            let m = distinct(measured, p);
            (p, distinct(failed, p).into_iter().filter(|v| !m.contains(v)).collect())
        })
        .filter(|(_, v): &(&str, std::collections::BTreeSet<String>)| !v.is_empty())
        .collect();
    let mut left: Vec<&Config> = failed.to_vec();
    let mut terms = Vec::new();
    while !left.is_empty() {
        if terms.len() == TERMS {
            return None;
        }
        let covers = |p: &str, vals: &std::collections::BTreeSet<String>, c: &Config| value(c, p).is_some_and(|v| vals.contains(&v));
        let (p, vals, n) = pure
            .iter()
            .enumerate()
            .filter(|(_, (p, _))| !terms.iter().any(|(t, _, _): &(String, Vec<String>, usize)| t == p))
            .map(|(i, (p, vals))| (i, *p, vals, left.iter().filter(|c| covers(p, vals, c)).count()))
            .max_by(|a, b| a.3.cmp(&b.3).then(b.0.cmp(&a.0)))
            .map(|(_, p, vals, n)| (p, vals, n))?;
        if n < 2 {
            return None;
        }
        let used = sorted_values(left.iter().filter(|c| covers(p, vals, c)).filter_map(|c| value(c, p)).collect::<std::collections::BTreeSet<_>>());
        left.retain(|c| !covers(p, vals, c));
        terms.push((p.to_string(), used, n));
    }
    (terms.len() >= 2).then_some(terms)
}

/// [`shared_values`] in words, for configs that failed with `kind`: `every config that timed
/// out has HANG = 1 (2 configs), and no config measured has it`; where no one parameter does,
/// [`shared_union`]'s terms: `every config that computed a wrong output has between_method = 2
/// or 3 (15 configs) or use_precomputed_slopes = 1 (7 more), and no config measured has these
/// values`.
pub fn shared_finding<'a>(kind: FailureKind, failed: &[&Config], measured: &[&Config], names: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let names: Vec<&str> = names.into_iter().collect();
    let (what, count, tail) = match shared_values(failed, measured, names.iter().copied()) {
        Some((name, values)) => (format!("{name} = {}", values.join(" or ")), format!(" ({} configs)", failed.len()), "it"),
        None => {
            let terms = shared_union(failed, measured, &names)?;
            let words: Vec<String> = terms
                .iter()
                .enumerate()
                .map(|(i, (name, values, n))| format!("{name} = {} ({n} {})", values.join(" or "), if i == 0 { "configs" } else { "more" }))
                .collect();
            (words.join(" or "), String::new(), "these values")
        }
    };
    let did = match kind {
        FailureKind::TimedOut => "timed out",
        FailureKind::CompileFailed => "failed to compile",
        FailureKind::LaunchFailed => "failed to launch",
        FailureKind::OutOfResources => "ran out of resources",
        FailureKind::WrongOutput => "computed a wrong output",
        FailureKind::DeviceLost => "lost the device",
        FailureKind::Other => "failed for another reason",
    };
    Some(format!("{SHARED} {did} has {what}{count}, and no config measured has {tail}"))
}

/// Adds to the first cause of each kind (the most frequent) what every config of that kind
/// shares that no config measured has ([`shared_finding`]), where a parameter tells them apart:
/// `every config that failed to compile has USE_SHFL = 1 (12 configs), and no config measured
/// has it` — unless a cause of the kind holds that line already ([`timeouts`] makes it for
/// timeouts, and gives it to each). `failed` holds every failed config with its kind; `names`
/// are the parameters that vary, in the space's order.
pub fn add_shared_findings(causes: &mut [Cause], failed: &[(&Config, FailureKind)], measured: &[&Config], names: &[&str]) {
    let mut kinds: Vec<FailureKind> = causes.iter().map(|c| c.kind).collect();
    kinds.sort();
    kinds.dedup();
    for kind in kinds {
        let same: Vec<&Config> = failed.iter().filter(|f| f.1 == kind).map(|f| f.0).collect();
        let Some(line) = shared_finding(kind, &same, measured, names.iter().copied()) else { continue };
        if causes.iter().any(|c| c.kind == kind && c.diagnosis.contains(&line)) {
            continue;
        }
        if let Some(first) = causes.iter_mut().find(|c| c.kind == kind) {
            first.diagnosis.push(line);
        }
    }
}

/// The parameters that take more than one value over `configs`, in the first config's order
/// (what [`add_shared_findings`] looks at, where the space's declaration is not at hand: a
/// database entry's records).
pub fn varying<'c>(configs: &[&'c Config]) -> Vec<&'c str> {
    let Some(first) = configs.first() else { return Vec::new() };
    first.params.iter().map(|(n, _)| n.as_str()).filter(|n| configs.iter().any(|c| c.get(n) != first.get(n))).collect()
}

/// Which buffers a launch could read or write past (see the module docs), one finding per line.
pub fn buffer_extents(prep: &Prepared, config: &Config, launch: &Launch) -> Vec<String> {
    let mut out = Vec::new();
    let buffers: Vec<(&str, u64, Access)> = prep.data.buffers().map(|b| (b.name.as_str(), b.len() as u64, b.access)).collect();
    let dims = |v: [u64; 3]| v.iter().copied().filter(|&x| x > 1).map(|x| x.to_string()).collect::<Vec<_>>().join("×");
    if let Some((size, covered)) = prep.extent(config, launch) {
        let n: u64 = size.iter().product();
        let c: u64 = covered.iter().product();
        if c > n {
            let short: Vec<String> = buffers.iter().filter(|b| b.1 < c).map(|b| format!("`{}` ({} elements)", b.0, b.1)).collect();
            if !short.is_empty() {
                out.push(format!(
                    "the grid covers {} = {c} elements, {} more than the problem's {} = {n}: a kernel that does not check its bounds indexes past the end of {}",
                    dims(covered),
                    c - n,
                    dims(size),
                    short.join(", ")
                ));
            }
        }
        for (name, len, access) in &buffers {
            if *len < n {
                out.push(format!("`{name}` holds {len} elements, fewer than the problem's {} = {n}: it is read or written past its end unless the kernel indexes it some other way", dims(size)));
            } else if *len == n && *access != Access::Write && size.iter().filter(|&&x| x > 1).count() >= 2 {
                out.push(format!(
                    "`{name}` holds exactly the problem's {} = {n} elements: a kernel that reads neighbours around each point (a stencil's halo) reads past its edges; size it for the halo",
                    dims(size)
                ));
            }
        }
    } else {
        let threads = launch.blocks() * launch.threads() as u64;
        // One line per length: buffers of one length are named together.
        let mut lens: Vec<u64> = buffers.iter().map(|b| b.1).filter(|&l| l < threads).collect();
        lens.sort_unstable();
        lens.dedup();
        for len in lens {
            let names: Vec<String> = buffers.iter().filter(|b| b.1 == len).map(|b| format!("`{}`", b.0)).collect();
            let (names, verb, them) = match names.as_slice() {
                [one] => (one.clone(), "holds", "it"),
                [init @ .., last] => (format!("{} and {last}", init.join(", ")), "each hold", "them"),
                [] => continue,
            };
            out.push(format!(
                "the launch runs {threads} threads ({}×{}×{} blocks of {}×{}×{}) and {names} {verb} {len} elements: threads past {len} index out of {them} unless the kernel checks its bounds",
                launch.grid[0], launch.grid[1], launch.grid[2], launch.block[0], launch.block[1], launch.block[2]
            ));
        }
    }
    out
}

/// The memory checker's report with the allocation it names matched to a buffer by size.
pub fn name_allocation(report: &str, prep: &Prepared) -> String {
    let mut out = report.to_string();
    if let Some(at) = report.find("allocation") {
        let after = &report[at..];
        if let Some(size_at) = after.find("of size ") {
            let digits: String = after[size_at + 8..].chars().take_while(|c| c.is_ascii_digit() || *c == ',').filter(|c| c.is_ascii_digit()).collect();
            if let Ok(bytes) = digits.parse::<u64>() {
                let sized: Vec<&crate::spec::problem::HostBuffer> = prep.data.buffers().filter(|b| b.data.len() as u64 == bytes).collect();
                // Several buffers of that size: a read past one the kernel only writes (or a
                // write past one it only reads) is the less likely.
                let lower = report.to_ascii_lowercase();
                let (reads, writes) = (lower.contains(" read of "), lower.contains(" write of "));
                let fitting: Vec<&crate::spec::problem::HostBuffer> =
                    sized.iter().copied().filter(|b| !(reads && b.access == Access::Write || writes && b.access == Access::Read)).collect();
                let list = |v: &[&crate::spec::problem::HostBuffer]| v.iter().map(|b| format!("`{}`", b.name)).collect::<Vec<_>>().join(", ");
                match (sized.len(), fitting.len()) {
                    (1, _) => out.push_str(&format!(" (the allocation of {bytes} bytes is buffer `{}`)", sized[0].name)),
                    (n, 1) if n > 1 => out.push_str(&format!(
                        " (the allocation of {bytes} bytes is buffer `{}`: of the buffers that size ({}), the only one the kernel {})",
                        fitting[0].name,
                        list(&sized),
                        if reads { "reads" } else { "writes" }
                    )),
                    (n, _) if n > 1 => out.push_str(&format!(" (allocations of {bytes} bytes: buffers {})", list(&sized))),
                    _ => {}
                }
            }
        }
    }
    out
}

/// The one message of a tune where no config passed: the count per cause, the first causes
/// with an example and their diagnosis.
pub fn nothing_passed<'a>(results: impl IntoIterator<Item = &'a ConfigResult>, causes: &[Cause]) -> String {
    let results: Vec<&ConfigResult> = results.into_iter().collect();
    let failed: Vec<&ConfigResult> = results.iter().copied().filter(|r| matches!(r.outcome, ResultOutcome::Failed { .. })).collect();
    let local;
    let causes = if causes.is_empty() {
        local = group(failed.iter().copied());
        &local
    } else {
        causes
    };
    let n = results.len();
    if let [only] = causes {
        if only.count == n {
            let verb = match only.kind {
                FailureKind::CompileFailed => "failed to compile",
                FailureKind::LaunchFailed => "failed to launch",
                FailureKind::OutOfResources => "ran out of resources",
                FailureKind::TimedOut => "timed out",
                FailureKind::WrongOutput => "gave the wrong output",
                FailureKind::DeviceLost => "faulted",
                FailureKind::Other => "failed",
            };
            let diag = if only.diagnosis.is_empty() { String::new() } else { format!("; {}", only.diagnosis.join("; ")) };
            return format!("all {n} configs {verb}: {} (e.g. {}){diag}", only.message, only.example);
        }
    }
    let parts: Vec<String> = causes
        .iter()
        .take(3)
        .map(|c| {
            let diag = if c.diagnosis.is_empty() { String::new() } else { format!("; {}", c.diagnosis.join("; ")) };
            format!("{} × {}: {} (e.g. {}){diag}", c.count, c.kind, c.message, c.example)
        })
        .collect();
    let more = if causes.len() > 3 { format!("; and {} more cause(s)", causes.len() - 3) } else { String::new() };
    format!("none of the {n} evaluated configs passed: {}{more}", parts.join("; "))
}

/// What to do where parameter `p` changes the output by design (the disagreement's advice).
fn by_design(p: &str) -> String {
    format!(
        "if `{p}` changes the output by design, verify against expected outputs (verify.expected, --reference NAME=FILE) or without a reference (verify.reference = \"none\", --reference none)"
    )
}

/// The output a comparison's message names first (`` `partial`: … ``).
fn output_named(message: &str) -> Option<&str> {
    message.split('`').nth(1)
}

/// Most of the verified configs disagree with the reference: what tells them apart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Disagreement {
    /// Configs whose outputs were compared.
    pub verified: usize,
    /// Of those, the ones that disagreed.
    pub disagreed: usize,
    /// The parameter whose values best predict agreement, with the values whose configs
    /// agreed and those whose configs did not (by majority), and how many configs that rule
    /// classifies right.
    pub parameter: Option<(String, Vec<String>, Vec<String>, usize)>,
    /// The largest relative error among the disagreeing configs, where every one stated it.
    pub largest_relative_error: Option<f64>,
    /// What to do, in one sentence.
    pub advice: String,
    /// Whether the reference, a config's outputs (the default's or the first valid one's), is
    /// the likelier culprit: the configs that disagree (three or more, most of those verified)
    /// all differ from it alike, so their outputs agree with each other. The winner is then one
    /// of the few that agree with a reference that is probably wrong, and the tune does not
    /// store it. A CPU reference or expected outputs are the user's word: never in doubt here.
    pub reference_suspect: bool,
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} of the {} verified configs disagree with the reference", self.disagreed, self.verified)?;
        if let Some((p, agree, differ, right)) = &self.parameter {
            write!(f, "; `{p}` tells them apart ({right} of {} configs: {p} = {} agree, {p} = {} do not)", self.verified, agree.join(", "), differ.join(", "))?;
        }
        write!(f, ": {}", self.advice)
    }
}

/// The disagreement analysis of the module docs; `None` when at most half disagree.
pub fn disagreement<'a>(results: impl IntoIterator<Item = &'a ConfigResult>, params: &[Param], verify: &Verification) -> Option<Disagreement> {
    // Stored measurements count too (the database reuses them only under the same
    // verification): a tune that continues an entry whose configs mostly disagreed is told so
    // again, and does not store the winner the first one withheld.
    let compared: Vec<(&ConfigResult, bool)> = results
        .into_iter()
        .filter_map(|r| match &r.outcome {
            ResultOutcome::Measured { .. } if r.verified => Some((r, true)),
            ResultOutcome::Failed { kind: FailureKind::WrongOutput, .. } => Some((r, false)),
            _ => None,
        })
        .collect();
    let disagreed = compared.iter().filter(|c| !c.1).count();
    if compared.len() < 2 || disagreed * 2 <= compared.len() {
        return None;
    }
    // For each parameter: predict each config's verdict by the majority verdict of its value.
    let mut best: Option<(String, Vec<String>, Vec<String>, usize)> = None;
    for p in params.iter().filter(|p| p.values.len() > 1) {
        let mut tally: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for (r, ok) in &compared {
            let v = r.config.get(&p.name).map(|v| v.to_string()).unwrap_or_default();
            let t = tally.entry(v).or_default();
            if *ok {
                t.0 += 1
            } else {
                t.1 += 1
            }
        }
        if tally.len() < 2 {
            continue;
        }
        let right: usize = tally.values().map(|(a, d)| (*a).max(*d)).sum();
        // In numeric order (64, 128, 256; not the strings' 128, 256, 64), as the shared values are.
        let agree = sorted_values(tally.iter().filter(|(_, (a, d))| a > d).map(|(v, _)| v.clone()));
        let differ = sorted_values(tally.iter().filter(|(_, (a, d))| a <= d).map(|(v, _)| v.clone()));
        if agree.is_empty() {
            continue;
        }
        if best.as_ref().is_none_or(|b| right > b.3) {
            best = Some((p.name.clone(), agree, differ, right));
        }
    }
    // A parameter is named only when it explains the verdicts better than "all disagree".
    let parameter = best.filter(|b| b.3 > disagreed);
    // What the comparison said of each config that disagreed (each one a wrong output).
    let messages: Vec<&str> = compared
        .iter()
        .filter(|c| !c.1)
        .filter_map(|c| match &c.0.outcome {
            ResultOutcome::Failed { message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    let rel: Vec<Option<f64>> = messages.iter().map(|m| if Mismatch::unwritten_in(m) { None } else { Mismatch::largest_relative(m) }).collect();
    let largest_relative_error = rel.iter().copied().collect::<Option<Vec<f64>>>().and_then(|v| v.into_iter().reduce(f64::max));
    // Configs that left elements unwritten where the reference wrote them (or the reverse) write
    // a number of results that depends on a parameter: partial results, compared by their sum.
    let partial = messages
        .iter()
        .filter(|m| Mismatch::unwritten_in(m) || Mismatch::written_beyond(m))
        .filter_map(|m| output_named(m))
        .find(|o| verify.compare_of(o).is_none());
    // Configs whose output agrees with the reference's once sorted: the same values in another
    // order (the element comparison says so).
    let reordered: Vec<&str> = messages.iter().filter(|m| m.contains(crate::measure::verify::SORTED_AGREE)).filter_map(|m| output_named(m)).collect();
    // Three or more that disagree, each saying the same of the reference (up to rounding: a
    // sum in another order): the same outputs.
    let alike = disagreed >= 3 && messages.len() == disagreed && messages.iter().all(|m| Mismatch::alike(messages[0], m));
    // Alike, and the configs that disagree agree with each other ten times more closely than
    // with the reference: the reference is the odd one out, even where the difference is small
    // enough to be rounding (a default that adds 1 to a sum of 1120). Read from the sums, or
    // from the first element that differs.
    let odd_one_out = alike.then(|| odd_reference(&messages)).flatten();
    let mut reference_suspect = false;
    let advice = match (&parameter, largest_relative_error, &partial) {
        _ if !reordered.is_empty() => {
            let o = reordered[0];
            let which = if reordered.len() == disagreed { "they write".to_string() } else { format!("{} of them write", reordered.len()) };
            format!(
                "{which} the values of `{o}` that the reference does, in another order: if the order does not matter (a compaction through atomics, say), compare sorted (verify.compare = {{ {o} = \"sorted\" }}, --compare {o}=sorted); else those configs are wrong"
            )
        }
        (_, Some(e), _) if e < 1e-2 && e > verify.tolerance.rtol => {
            let mut advice = format!(
                "every difference is below {:.1e} relative: if that is rounding (a different summation order), loosen the tolerance, e.g. verify.rtol = {:.0e} (--rtol {:.0e})",
                e,
                (e * 2.0).max(1e-6),
                (e * 2.0).max(1e-6)
            );
            if let Some((spread, distance)) = odd_one_out.filter(|_| matches!(verify.reference, Reference::DefaultConfig | Reference::FirstValid)) {
                advice += &format!(
                    "; but the {disagreed} that disagree agree with each other within {spread:.1e} relative, ten times closer than to the reference ({distance:.1e}): if that is not rounding, the reference (a config's outputs) is the wrong one, and the winner {}: check it against a CPU reference or expected outputs (verify.expected, --reference NAME=FILE){}",
                    agreeing(compared.len() - disagreed),
                    if another_config_helps(&verify.reference) { ", or take another config's outputs (--reference first-valid)" } else { "" }
                );
            }
            advice
        }
        (_, _, Some(o)) => {
            let by = parameter.as_ref().map_or("a parameter".to_string(), |(p, ..)| format!("`{p}`"));
            format!(
                "configs write different elements of `{o}` than the reference: if they are partial results whose number depends on {by} (a partial sum per block, say), compare their sums (verify.compare = {{ {o} = \"sum\" }}, --compare {o}=sum); else give expected outputs (verify.expected, --reference NAME=FILE) or a CPU reference"
            )
        }
        // Every config that disagrees says the same of the reference (the same elements
        // differ, first at the same one, by the same values): their outputs agree with each
        // other, and they are most of the verified configs. The reference is the odd one out:
        // a published default that computes wrongly, which every right config then "failed".
        _ if alike => {
            // A config's outputs as the reference are what is in doubt; a CPU function or
            // expected outputs are the user's word, and the winner that agrees with them stays.
            reference_suspect = matches!(verify.reference, Reference::DefaultConfig | Reference::FirstValid);
            let whose = match &verify.reference {
                Reference::DefaultConfig => "the reference (the default config's outputs, else the first valid config's)",
                Reference::FirstValid => "the reference (the first valid config's outputs)",
                Reference::Host(..) => "the CPU reference",
                _ => "the reference",
            };
            let agreed = compared.len() - disagreed;
            // A parameter that changes the output by design looks the same from here.
            let (design, only) = match &parameter {
                Some((p, agree, ..)) => (format!("{}; if not, ", by_design(p)), format!(" (only the configs with `{p}` = {} agree with it)", agree.join(", "))),
                None => (String::new(), String::new()),
            };
            let other = if another_config_helps(&verify.reference) { ", or take another config's outputs (--reference first-valid)" } else { "" };
            format!(
                "the {disagreed} that disagree differ from it alike (the same elements, by the same values up to rounding), so their outputs agree with each other: {design}{whose} is more likely the wrong one{only}, and the winner is {}: check it against a CPU reference or expected outputs (verify.expected, --reference NAME=FILE){other} and tune again",
                agreeing(agreed)
            )
        }
        (Some((p, _, _, _)), _, _) => format!("{}; else the configs with the values that disagree are wrong", by_design(p)),
        // A CPU function or expected outputs are the user's word, not a config's outputs: the
        // kernel and they may compute different things, or the configs are wrong.
        (None, _, _) => match &verify.reference {
            Reference::Host(name, _) => format!(
                "the CPU reference (cpu:{name}) and the kernel may not compute the same thing: check the arguments it reads (by name) and the outputs compared; else {}",
                majority_wrong(disagreed, compared.len())
            ),
            Reference::Expected(_) => format!(
                "the expected outputs may not be this problem's: check that they were made from the same inputs (seeds, sizes) and name the outputs compared; else {}",
                majority_wrong(disagreed, compared.len())
            ),
            _ => "the reference itself may be wrong (it is the output of one config): give expected outputs (verify.expected, --reference NAME=FILE) or a CPU reference, or turn verification off with --reference none".into(),
        },
    };
    Some(Disagreement { verified: compared.len(), disagreed, parameter, largest_relative_error, advice, reference_suspect })
}

/// The configs that disagree with a reference the user gave, in words, as the ones in error.
fn majority_wrong(disagreed: usize, verified: usize) -> String {
    if disagreed == verified {
        "every config verified is wrong".into()
    } else {
        format!("the {disagreed} that disagree are wrong, and nothing in their parameters tells them from the {} that agree", verified - disagreed)
    }
}

/// The configs that agree with a reference in doubt, in words: `the one config that agrees with
/// it`, `one of the 5 configs that agree with it`.
pub(crate) fn agreeing(n: usize) -> String {
    if n == 1 {
        "the one config that agrees with it".into()
    } else {
        format!("one of the {n} configs that agree with it")
    }
}

/// Whether another config's outputs (`--reference first-valid`) can stand in for a config's
/// outputs as `reference`: not when the first valid config's are the reference already.
pub(crate) fn another_config_helps(reference: &Reference) -> bool {
    !matches!(reference, Reference::FirstValid)
}

/// How far apart the values that configs disagreeing alike got are (their spread, relative),
/// and how far they are from the reference's (relative), when the first is at most a tenth of
/// the second: the sums of outputs compared by their sum, else the first element that differs.
/// `None` when the messages state no such value, or the configs are not that close together.
fn odd_reference(messages: &[&str]) -> Option<(f64, f64)> {
    let values: Vec<(f64, f64)> = messages
        .iter()
        .map(|m| Mismatch::sum_in(m).map(|(_, got, want)| (got, want)).or_else(|| Mismatch::first_in(m).map(|(_, got, want)| (got, want))))
        .collect::<Option<_>>()?;
    let want = values.first()?.1;
    let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v.0), hi.max(v.0)));
    let mean = values.iter().map(|v| v.0).sum::<f64>() / values.len() as f64;
    let scale = want.abs().max(mean.abs());
    if !(scale > 0.0 && scale.is_finite()) {
        return None;
    }
    let (spread, distance) = ((hi - lo) / scale, (mean - want).abs() / scale);
    (distance > 0.0 && spread * 10.0 <= distance).then_some((spread, distance))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::Stats;

    /// A naga diagnostic's cause keeps the source line its location points at (an injected
    /// constant that is no WGSL expression), not the bare gutter line before it; other
    /// compilers' logs keep their first three lines.
    #[test]
    fn a_wgsl_compile_error_keeps_the_line_it_points_at() {
        let naga = "./bad.wgsl (its directives, or the injected constants):\nShader 'triad' parsing error: Unexpected runtime-expression\n  ┌─ wgsl:1:28\n  │\n1 │ const BOGUS_CONST_FOR_WG = x;\n  │                            ^ see msg\n\n\n";
        assert_eq!(
            first_lines(naga),
            "./bad.wgsl (its directives, or the injected constants): | Shader 'triad' parsing error: Unexpected runtime-expression | ┌─ wgsl:1:28 | 1 │ const BOGUS_CONST_FOR_WG = x;"
        );
        let nvrtc = "kernel.cu(12): error: identifier \"x\" is undefined\n\n1 error detected in the compilation of \"kernel.cu\".\nmore\n";
        assert_eq!(first_lines(nvrtc), "kernel.cu(12): error: identifier \"x\" is undefined | 1 error detected in the compilation of \"kernel.cu\". | more");
    }

    /// After the reference launch, a buffer declared read-only that the kernel wrote is named
    /// with how many elements changed and what to declare; unchanged ones, outputs and buffers
    /// read back without data are not; the inputs read back stay within the size bound.
    #[test]
    fn an_input_the_kernel_writes_is_named() {
        use crate::spec::problem::{DType, Memory};
        let buf = |name: &str, access, data: Vec<u8>| HostBuffer { name: name.into(), dtype: DType::F32, data, access, memory: Memory::Global };
        let initial = [
            buf("img", Access::Read, vec![0; 16]),
            buf("w", Access::Read, vec![1; 16]),
            buf("out", Access::Write, vec![0; 16]),
            buf("big", Access::Read, vec![2; 8]),
        ];
        let mut written = vec![0u8; 16];
        written[4] = 9; // element 1
        written[15] = 9; // element 3
        let read =
            [buf("img", Access::Read, written), buf("w", Access::Read, vec![1; 16]), buf("out", Access::Write, vec![7; 16]), buf("big", Access::Read, vec![])];
        let config = Config::new([("WG", 64)]);
        let lines: Vec<String> = written_inputs(&initial, &read).iter().map(|w| w.line(&config)).collect();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("the reference config (WG=64) writes `img`, declared `access = \"read\"` (the default): 2 of its 4 elements changed."),
            "{}",
            lines[0]
        );
        assert!(lines[0].ends_with("declare it `access = \"readwrite\"` so that every config's is compared"), "{}", lines[0]);
        assert_eq!(inputs_to_check(&initial), vec![true, true, false, true]);
        let huge = buf("huge", Access::Read, vec![0; MAX_CHECKED_INPUT_BYTES]);
        assert_eq!(inputs_to_check([&initial[0], &huge]), vec![true, false], "within the bound");
        let constant = HostBuffer { memory: Memory::Constant { argument: false }, ..initial[0].clone() };
        assert_eq!(inputs_to_check([&constant]), vec![false]);
    }

    #[test]
    fn the_checkers_allocation_is_named_by_size_and_access() {
        let mut j = crate::spec::job::TuneJob::new(crate::spec::source::KernelSource::new("k", "fake", ""), vec![Param::new("b", [1])]);
        j.sizes = vec![("n".into(), crate::spec::value::Value::Int(16))];
        let buf = |name: &str, access| crate::spec::job::ArgSpec {
            name: name.into(),
            kind: crate::spec::job::ArgKind::Buffer {
                dtype: crate::spec::problem::DType::F32,
                len: "n".into(),
                init: crate::spec::problem::Init::Zeros,
                access,
                memory: crate::spec::problem::Memory::Global,
            },
        };
        j.args = vec![buf("out", Access::Write), buf("in", Access::Read)];
        let prep = Prepared::new(&j).unwrap();
        let read = "Invalid __global__ read of size 4 bytes; and is 4 bytes after the nearest allocation at 0x7f00 of size 64 bytes";
        assert!(
            name_allocation(read, &prep)
                .ends_with("(the allocation of 64 bytes is buffer `in`: of the buffers that size (`out`, `in`), the only one the kernel reads)"),
            "{}",
            name_allocation(read, &prep)
        );
        let write = read.replace(" read of ", " write of ");
        assert!(name_allocation(&write, &prep).contains("is buffer `out`"));
        assert_eq!(name_allocation("no allocation named", &prep), "no allocation named");
    }

    fn r(key: &[(&str, i64)], outcome: ResultOutcome) -> ConfigResult {
        ConfigResult {
            config: Config::new(key.iter().map(|(k, v)| (k.to_string(), *v))),
            outcome,
            usage: None,
            from_db: false,
            flops: None,
            bytes: None,
            compile_seconds: None,
            eval_seconds: None,
            device: None,
            seq: None,
            elapsed_s: None,
            verified: true,
            proposed_by: None,
            spans: Vec::new(),
        }
    }

    fn failed(kind: FailureKind, m: &str) -> ResultOutcome {
        ResultOutcome::Failed { kind, message: m.into() }
    }

    fn ok() -> ResultOutcome {
        ResultOutcome::Measured { stats: Stats::from_samples(&[1e-3, 1e-3], false) }
    }

    #[test]
    fn failures_group_by_cause_with_numbers_masked() {
        let res = vec![
            r(&[("a", 1)], failed(FailureKind::DeviceLost, "CUDA_ERROR_ILLEGAL_ADDRESS at 0x7f3a00001000 in launch 17")),
            r(&[("a", 2)], failed(FailureKind::DeviceLost, "CUDA_ERROR_ILLEGAL_ADDRESS at 0x7f3a00002000 in launch 3")),
            r(&[("a", 3)], failed(FailureKind::WrongOutput, "`y`: 12 of 100 elements differ (first at index 4: got 1, expected 2)")),
            r(&[("a", 4)], ok()),
        ];
        let g = group(&res);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].kind, g[0].count, g[0].example.key()), (FailureKind::DeviceLost, 2, "a=1".to_string()));
        assert!(g[0].is_memory_fault());
        assert_eq!(g[1].pattern, "`y`: # of # elements differ (first at index #: got #, expected #)");
        let m = nothing_passed(&res[..2], &[]);
        assert!(m.starts_with("all 2 configs faulted: CUDA_ERROR_ILLEGAL_ADDRESS"), "{m}");
        let m = nothing_passed(&res[..3], &[]);
        assert!(m.starts_with("none of the 3 evaluated configs passed: 2 × device lost:"), "{m}");
    }

    /// A kernel's failed assertion over parameters only is the restriction the spec lacks,
    /// where it tells the configs that failed so from those measured; other assertions say
    /// nothing more. Configs that failed it are one cause, whether or not what the kernel
    /// printed before was read in time.
    #[test]
    fn a_failed_assertion_over_parameters_is_offered_as_a_restriction() {
        let cuda = |t: i64| {
            format!("CUDA_ERROR_ASSERT: device-side assert triggered; a device-side assertion in the kernel failed (256 lines on standard error), the first: `triad.cu:27: triad: block: [{t},0,0], thread: [960,0,0] Assertion `WG * PT <= 1024 && !(PT == 3)` failed.`")
        };
        assert_eq!(assertion_of(&cuda(1)), Some("WG * PT <= 1024 && !(PT == 3)"));
        assert_eq!(assertion_of("k.cpp:3: k: Device-side assertion `n > WG' failed."), Some("n > WG"));
        assert_eq!(assertion_of("CUDA_ERROR_ILLEGAL_ADDRESS"), None);
        assert_eq!(c_condition("WG * PT <= 1024 && !(PT == 3) || x != 2").as_deref(), Some("WG * PT <= 1024 and not (PT == 3) or x != 2"));
        assert_eq!(c_condition("n < s.size && k ? 1 : 0"), None);
        let res = vec![
            r(&[("PT", 2), ("WG", 1024)], failed(FailureKind::DeviceLost, &cuda(125))),
            // What the kernel printed before it failed, read in time for this config's failure
            // and not for the other's: the same cause (on an H200, one run in four).
            r(
                &[("PT", 4), ("WG", 512)],
                failed(
                    FailureKind::DeviceLost,
                    &format!("{}{PRINTED_BEFORE}1 line (47 B) to standard output (kept out of kerntune's): `triad: n = 1048576`", cuda(48)),
                ),
            ),
            r(&[("PT", 1), ("WG", 1024)], ok()),
            r(&[("PT", 2), ("WG", 256)], ok()),
            r(&[("PT", 4), ("WG", 32)], failed(FailureKind::TimedOut, "timed out after 5.000 s")),
        ];
        let causes = group(&res);
        assert_eq!((causes[0].kind, causes[0].count), (FailureKind::DeviceLost, 2), "{causes:?}");
        // One line of the assertion read before the failure, or several: one cause (on an H200,
        // `1 line on standard error` beside `256 lines` made two).
        let one_line = cuda(3).replace("(256 lines on", "(1 line on");
        assert_eq!(pattern(&one_line), pattern(&cuda(5)));
        assert_ne!(pattern(&one_line), pattern(&one_line.replace("standard error", "standard output")));
        let line = assertion_restriction(&causes[0], &res, &["WG", "PT"]).unwrap();
        assert!(line.starts_with("the assertion `WG * PT <= 1024 && !(PT == 3)` names only parameters, and is false in every config that failed so (2) and true in every config measured (2): make it a restriction of the spec ([space] restrictions = [\"WG * PT <= 1024 and not (PT == 3)\"])"), "{line}");
        // A measured config it does not hold in (it depends on more than the parameters), a
        // name that is not a parameter, a condition a spec cannot write: nothing.
        let mut more = res.clone();
        more.push(r(&[("PT", 8), ("WG", 1024)], ok()));
        assert_eq!(assertion_restriction(&causes[0], &more, &["WG", "PT"]), None);
        assert_eq!(assertion_restriction(&causes[0], &res, &["WG"]), None);
        let other = group(&[r(&[("PT", 2)], failed(FailureKind::DeviceLost, "… Assertion `p->n > 0` failed."))]);
        assert_eq!(assertion_restriction(&other[0], &res, &["PT"]), None);
    }

    /// A compile error's cause is the compiler's log, not the options line every config has its
    /// own of.
    #[test]
    fn a_compile_errors_cause_is_the_compilers_log() {
        let e = crate::error::BackendError::CompileFailed {
            log: "faults.cu(19): error: \"this\" may only be used inside a nonstatic member function".into(),
            options: vec!["-DFAULT=1".into()],
        };
        let (a, b) = (Config::new([("FAULT", 1i64), ("WG", 128)]), Config::new([("FAULT", 1i64), ("WG", 256)]));
        let other = e.to_string().replace("-DFAULT=1", "-DFAULT=1 -DWG=256");
        let g = group_failures([(&a, FailureKind::CompileFailed, e.to_string().as_str()), (&b, FailureKind::CompileFailed, other.as_str())]);
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!(g[0].message, "faults.cu(19): error: \"this\" may only be used inside a nonstatic member function");
    }

    /// Two causes mixed in one kind, as in Kernel Tuner's pnpoly kernel: configs with
    /// between_method 2 or 3 count a point on a vertex's height as between, and configs that
    /// read precomputed slopes disagree in a few points; no one parameter tells all of them from
    /// the configs measured, two together do.
    #[test]
    fn failures_that_two_parameters_explain_together() {
        let c = |b: i64, s: i64, bs: i64| Config::new([("bs", bs), ("between", b), ("slopes", s)]);
        let failed = [c(2, 0, 32), c(3, 0, 64), c(2, 0, 128), c(3, 1, 32), c(0, 1, 64), c(1, 1, 128), c(0, 1, 32)];
        let measured = [c(0, 0, 32), c(1, 0, 64), c(0, 0, 128), c(1, 0, 32), c(0, 0, 64), c(1, 0, 128), c(1, 0, 256), c(0, 0, 256)];
        let (f, m): (Vec<&Config>, Vec<&Config>) = (failed.iter().collect(), measured.iter().collect());
        let names = ["bs", "between", "slopes"];
        assert_eq!(shared_values(&f, &m, names), None);
        // Each covers four; of equals, the parameter named first.
        assert_eq!(shared_union(&f, &m, &names), Some(vec![("between".into(), vec!["2".into(), "3".into()], 4), ("slopes".into(), vec!["1".into()], 3)]));
        assert_eq!(
            shared_finding(FailureKind::WrongOutput, &f, &m, names).unwrap(),
            "every config that computed a wrong output has between = 2 or 3 (4 configs) or slopes = 1 (3 more), and no config measured has these values"
        );
        // A config no term covers (between 1, slopes 0, a block size measured too): nothing said.
        let stray = c(1, 0, 64);
        let with_stray: Vec<&Config> = f.iter().copied().chain([&stray]).collect();
        assert_eq!(shared_union(&with_stray, &m, &names), None);
        // A term must cover two configs: one odd config is not explained by its own value.
        let odd = c(1, 0, 512);
        let with_odd: Vec<&Config> = f.iter().copied().chain([&odd]).collect();
        assert_eq!(shared_union(&with_odd, &m, &names), None);
        // Too few to tell: three failed configs, or the reference alone measured (Kernel
        // Tuner's ExpDist, whose configs write as many partial costs as they launch blocks:
        // every value but the reference's is one no measured config has).
        assert_eq!(shared_union(&f[..3], &m, &names), None);
        assert_eq!(shared_union(&f, &m[..7], &names), None);
    }

    /// Few differing elements in every wrong output suggest an allowance; many, another
    /// output, a sum's message, or none do not.
    #[test]
    fn a_few_differing_elements_suggest_an_allowance() {
        let m = |bad: u64| format!("`bitmap`: {bad} of 20000000 elements differ (first at index 3757520: got 1, expected 0)");
        let line = few_mismatches([m(4).as_str(), &format!("wrong output: {}", m(5))]).unwrap();
        assert!(
            line.starts_with("the configs that computed a wrong output differ from the reference in at most 5 of the 20000000 elements of `bitmap`"),
            "{line}"
        );
        assert!(line.contains("(verify.mismatches = { bitmap = 5 }, --mismatches bitmap=5)"), "{line}");
        assert!(shared_kind(&format!("wrong output: {line}")).is_none(), "not taken for a shared finding");
        assert_eq!(few_mismatches([m(4).as_str(), &m(52292)]), None, "one config far off");
        assert_eq!(few_mismatches(["`y`: 3 of 1000 elements differ (first at index 0: got 1, expected 0)"]), None, "3 in 1,000 is not few");
        assert_eq!(few_mismatches([m(4).as_str(), "`z`: 4 of 20000000 elements differ (…)"]), None, "two outputs");
        assert_eq!(few_mismatches([m(4).as_str(), "`p`: the sum of its 128 written elements is 1, expected 2"]), None);
        assert_eq!(few_mismatches(std::iter::empty()), None);
        // One element, but a NaN where the reference is finite: no tie, no edge.
        let nan = "`y`: 1 of 1048576 elements differ (first at index 77: got NaN, expected -1.3213129); 1 is NaN or infinite where the reference is finite";
        assert_eq!(few_mismatches([nan]), None);
        assert_eq!(few_mismatches([m(4).as_str(), nan]), None);
    }

    /// Configs that wrote NaN or infinity where the reference is finite are told what to look
    /// for, and how many of the wrong ones did.
    #[test]
    fn a_nan_where_the_reference_is_finite_points_at_the_kernel() {
        let nan = "`y`: 1 of 1048576 elements differ (first at index 77: got NaN, expected -1.3213129); 1 is NaN or infinite where the reference is finite";
        let off = "`y`: 3 of 1048576 elements differ (first at index 7: got 1, expected 2); largest error 1.000e0 (relative 5.000e-1)";
        let all = nonfinite_outputs([nan, nan]).unwrap();
        assert!(
            all.starts_with("all 2 configs that computed a wrong output wrote NaN or infinity where the reference is finite, which no tolerance covers"),
            "{all}"
        );
        assert!(all.contains("a division by zero"), "{all}");
        assert!(nonfinite_outputs([nan]).unwrap().starts_with("the config that computed a wrong output wrote NaN"));
        assert!(nonfinite_outputs([nan, off, off]).unwrap().starts_with("1 of the 3 configs that computed a wrong output wrote NaN"));
        assert_eq!(nonfinite_outputs([off]), None);
        assert_eq!(nonfinite_outputs(std::iter::empty()), None);
    }

    /// A compile error that is a known removal from CUDA says what to write instead.
    #[test]
    fn removed_cuda_intrinsics_say_what_replaces_them() {
        let m = "spmv_kernel.cu(32): error: identifier \"__shfl_down\" is undefined | local_y += __shfl_down(local_y, s); | ^";
        assert_eq!(compile_hints(m), ["`__shfl_down` without a mask was deprecated in CUDA 9 and is gone for sm_70 and later: write `__shfl_down_sync(0xffffffff, value, …)`, the mask naming the lanes that take part (all 32 here)"]);
        assert!(compile_hints("k.cu(3): error: identifier \"__ballot\" is undefined")[0].contains("`__ballot_sync(0xffffffff, predicate)`"));
        assert!(compile_hints("k.cu(1): error: identifier \"texture\" is undefined")[0].contains("removed in CUDA 12"));
        // What NVRTC 13 says of Kernel Tuner's texture example, on an H200.
        let texture = "copy_texture_kernel.cu(3): error: texture is not a template | texture<float, 2> tex; | ^";
        assert!(compile_hints(texture)[0].contains("removed in CUDA 12"), "{:?}", compile_hints(texture));
        assert!(compile_hints("k.cu(1): error: identifier \"__shfl_down_sync\" is undefined").is_empty(), "only the names without a mask");
        let jit = "/usr/local/cuda/include/cccl/thrust/system/cuda/detail/core/triple_chevron_launch.h(61): error: A function explicitly marked as a __host__ function is not allowed in JIT mode";
        assert!(compile_hints(jit)[0].contains("`cub/block/block_reduce.cuh`"), "{:?}", compile_hints(jit));
        assert_eq!(compile_hints(jit).len(), 1, "not taken for the kernel's own host code");
    }

    /// A published file's host code and standard headers, as NVRTC 13 refuses them (the messages
    /// are an H200's, docs/results/hostcode-2026-12-02): each says how to keep the file and tune
    /// its kernels.
    #[test]
    fn host_code_and_standard_headers_say_how_to_keep_the_file() {
        let stdio = "add.cu(1): catastrophic error: cannot open source file \"stdio.h\" | #include <stdio.h> | ^";
        let [h] = &compile_hints(stdio)[..] else { panic!("{:?}", compile_hints(stdio)) };
        assert!(h.contains("(`stdio.h` here)") && h.contains("`printf`") && h.contains("`#ifndef __CUDACC_RTC__` and `#endif`"), "{h}");
        assert!(!h.contains("cuda/std"), "{h}");
        for (header, std) in [("cstdint", "cstdint"), ("stdint.h", "cstdint"), ("type_traits", "type_traits")] {
            let m = format!("k.cu(2): catastrophic error: cannot open source file \"{header}\" | #include <{header}> | ^");
            let hints = compile_hints(&m);
            assert!(hints.len() == 1 && hints[0].contains(&format!("`{header}` here")) && hints[0].contains(&format!("`<cuda/std/{std}>`")), "{hints:?}");
        }
        for header in ["iostream", "vector", "cmath", "sys/time.h"] {
            let m = format!("k.cu(1): catastrophic error: cannot open source file \"{header}\"");
            assert_eq!(compile_hints(&m).len(), 1, "{header}");
        }
        // The user's own header, missing, is not the standard library's.
        assert!(compile_hints("k.cu(1): catastrophic error: cannot open source file \"helper_cuda.h\"").is_empty());
        assert!(compile_hints("k.cu(1): catastrophic error: cannot open source file \"Tile.h\"").is_empty());
        let main = "add.cu(6): error: A function without execution space annotations (__host__/__device__/__global__) is considered a host function, and host functions are not allowed in JIT mode. Consider using -default-device flag to process unannotated functions as __device__ functions in JIT mode | int main() { | ^";
        let [h] = &compile_hints(main)[..] else { panic!("{:?}", compile_hints(main)) };
        assert!(h.starts_with("the source holds host code (`int main() {`), which NVRTC does not compile") && h.contains("`#ifndef __CUDACC_RTC__`"), "{h}");
        // The same words from a header the source includes are that header's, not the source's.
        let header = "/opt/lib/include/helpers.cuh(12): error: A function without execution space annotations (__host__/__device__/__global__) is considered a host function, and host functions are not allowed in JIT mode.";
        let [h] = &compile_hints(header)[..] else { panic!("{:?}", compile_hints(header)) };
        assert!(h.starts_with("the header `/opt/lib/include/helpers.cuh` holds a function without `__device__`, which"), "{h}");
        assert!(compile_hints(&header.replace("/opt/lib/include/helpers.cuh", "tile.h"))[0].starts_with("the header `tile.h`"));
    }

    /// Any kind of failure is told apart by a parameter where one does: the kind's first cause
    /// gets the line (once: a timeout's is made by [`timeouts`] already), with every config of the
    /// kind counted.
    #[test]
    fn what_every_config_of_a_failure_shares_and_no_measured_config_has() {
        let c = |a: i64, v: i64| Config::new([("a", a), ("vec", v)]);
        let (f1, f2, f3, m1, m2) = (c(1, 4), c(2, 4), c(3, 4), c(1, 1), c(2, 2));
        let measured = [&m1, &m2];
        let names = varying(&[&f1, &f2, &f3, &m1, &m2]);
        assert_eq!(names, ["a", "vec"]);
        assert_eq!(shared_values(&[&f1, &f2], &measured, names.iter().copied()), Some(("vec".into(), vec!["4".into()])));
        assert_eq!(shared_values(&[&f1], &measured, names.iter().copied()), None, "one failed config: any value would do");
        assert_eq!(shared_values(&[&f1, &f2], &[], names.iter().copied()), None, "nothing measured: nothing to tell apart");
        // a = 1 was measured too: `a` does not tell them apart, `vec` does.
        let failed = [(&f1, FailureKind::CompileFailed), (&f2, FailureKind::CompileFailed), (&f3, FailureKind::WrongOutput)];
        let mut causes = group_failures(failed.iter().map(|(c, k)| (*c, *k, "ptxas error")));
        add_shared_findings(&mut causes, &failed, &measured, &names);
        let compile = causes.iter().find(|c| c.kind == FailureKind::CompileFailed).unwrap();
        assert_eq!(compile.diagnosis, ["every config that failed to compile has vec = 4 (2 configs), and no config measured has it"]);
        assert!(causes.iter().find(|c| c.kind == FailureKind::WrongOutput).unwrap().diagnosis.is_empty(), "one config of its kind");
        add_shared_findings(&mut causes, &failed, &measured, &names);
        assert_eq!(causes.iter().find(|c| c.kind == FailureKind::CompileFailed).unwrap().diagnosis.len(), 1, "said once");
        // Two causes of one kind (two compile errors): the line once, on the first.
        let two = [("ptxas error: too much shared data", &f1), ("error: identifier undefined", &f2)];
        let mut causes = group_failures(two.iter().map(|(m, c)| (*c, FailureKind::CompileFailed, *m)));
        add_shared_findings(&mut causes, &failed[..2], &measured, &names);
        assert_eq!(causes.iter().map(|c| c.diagnosis.len()).collect::<Vec<_>>(), [1, 0]);
        // Values of several failed configs, in order; a parameter that does not vary is not named.
        let (g1, g2) = (c(1, 16), c(1, 4));
        assert_eq!(varying(&[&g1, &g2, &m1]), ["vec"]);
        assert_eq!(
            shared_finding(FailureKind::TimedOut, &[&g1, &g2], &[&m1], ["vec"]).unwrap(),
            "every config that timed out has vec = 4 or 16 (2 configs), and no config measured has it"
        );
    }

    #[test]
    fn timeouts_say_how_far_the_limit_is_and_which_value_never_ends() {
        let params = ["hang", "wg"];
        let t = |h, w| r(&[("hang", h), ("wg", w)], failed(FailureKind::TimedOut, "timed out after 2.000 s"));
        let m = |h, w| r(&[("hang", h), ("wg", w)], ok());
        let limit = std::time::Duration::from_secs(2);
        let lines = timeouts(&[t(1, 64), t(1, 128), m(0, 64), m(0, 128)], &params, limit);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].contains("2 s limit ([bench] timeout), 2000× the slowest config measured (1.000 ms)") && lines[0].contains("never ends"),
            "{}",
            lines[0]
        );
        assert_eq!(lines[1], "every config that timed out has hang = 1 (2 configs), and no config measured has it");
        // No value separates them: only the limit is said.
        assert_eq!(timeouts(&[t(1, 64), t(0, 128), m(0, 64), m(1, 128)], &params, limit).len(), 1);
        // One config that timed out: any of its values would "separate", so none is named.
        assert_eq!(timeouts(&[t(1, 64), m(0, 64), m(0, 128)], &params, limit).len(), 1);
        // A limit close to the measured times: slow rather than stuck.
        let slow = timeouts(&[t(1, 64), m(0, 64)], &params, std::time::Duration::from_millis(20));
        assert!(slow[0].contains("only 20.0× the slowest") && slow[0].contains("slow rather than stuck"), "{}", slow[0]);
        // Nothing timed out: nothing to say.
        assert!(timeouts(&[m(0, 64)], &params, limit).is_empty());
    }

    #[test]
    fn the_parameter_that_changes_the_output_is_named() {
        let mut res = Vec::new();
        for t in 1..=4 {
            for b in [32, 64, 128] {
                let outcome = if t == 1 {
                    ok()
                } else {
                    failed(
                        FailureKind::WrongOutput,
                        "`out`: 900 of 1000 elements differ (first at index 0: got 3, expected 2); largest error 1.000e0 (relative 5.000e-1)",
                    )
                };
                res.push(r(&[("time_steps", t), ("bx", b)], outcome));
            }
        }
        let params = vec![Param::new("time_steps", [1, 2, 3, 4]), Param::new("bx", [32, 64, 128])];
        let d = disagreement(&res, &params, &Verification::default()).expect("9 of 12 disagree");
        assert_eq!((d.verified, d.disagreed), (12, 9));
        let (p, agree, differ, right) = d.parameter.clone().unwrap();
        assert_eq!((p.as_str(), agree, differ, right), ("time_steps", vec!["1".to_string()], vec!["2".into(), "3".into(), "4".into()], 12));
        assert!(d.advice.contains("--reference none"), "{}", d.advice);
        assert!(d.to_string().starts_with("9 of the 12 verified configs disagree with the reference; `time_steps` tells them apart"), "{d}");
        // Small differences everywhere: a tolerance problem.
        let small: Vec<ConfigResult> = (0..4)
            .map(|b| {
                r(
                    &[("time_steps", 1), ("bx", b)],
                    failed(
                        FailureKind::WrongOutput,
                        "`out`: 3 of 1000 elements differ (first at index 0: got 1.0001, expected 1); largest error 1.000e-4 (relative 1.000e-4)",
                    ),
                )
            })
            .collect();
        let d = disagreement(&small, &params, &Verification::default()).unwrap();
        assert!(d.advice.contains("loosen the tolerance") && d.advice.contains("--rtol 2e-4"), "{}", d.advice);
        // Half or fewer: nothing to say.
        assert!(disagreement(&res[..6], &params, &Verification::default()).is_none());
    }

    /// A default config that computes wrongly is the reference: the right configs, most of them,
    /// all differ from it alike (one message), and the advice says the reference is the likely
    /// culprit, naming the value only the configs that agree with it have; by design or not, the
    /// parameter's other reading is kept. Configs that differ each in their own way are not alike.
    #[test]
    fn a_wrong_default_config_as_the_reference_is_named_the_likely_culprit() {
        let wrong =
            "`y`: 131070 of 1048576 elements differ (first at index 917504: got 1.2394269, expected 0.89462876); largest error 2.000e0 (relative 5.814e5)";
        let mut res = Vec::new();
        for pt in [1, 2, 4, 8] {
            for wg in [64, 128, 256] {
                res.push(r(&[("PER_THREAD", pt), ("WG", wg)], if pt == 8 { ok() } else { failed(FailureKind::WrongOutput, wrong) }));
            }
        }
        let params = vec![Param::new("PER_THREAD", [1, 2, 4, 8]), Param::new("WG", [64, 128, 256])];
        let d = disagreement(&res, &params, &Verification::default()).expect("9 of 12 disagree");
        assert!(
            d.advice.contains("the 9 that disagree differ from it alike")
                && d.advice.contains("the reference (the default config's outputs, else the first valid config's) is more likely the wrong one (only the configs with `PER_THREAD` = 8 agree with it)")
                && d.advice.contains("the winner is one of the 3 configs that agree with it")
                && d.advice.contains("--reference first-valid")
                && d.advice.contains("if `PER_THREAD` changes the output by design"),
            "{}",
            d.advice
        );
        // Each wrong in its own way: no claim about the reference.
        let mut own = res.clone();
        for (k, x) in own.iter_mut().filter(|x| matches!(x.outcome, ResultOutcome::Failed { .. })).enumerate() {
            x.outcome = failed(FailureKind::WrongOutput, &wrong.replace("131070", &(131070 + k).to_string()));
        }
        let d = disagreement(&own, &params, &Verification::default()).unwrap();
        assert!(
            !d.advice.contains("more likely the wrong one") && d.advice.contains("else the configs with the values that disagree are wrong"),
            "{}",
            d.advice
        );
        assert!(!d.reference_suspect);
        // Expected outputs the user gave are not in doubt, nor the winner that agrees with them.
        let given = Verification { reference: Reference::Expected(Vec::new()), ..Default::default() };
        assert!(disagreement(&res, &params, &Verification::default()).unwrap().reference_suspect);
        assert!(!disagreement(&res, &params, &given).unwrap().reference_suspect);
        // Alike up to rounding (a sum in another order in each config): the reference is still
        // the odd one out. Not once the first value differs by more than rounding.
        let rounded = |got: &str, largest: &str| wrong.replace("1.2394269", got).replace("2.000e0", largest);
        for (got, largest, suspect) in [("1.2394271", "2.001e0", true), ("1.2394262", "1.999e0", true), ("1.2494269", "2.000e0", false)] {
            let mut near = res.clone();
            let failed_ones = near.iter_mut().filter(|x| matches!(x.outcome, ResultOutcome::Failed { .. }));
            for x in failed_ones.skip(1) {
                x.outcome = failed(FailureKind::WrongOutput, &rounded(got, largest));
            }
            let d = disagreement(&near, &params, &Verification::default()).unwrap();
            assert_eq!(d.reference_suspect, suspect, "{got}: {}", d.advice);
            assert_eq!(d.advice.contains("is more likely the wrong one"), suspect, "{}", d.advice);
        }
    }

    /// Every config wrong in its own way, no parameter telling them apart: a config's outputs as
    /// the reference are put in doubt; a CPU reference or expected outputs, the user's word, are
    /// not called a config's outputs: the advice says the kernel and they may differ, or every
    /// config is wrong.
    #[test]
    fn a_reference_the_user_gave_is_not_called_a_configs_outputs() {
        let res: Vec<ConfigResult> = [32, 64, 128, 256]
            .into_iter()
            .enumerate()
            .map(|(k, wg)| {
                let m = format!(
                    "`y`: {} of 4096 elements differ (first at index {k}: got NaN, expected 1); 1 is NaN or infinite where the reference is finite",
                    k + 1
                );
                r(&[("WG", wg)], failed(FailureKind::WrongOutput, &m))
            })
            .collect();
        let params = vec![Param::new("WG", [32, 64, 128, 256])];
        let d = disagreement(&res, &params, &Verification::default()).expect("4 of 4 disagree");
        assert!(d.advice.starts_with("the reference itself may be wrong (it is the output of one config)"), "{}", d.advice);
        let cpu = Verification { reference: Reference::parse("cpu:triad", std::path::Path::new(".")).unwrap(), ..Default::default() };
        let d = disagreement(&res, &params, &cpu).unwrap();
        assert_eq!(
            d.to_string(),
            "4 of the 4 verified configs disagree with the reference: the CPU reference (cpu:triad) and the kernel may not compute the same thing: check the arguments it reads (by name) and the outputs compared; else every config verified is wrong"
        );
        let given = Verification { reference: Reference::Expected(Vec::new()), ..Default::default() };
        let d = disagreement(&res, &params, &given).unwrap();
        assert!(d.advice.starts_with("the expected outputs may not be this problem's") && !d.advice.contains("output of one config"), "{}", d.advice);
    }

    /// The first valid config as the reference, the one config that agrees with it: the advice
    /// does not offer `--reference first-valid` (already the reference), says "the one config",
    /// and lists the parameter's values in its own order; the withheld winner's line likewise,
    /// and it names the parameter's other reading, by design.
    #[test]
    fn the_first_valid_config_in_doubt_is_not_offered_as_the_remedy() {
        let wrong = "`y`: 1 of 4096 elements differ (first at index 5: got -1.6444422, expected 1); largest error 2.644e0 (relative 2.644e0)";
        let res: Vec<ConfigResult> =
            [32, 64, 128, 256].into_iter().map(|wg| r(&[("WG", wg)], if wg == 32 { ok() } else { failed(FailureKind::WrongOutput, wrong) })).collect();
        let params = vec![Param::new("WG", [32, 64, 128, 256])];
        let first = Verification { reference: Reference::FirstValid, ..Default::default() };
        let d = disagreement(&res, &params, &first).expect("3 of 4 disagree");
        assert!(d.reference_suspect);
        assert!(d.advice.contains("the winner is the one config that agrees with it") && !d.advice.contains("--reference first-valid"), "{}", d.advice);
        assert_eq!(d.parameter.as_ref().map(|p| p.2.join(", ")), Some("64, 128, 256".to_string()));
        let line = crate::run::persist::withheld(Some(&d), &first.reference).unwrap();
        assert!(line.contains("all with `WG` = 64, 128, 256: either `WG` changes the output by design"), "{line}");
        assert!(line.contains("the winner the one config that agrees with it") && !line.contains("first-valid"), "{line}");
        // The default as the reference: another config's outputs are a remedy.
        let d = disagreement(&res, &params, &Verification::default()).unwrap();
        assert!(d.advice.contains("--reference first-valid"), "{}", d.advice);
        assert!(crate::run::persist::withheld(Some(&d), &Reference::DefaultConfig).unwrap().contains("--reference first-valid"));
    }

    /// A default that adds 1 to a sum of about 1120 (8.9e-4 relative, which rounding could
    /// explain): the rounding advice comes first, and says too that the configs that disagree
    /// agree with each other ten times more closely than with the reference, which is then the
    /// odd one out. Sums as spread as their distance to the reference get the rounding advice
    /// alone; a CPU reference is not put in doubt.
    #[test]
    fn a_reference_off_by_little_that_the_others_agree_on_is_named_beside_rounding() {
        let sum = |got: &str| {
            format!(
                "`p`: the sum of its 128 written elements (of 1024) is {got}; expected -1.11922461e3, the sum of the reference's 128; largest error 1.000e0 (relative 8.935e-4)"
            )
        };
        let params = vec![Param::new("num_blocks", [128, 256, 512, 1024]), Param::new("bs", [64, 128, 256])];
        let tight = ["-1.12022461e3", "-1.12022463e3", "-1.12022458e3"];
        let spread = ["-1.12022461e3", "-1.12012463e3", "-1.12032458e3"];
        for (gots, verify, odd) in [
            (tight, Verification::default(), true),
            (spread, Verification::default(), false),
            (tight, Verification { reference: Reference::Expected(Vec::new()), ..Default::default() }, false),
        ] {
            let mut res = Vec::new();
            for nb in [128, 256, 512, 1024] {
                for (k, bs) in [64, 128, 256].into_iter().enumerate() {
                    res.push(r(&[("num_blocks", nb), ("bs", bs)], if nb == 128 { ok() } else { failed(FailureKind::WrongOutput, &sum(gots[k])) }));
                }
            }
            let d = disagreement(&res, &params, &verify).expect("9 of 12 disagree");
            assert!(d.advice.starts_with("every difference is below 8.9e-4 relative"), "{}", d.advice);
            assert_eq!(d.advice.contains("ten times closer than to the reference"), odd, "{}", d.advice);
            assert!(!d.reference_suspect);
        }
    }

    /// Configs that write the reference's values in another order are told to compare sorted.
    #[test]
    fn reordered_outputs_are_told_to_compare_sorted() {
        let message = format!(
            "`out`: 64 of 128 elements differ (first at index 0: got 3, expected 2); largest error 1.000e0 (relative 5.000e-1){}",
            crate::measure::verify::SORTED_AGREE
        );
        let params = vec![Param::new("order", [0, 1])];
        let res = vec![
            r(&[("order", 0)], ok()),
            r(&[("order", 1)], failed(FailureKind::WrongOutput, &message)),
            r(&[("order", 1)], failed(FailureKind::WrongOutput, &message)),
        ];
        let d = disagreement(&res, &params, &Verification::default()).unwrap();
        assert!(d.advice.starts_with("they write the values of `out`") && d.advice.contains("--compare out=sorted"), "{}", d.advice);
        let mut more = res.clone();
        more.push(r(&[("order", 1)], failed(FailureKind::WrongOutput, "`out`: 64 of 128 elements differ (first at index 0: got 9, expected 2)")));
        let d = disagreement(&more, &params, &Verification::default()).unwrap();
        assert!(d.advice.starts_with("2 of them write the values of `out`"), "{}", d.advice);
    }

    /// Configs that write more or fewer elements than the reference (a partial sum per block,
    /// as many as a parameter says) are told to compare sums; not once the output is summed.
    #[test]
    fn partial_results_are_told_to_compare_sums() {
        let fewer = "`partial`: 64 of 128 elements differ (first at index 0: got 3, expected 2); largest error 1.000e0 (relative 5.000e-1); 32 were never written (still hold the poison value)";
        let more = "`partial`: 128 of 128 elements differ (first at index 0: got 3, expected 2); largest error 1.000e0 (relative 5.000e-1); 64 were written where the reference's were not";
        let params = vec![Param::new("blocks", [32, 64, 128])];
        for (message, blocks) in [(fewer, 32), (more, 128)] {
            let res = vec![
                r(&[("blocks", 64)], ok()),
                r(&[("blocks", blocks)], failed(FailureKind::WrongOutput, message)),
                r(&[("blocks", blocks)], failed(FailureKind::WrongOutput, message)),
            ];
            let d = disagreement(&res, &params, &Verification::default()).unwrap();
            assert!(
                d.advice.contains("verify.compare = { partial = \"sum\" }, --compare partial=sum") && d.advice.contains("depends on `blocks`"),
                "{}",
                d.advice
            );
            let summed = Verification { compare: vec![("partial".into(), crate::spec::job::Compare::Sum)], ..Default::default() };
            let d = disagreement(&res, &params, &summed).unwrap();
            assert!(!d.advice.contains("--compare"), "{}", d.advice);
        }
    }
}
