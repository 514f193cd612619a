//! Output verification: compare a config's outputs with the reference, with tolerances.
//!
//! Outputs are poisoned (all bits set: NaN for floats) before each verified launch, so a config
//! that skips writing part of its output cannot pass by leaving the previous run's values.

use crate::error::BackendError;
use crate::spec::job::Tolerance;
use crate::spec::problem::HostBuffer;
use std::time::Duration;

/// Compares one output buffer; `Err` says where and how it differs.
pub fn compare(got: &HostBuffer, want: &HostBuffer, tol: Tolerance) -> Result<(), String> {
    compare_allowing(got, want, tol, 0)
}

/// [`compare`], passing an output where at most `allowed` elements differ
/// ([`crate::spec::job::Allowance`]); the message of one with more says how many may.
pub fn compare_allowing(got: &HostBuffer, want: &HostBuffer, tol: Tolerance, allowed: u64) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("`{}` has {} elements, the reference {}", got.name, got.len(), want.len()));
    }
    if got.dtype == want.dtype && all_close(&got.data, &want.data, got.dtype, tol) {
        return Ok(());
    }
    let size = got.dtype.size();
    let mut m = Mismatch::default();
    let mut first: Option<String> = None;
    for i in 0..got.len() {
        let raw = &got.data[i * size..(i + 1) * size];
        let g = got.get_f64(i);
        let w = want.get_f64(i);
        if !within(g, w, tol) {
            m.bad += 1;
            if unwritten(raw) {
                m.unwritten += 1;
            } else if unwritten(&want.data[i * size..(i + 1) * size]) {
                m.extra += 1;
            } else if !g.is_finite() && w.is_finite() {
                m.nonfinite += 1;
            }
            m.observe(g, w);
            if first.is_none() {
                first = Some(format!("first at index {i}: got {}, expected {}", shown(got.dtype, g), shown(want.dtype, w)));
            }
        }
    }
    if m.bad <= allowed {
        return Ok(());
    }
    Err(m.message(&got.name, got.len() as u64, &first.unwrap_or_default()) + &over_allowance(allowed))
}

/// What a mismatch's message adds when some elements were allowed to differ.
fn over_allowance(allowed: u64) -> String {
    if allowed == 0 {
        String::new()
    } else {
        format!("; more than the {allowed} allowed to differ (verify.mismatches)")
    }
}

/// Whether an element's bytes hold the poison pattern (all bits set: [`HostBuffer::poisoned`]),
/// which a verified launch leaves in what it never writes.
fn unwritten(raw: &[u8]) -> bool {
    raw.iter().all(|&b| b == 0xFF)
}

/// The tolerance rule every comparison applies to a value `g` against its expected `w`:
/// `|g - w| <= atol + rtol * |w|`, and a NaN agrees only with a NaN.
fn within(g: f64, w: f64, tol: Tolerance) -> bool {
    if g.is_nan() || w.is_nan() {
        g.is_nan() && w.is_nan()
    } else {
        (g - w).abs() <= tol.atol + tol.rtol * w.abs()
    }
}

/// Compares one output by the sum of its written elements (`verify.compare = { NAME = "sum" }`),
/// for an output whose layout depends on a parameter, as partial results are: a partial sum per
/// block with as many blocks as a parameter says agrees with another config's only in its sum.
/// Elements still holding the poison pattern (all bits set: never written) are left out of both
/// sums; `want` is the reference's buffer, or one element holding the expected sum. Sums are
/// taken in f64 with compensation, so the tolerance judges the kernel's rounding, not this
/// one's. `Err` states both sums and the error.
pub fn compare_sum(got: &HostBuffer, want: &HostBuffer, tol: Tolerance) -> Result<(), String> {
    let (g, written) = written_sum(got);
    let (w, wanted) = written_sum(want);
    let n = got.len();
    if written == 0 && n > 0 {
        return Err(format!("`{}` is compared by its sum, but all {n} of its elements were never written (still hold the poison value)", got.name));
    }
    if within(g, w, tol) {
        return Ok(());
    }
    let mut msg = format!(
        "`{}`: the sum of its {written} written elements (of {n}) is {}; expected {}, the sum of the reference's {wanted}",
        got.name,
        sum_text(g),
        sum_text(w)
    );
    if g.is_finite() && w.is_finite() {
        let d = (g - w).abs();
        let rel = if w != 0.0 { d / w.abs() } else { 0.0 };
        msg.push_str(&format!("; largest error {d:.3e} (relative {rel:.3e})"));
    }
    Err(msg)
}

/// Compares one output by its written elements sorted (`verify.compare = { NAME = "sorted" }`),
/// for the same values in an order that differs between configs (a compaction whose order
/// depends on atomics): the elements that do not hold the poison pattern, of each buffer, in
/// ascending order (NaNs last), must be as many and agree pairwise within the tolerance.
///
/// Same values in any order (by an order-free hash, `value_hash`) pass without a sort, values
/// that cannot agree fail without one (`sorted_screen`); only the rest are sorted, against the
/// reference's sorted values kept by their hash (`sorted_of`).
pub fn compare_sorted(got: &HostBuffer, want: &HostBuffer, tol: Tolerance) -> Result<(), String> {
    let wanted = value_hash(want);
    if value_hash(got) == wanted {
        return Ok(());
    }
    if let Some(m) = sorted_screen(got, want, tol) {
        return Err(m);
    }
    compare_with_sorted(got, &sorted_of(want, wanted), want.dtype, tol)
}

/// Before sorting: `Some(message)` when `got`'s written values cannot agree with `want`'s in
/// any order (another count, or sums further apart than the tolerances allow), which one
/// parallel pass tells without a sort.
fn sorted_screen(got: &HostBuffer, want: &HostBuffer, tol: Tolerance) -> Option<String> {
    let ((g, g_abs, gn), (w, w_abs, wn)) = (rough_sums(got), rough_sums(want));
    if gn != wn {
        return Some(format!("`{}`: compared sorted, it has {gn} written elements (of {}), the reference {wn}", got.name, got.len()));
    }
    let slack = gn as f64 * tol.atol + tol.rtol * w_abs + 1e-12 * (g_abs + w_abs);
    let close = (g - w).abs() <= slack || g.is_nan() || w.is_nan();
    (!close).then(|| {
        format!(
            "`{}`: compared sorted, its {gn} written values cannot agree with the reference's: their sum is {}, the reference's {} (further apart than the tolerance allows)",
            got.name,
            sum_text(g),
            sum_text(w)
        )
    })
}

/// An order-free hash of `x`'s written values, and their count: the sum of a 64-bit mix of each
/// one's bits (every NaN and zero alike), in one parallel pass. Two outputs with the same hold
/// the same values in some order (the same multiset), so a reordered output needs no sort.
fn value_hash(x: &HostBuffer) -> (u64, usize) {
    use rayon::prelude::*;
    x.data
        .par_chunks_exact(x.dtype.size())
        .filter(|raw| !unwritten(raw))
        .map(|raw| {
            let v = x.dtype.decode(raw);
            let bits = if v.is_nan() { f64::NAN.to_bits() } else { (v + 0.0).to_bits() };
            // splitmix64's finaliser.
            let mut z = bits.wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31), 1usize)
        })
        .reduce(|| (0, 0), |p, q| (p.0.wrapping_add(q.0), p.1 + q.1))
}

/// [`compare_sorted`]'s pairwise comparison against the reference's written elements already
/// sorted (`w`, of `dtype`), as many as `got`'s ([`sorted_screen`] has checked the counts).
fn compare_with_sorted(got: &HostBuffer, w: &[f64], dtype: crate::spec::problem::DType, tol: Tolerance) -> Result<(), String> {
    let g = written_sorted(got);
    debug_assert_eq!(g.len(), w.len(), "the screen compares the counts first");
    let mut m = Mismatch::default();
    let mut first = None;
    for (i, (&a, &b)) in g.iter().zip(w).enumerate() {
        if !within(a, b, tol) {
            m.bad += 1;
            m.observe(a, b);
            first.get_or_insert_with(|| format!("first at sorted position {i}: got {}, expected {}", shown(got.dtype, a), shown(dtype, b)));
        }
    }
    match first {
        None => Ok(()),
        Some(first) => {
            Err(format!("{} (compared sorted)", m.message(&got.name, g.len() as u64, &first).replacen(" elements differ", " written elements differ", 1)))
        }
    }
}

/// Outputs up to this many elements are read back and sorted when they differ element by
/// element, to say whether they agree in another order.
pub const SORTED_HINT_MAX: usize = 1 << 24;

/// When `got` differs from `want` element by element: [`SORTED_AGREE`] if their written
/// elements agree once sorted (the same values in another order), else nothing. Outputs over
/// [`SORTED_HINT_MAX`] elements are not sorted.
pub fn sorted_hint(got: &HostBuffer, want: &HostBuffer, tol: Tolerance) -> String {
    if got.len() > SORTED_HINT_MAX || got.dtype != want.dtype {
        return String::new();
    }
    match compare_sorted(got, want, tol) {
        Ok(()) => SORTED_AGREE.to_string(),
        Err(_) => String::new(),
    }
}

/// The written elements of reference output `want` sorted, kept by their [`value_hash`]
/// `hash` (a tune's reference is compared with every config): sorted once per process rather
/// than at each comparison. Kept by what they hold, not by which reference they came from, so
/// another reference's values are never taken for these. The last two are kept.
fn sorted_of(want: &HostBuffer, hash: (u64, usize)) -> std::sync::Arc<Vec<f64>> {
    type Kept = Vec<((u64, usize), std::sync::Arc<Vec<f64>>)>;
    static KEPT: std::sync::Mutex<Kept> = std::sync::Mutex::new(Vec::new());
    let found = KEPT.lock().unwrap_or_else(|p| p.into_inner()).iter().find(|k| k.0 == hash).map(|k| k.1.clone());
    if let Some(v) = found {
        return v;
    }
    let v = std::sync::Arc::new(written_sorted(want));
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    if kept.len() >= 2 {
        kept.remove(0);
    }
    kept.push((hash, v.clone()));
    v
}

/// The sum and the sum of the absolute values of `b`'s written elements (plain f64 sums, in
/// parallel: a screen, not a verdict), and how many those are.
fn rough_sums(b: &HostBuffer) -> (f64, f64, usize) {
    use rayon::prelude::*;
    let size = b.dtype.size();
    let parts: Vec<(f64, f64, usize)> = b
        .data
        .par_chunks(size << 16)
        .map(|chunk| {
            let mut p = (0.0, 0.0, 0);
            for raw in chunk.chunks_exact(size).filter(|raw| !unwritten(raw)) {
                let v = b.dtype.decode(raw);
                p = (p.0 + v, p.1 + v.abs(), p.2 + 1);
            }
            p
        })
        .collect();
    parts.into_iter().fold((0.0, 0.0, 0), |a, p| (a.0 + p.0, a.1 + p.1, a.2 + p.2))
}

/// What [`sorted_hint`] adds to a mismatch whose output agrees sorted.
pub const SORTED_AGREE: &str = "; sorted, they agree (the same values in another order)";

/// `b`'s elements that do not hold the poison pattern, as f64, in ascending order (NaNs last).
fn written_sorted(b: &HostBuffer) -> Vec<f64> {
    use rayon::prelude::*;
    // Sorted as integers whose order is the values' (sign-magnitude bits made monotonic; every
    // NaN as the positive quiet one, last): several times faster than a comparison closure.
    let key = |v: f64| {
        let bits = if v.is_nan() { f64::NAN.to_bits() & !(1 << 63) } else { v.to_bits() };
        if bits >> 63 == 1 {
            !bits
        } else {
            bits | 1 << 63
        }
    };
    let value = |k: u64| f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k });
    let mut keys: Vec<u64> = b.data.par_chunks_exact(b.dtype.size()).filter(|raw| !unwritten(raw)).map(|raw| key(b.dtype.decode(raw))).collect();
    keys.par_sort_unstable();
    keys.into_par_iter().map(value).collect()
}

/// A sum as a message shows it: nine significant digits, in exponent form (`-1.12309146e3`).
fn sum_text(v: f64) -> String {
    let t = format!("{v:.8e}");
    match t.split_once('e') {
        Some((m, e)) if m.contains('.') => format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.')),
        _ => t,
    }
}

/// The sum (f64, Neumaier's compensated summation) of `b`'s elements that do not hold the
/// poison pattern, and how many those are.
fn written_sum(b: &HostBuffer) -> (f64, usize) {
    let size = b.dtype.size();
    let (mut sum, mut carry, mut n) = (0.0f64, 0.0f64, 0usize);
    for raw in b.data.chunks_exact(size) {
        if unwritten(raw) {
            continue;
        }
        let v = b.dtype.decode(raw);
        let t = sum + v;
        carry += if sum.abs() >= v.abs() { (sum - t) + v } else { (v - t) + sum };
        sum = t;
        n += 1;
    }
    (sum + carry, n)
}

/// What a [`Mismatch::message`] says of elements written as NaN or infinity where the
/// reference's are finite.
const NONFINITE: &str = "NaN or infinite where the reference is finite";

/// What differed in one output: counts and the largest errors among the differing elements
/// (both finite), so that a report can tell a tolerance problem from a wrong result.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Mismatch {
    /// Elements outside the tolerance.
    pub bad: u64,
    /// Of those, elements still holding the poison pattern (never written).
    pub unwritten: u64,
    /// Of those, elements written where the reference's hold the poison pattern (the reference
    /// config never wrote them): configs that write different numbers of elements.
    pub extra: u64,
    /// Of those, elements written as NaN or infinity where the reference's are finite: no
    /// tolerance or allowance makes those agree.
    pub nonfinite: u64,
    /// Largest |got - expected| among finite differing elements.
    pub max_abs: f64,
    /// Largest |got - expected| / |expected| among finite differing elements with a non-zero
    /// expected value.
    pub max_rel: f64,
}

impl Mismatch {
    fn observe(&mut self, g: f64, w: f64) {
        if g.is_finite() && w.is_finite() {
            let d = (g - w).abs();
            self.max_abs = self.max_abs.max(d);
            if w != 0.0 {
                self.max_rel = self.max_rel.max(d / w.abs());
            }
        }
    }

    /// The message of a [`BackendError::WrongOutput`] for output `name` of `n` elements.
    pub fn message(&self, name: &str, n: u64, first: &str) -> String {
        let mut msg = format!("`{name}`: {} of {n} elements differ ({first})", self.bad);
        if self.max_abs > 0.0 {
            msg.push_str(&format!("; largest error {:.3e} (relative {:.3e})", self.max_abs, self.max_rel));
        }
        if self.unwritten > 0 {
            msg.push_str(&format!("; {} were never written (still hold the poison value)", self.unwritten));
        }
        if self.extra > 0 {
            msg.push_str(&format!("; {} were written where the reference's were not", self.extra));
        }
        if self.nonfinite > 0 {
            let (n, verb) = (self.nonfinite, if self.nonfinite == 1 { "is" } else { "are" });
            msg.push_str(&format!("; {n} {verb} {NONFINITE}"));
        }
        msg
    }

    /// The largest relative error a [`Mismatch::message`] states, when it states one: a
    /// report reads it back to tell whether a looser tolerance would make outputs agree.
    pub fn largest_relative(message: &str) -> Option<f64> {
        after(message, "(relative ")?.split(')').next()?.parse().ok()
    }

    /// Whether a [`Mismatch::message`] says that some elements are NaN or infinite where the
    /// reference's are finite.
    pub fn nonfinite_in(message: &str) -> bool {
        message.contains(NONFINITE)
    }

    /// Whether a [`Mismatch::message`] says that some elements were never written.
    pub fn unwritten_in(message: &str) -> bool {
        message.contains("were never written")
    }

    /// Whether a [`Mismatch::message`] says that some elements were written where the
    /// reference's were not.
    pub fn written_beyond(message: &str) -> bool {
        message.contains("were written where the reference's were not")
    }

    /// The first differing element a [`Mismatch::message`] states: its index, the value got
    /// and the value expected.
    pub fn first_in(message: &str) -> Option<(u64, f64, f64)> {
        let (index, rest) = after(message, "(first at index ")?.split_once(": got ")?;
        let (got, rest) = rest.split_once(", expected ")?;
        let expected = rest.split(')').next()?;
        Some((index.parse().ok()?, got.parse().ok()?, expected.parse().ok()?))
    }

    /// What a [`compare_sum`] message (or a tune's record of it, after `wrong output: `)
    /// states: the output, the sum got and the sum expected.
    pub fn sum_in(message: &str) -> Option<(&str, f64, f64)> {
        let (name, rest) = bare(message).strip_prefix('`')?.split_once("`: the sum of its ")?;
        let (_, rest) = rest.split_once(") is ")?;
        let (got, rest) = rest.split_once("; expected ")?;
        let expected = rest.split(',').next()?;
        Some((name, got.parse().ok()?, expected.parse().ok()?))
    }

    /// The largest absolute error a [`Mismatch::message`] states, when it states one.
    pub fn largest_absolute(message: &str) -> Option<f64> {
        after(message, "; largest error ")?.split(' ').next()?.parse().ok()
    }

    /// Whether two [`Mismatch::message`]s say the same of two configs' outputs against one
    /// reference, up to rounding: the same output, the same elements differing (their count
    /// and the first), the first got within 0.1 % and the largest error within 1 % of each
    /// other. Configs that sum in another order differ from a wrong reference alike, but not
    /// in the last digits.
    pub fn alike(a: &str, b: &str) -> bool {
        if a == b {
            return true;
        }
        let near = |x: f64, y: f64, by: f64| (x - y).abs() <= by * x.abs().max(y.abs());
        // Outputs compared by their sum ([`compare_sum`]): the same output, the same sum
        // expected, and sums near each other (however many elements each config wrote: a
        // partial result per block, as many as a parameter says).
        if let (Some(sa), Some(sb)) = (Self::sum_in(a), Self::sum_in(b)) {
            return sa.0 == sb.0 && sa.2 == sb.2 && near(sa.1, sb.1, 1e-3);
        }
        let (Some(ca), Some(cb), Some(fa), Some(fb)) = (Self::counts_in(a), Self::counts_in(b), Self::first_in(a), Self::first_in(b)) else { return false };
        let largest = match (Self::largest_absolute(a), Self::largest_absolute(b)) {
            (Some(x), Some(y)) => near(x, y, 1e-2),
            (x, y) => x.is_none() && y.is_none(),
        };
        // What else they say (elements never written, written beyond) must be the same.
        let rest = |m: &str| m.split("; ").skip(1).filter(|p| !p.starts_with("largest error ")).map(str::to_string).collect::<Vec<_>>();
        ca == cb && fa.0 == fb.0 && fa.2 == fb.2 && near(fa.1, fb.1, 1e-3) && largest && rest(a) == rest(b)
    }

    /// The output a [`Mismatch::message`] (or a tune's record of it, after `wrong output: `)
    /// names, with how many of its elements differ and of how many: `` `bitmap`: 4 of 20000000
    /// elements differ `` gives (`bitmap`, 4, 20000000); `None` for another message (a sum's, a
    /// sorted comparison's, another length).
    pub fn counts_in(message: &str) -> Option<(&str, u64, u64)> {
        let (name, rest) = bare(message).strip_prefix('`')?.split_once("`: ")?;
        let (bad, rest) = rest.split_once(" of ")?;
        let (n, rest) = rest.split_once(' ')?;
        if !rest.starts_with("elements differ") {
            return None;
        }
        Some((name, bad.parse().ok()?, n.parse().ok()?))
    }
}

/// A [`Mismatch::message`] without the `wrong output: ` a tune's record puts before it.
fn bare(message: &str) -> &str {
    message.strip_prefix("wrong output: ").unwrap_or(message)
}

/// What follows the first `marker` in a [`Mismatch::message`], for reading a number back.
fn after<'m>(message: &'m str, marker: &str) -> Option<&'m str> {
    message.find(marker).map(|at| &message[at + marker.len()..])
}

/// Entry point of [`DEVICE_COMPARE_SRC`] for f32 outputs.
pub const DEVICE_COMPARE_KERNEL: &str = "kt_compare_f32";

/// The entry point of [`DEVICE_COMPARE_SRC`] that compares outputs of `dtype` on the device:
/// f32, f16 and bf16 ones; `None` for the other types, compared on the host.
pub fn device_compare_kernel(dtype: crate::spec::problem::DType) -> Option<&'static str> {
    use crate::spec::problem::DType;
    match dtype {
        DType::F32 => Some(DEVICE_COMPARE_KERNEL),
        DType::F16 => Some("kt_compare_f16"),
        DType::BF16 => Some("kt_compare_bf16"),
        _ => None,
    }
}

/// Kernels that compare an output with its reference on the device, so that outputs are not
/// copied to the host for every config: one per element type of [`device_compare_kernel`]
/// (f16 and bf16 widened to float by their bits, without headers). CUDA C that compiles
/// unchanged as HIP (NVRTC and hipRTC). Arguments: `got`, `want`, element count, `atol`, `rtol`
/// (doubles), and the [`CompareCounters`] initialised to [`DEVICE_COMPARE_INIT`]: mismatches,
/// the first mismatching index, mismatches that still hold the poison pattern (all bits set:
/// never written), the bits of the largest absolute and relative errors among finite
/// mismatches (non-negative doubles order as their bits do, so `atomicMax` on the bits keeps the
/// largest), mismatches written where the reference holds the poison pattern, and mismatches
/// written as NaN or infinity where the reference is finite. The tolerance rule and NaN
/// handling are those of [`compare`].
pub const DEVICE_COMPARE_SRC: &str = r#"
__device__ __forceinline__ float kt_of_f32(float x) { return x; }
__device__ __forceinline__ unsigned kt_bits_f32(float x) { return __float_as_uint(x); }
__device__ __forceinline__ float kt_of_bf16(unsigned short h) { return __uint_as_float(((unsigned)h) << 16); }
__device__ __forceinline__ float kt_of_f16(unsigned short h) {
    unsigned s = ((unsigned)h & 0x8000u) << 16, e = ((unsigned)h >> 10) & 0x1fu, m = (unsigned)h & 0x3ffu;
    if (e == 0x1fu) return __uint_as_float(s | 0x7f800000u | (m << 13));   // infinity, NaN
    if (e == 0u) return __uint_as_float(s) + (s ? -1.0f : 1.0f) * (float)m * 5.9604644775390625e-8f; // zero, subnormal: m * 2^-24
    return __uint_as_float(s | ((e + 112u) << 23) | (m << 13));
}
__device__ __forceinline__ unsigned kt_bits_16(unsigned short h) { return h; }

#define KT_COMPARE(NAME, T, OF, BITS, POISON)                                                          \
extern "C" __global__ void NAME(const T* got, const T* want, unsigned long long n,                      \
                                double atol, double rtol, unsigned long long* out) {                    \
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;                             \
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;       \
         i += stride) {                                                                                 \
        float g = OF(got[i]), w = OF(want[i]);                                                          \
        bool ok = (g != g && w != w) || fabs((double)g - (double)w) <= atol + rtol * fabs((double)w);   \
        if (!ok) {                                                                                      \
            atomicAdd(&out[0], 1ull);                                                                   \
            atomicMin(&out[1], i);                                                                      \
            if (BITS(got[i]) == POISON) atomicAdd(&out[2], 1ull);                                       \
            else if (BITS(want[i]) == POISON) atomicAdd(&out[5], 1ull);                                 \
            else if (!isfinite(g) && isfinite(w)) atomicAdd(&out[6], 1ull);                             \
            if (isfinite(g) && isfinite(w)) {                                                           \
                double d = fabs((double)g - (double)w);                                                 \
                atomicMax(&out[3], (unsigned long long)__double_as_longlong(d));                        \
                if (w != 0.0f)                                                                          \
                    atomicMax(&out[4], (unsigned long long)__double_as_longlong(d / fabs((double)w)));  \
            }                                                                                           \
        }                                                                                               \
    }                                                                                                   \
}
KT_COMPARE(kt_compare_f32, float, kt_of_f32, kt_bits_f32, 0xFFFFFFFFu)
KT_COMPARE(kt_compare_f16, unsigned short, kt_of_f16, kt_bits_16, 0xFFFFu)
KT_COMPARE(kt_compare_bf16, unsigned short, kt_of_bf16, kt_bits_16, 0xFFFFu)
"#;

/// Binaries of [`DEVICE_COMPARE_SRC`], compiled once per architecture per process (a process
/// may drive devices of several architectures).
pub struct CompareBinaries(std::sync::Mutex<Vec<CompiledFor>>);

/// An architecture and what compiling for it gave.
type CompiledFor = (String, Result<Vec<u8>, String>);

impl CompareBinaries {
    /// Empty.
    pub const fn new() -> CompareBinaries {
        CompareBinaries(std::sync::Mutex::new(Vec::new()))
    }

    /// The binary for `arch`, compiled with `compile` the first time it is asked for.
    pub fn get(&self, arch: &str, compile: impl FnOnce() -> Result<Vec<u8>, String>) -> Result<Vec<u8>, crate::BackendError> {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !m.iter().any(|(a, _)| a == arch) {
            m.push((arch.to_string(), compile()));
        }
        let (_, r) = m.iter().find(|(a, _)| a == arch).expect("just inserted");
        r.clone().map_err(|e| crate::BackendError::other(format!("compiling the verification kernel for {arch}: {e}")))
    }
}

impl Default for CompareBinaries {
    fn default() -> Self {
        Self::new()
    }
}

/// What on-device verification needs from a backend's device memory: a backend implements these
/// over its own API and [`DeviceReference::check`] does the rest, the same for every backend.
/// Outputs are named by their index among the problem's buffers (the reference's order).
pub trait DeviceCompare {
    /// A device allocation.
    type Ptr: Copy;
    /// Allocates device memory holding reference output `want`'s data; `None` when the device
    /// has no room for it (see [`crate::measure::memory`]): that output is then read back and
    /// compared on the host.
    fn upload(&mut self, want: &HostBuffer) -> Result<Option<Self::Ptr>, crate::BackendError>;
    /// Frees what [`DeviceCompare::upload`] allocated.
    fn free(&mut self, p: Self::Ptr);
    /// Runs `kernel`, [`DEVICE_COMPARE_SRC`]'s entry point for the output's element type
    /// ([`device_compare_kernel`]), on buffer `output` against `want` (`n` elements) and returns
    /// its counters.
    fn compare(&mut self, output: usize, want: Self::Ptr, n: u64, kernel: &'static str, tol: Tolerance) -> Result<CompareCounters, crate::BackendError>;
    /// Element `index` of buffer `output`, of `dtype`.
    fn read_element(&mut self, output: usize, index: u64, dtype: crate::spec::problem::DType) -> Result<f64, crate::BackendError>;
    /// Buffer `output`, read back to the host, into memory the backend may keep for the next
    /// read of the same output (page-locked: a read of gigabytes into fresh pageable memory is
    /// several times slower).
    fn read_back(&mut self, output: usize) -> Result<&HostBuffer, crate::BackendError>;
}

/// The reference outputs on the device, uploaded once per reference id (one tune), and the
/// comparison of a config's outputs with them: f32, f16 and bf16 outputs on the device, other
/// types on the host.
#[derive(Debug)]
pub struct DeviceReference<P> {
    id: Option<u64>,
    ptrs: Vec<Option<P>>,
}

impl<P> Default for DeviceReference<P> {
    fn default() -> Self {
        DeviceReference { id: None, ptrs: Vec::new() }
    }
}

impl<P: Copy> DeviceReference<P> {
    /// Compares the selected outputs in `dev` with `req`'s reference (uploading it first when
    /// its id changed); `Err(WrongOutput)` in [`compare`]'s words on a mismatch.
    pub fn check<D: DeviceCompare<Ptr = P>>(&mut self, dev: &mut D, req: &crate::VerifyRequest<'_>) -> Result<(), crate::BackendError> {
        use crate::BackendError;
        if self.id != Some(req.reference_id) {
            self.id = None;
            for p in self.ptrs.drain(..).flatten() {
                dev.free(p);
            }
            for want in req.reference {
                let on_device = req.selects(want) && !req.on_host(&want.name) && device_compare_kernel(want.dtype).is_some() && !want.data.is_empty();
                let p = if on_device { dev.upload(want)? } else { None };
                self.ptrs.push(p);
            }
            self.id = Some(req.reference_id);
        }
        for (i, want) in req.reference.iter().enumerate() {
            if !req.selects(want) {
                continue;
            }
            let on_device = self.ptrs.get(i).copied().flatten().filter(|_| !req.on_host(&want.name));
            let (Some(p), Some(kernel)) = (on_device, device_compare_kernel(want.dtype)) else {
                // An output of another type (or empty), compared by its sum, or no room on the
                // device: read it back and compare on the host.
                req.compare_output(dev.read_back(i)?, want)?;
                continue;
            };
            let n = want.len() as u64;
            let counters = dev.compare(i, p, n, kernel, req.tolerance_for(&want.name))?;
            let verdict = device_verdict(&want.name, want.dtype, counters, (n, req.allowed_for(&want.name, n)), |first| {
                let g = dev.read_element(i, first, want.dtype).map_err(|e| e.to_string())?;
                Ok((g, want.get_f64(first as usize)))
            });
            if let Err(m) = verdict {
                // Read back, once the output is known to differ: whether it agrees sorted.
                let tol = req.tolerance_for(&want.name);
                let hint = if want.len() <= SORTED_HINT_MAX { sorted_hint(dev.read_back(i)?, want, tol) } else { String::new() };
                return Err(BackendError::WrongOutput(m + &hint));
            }
        }
        Ok(())
    }

    /// The device allocations held (for the backend's cleanup).
    pub fn ptrs(&self) -> impl Iterator<Item = P> + '_ {
        self.ptrs.iter().flatten().copied()
    }
}

/// The comparison kernel's counters: mismatches, first mismatching index, never-written
/// mismatches, the bits of the largest absolute and relative errors (f64), mismatches written
/// where the reference's elements were not, and mismatches written as NaN or infinity where
/// the reference's are finite.
pub type CompareCounters = [u64; 7];

/// Initial values of the comparison kernel's counters.
pub const DEVICE_COMPARE_INIT: CompareCounters = [0, u64::MAX, 0, 0, 0, 0, 0];

/// Threads per block of a [`DEVICE_COMPARE_KERNEL`] launch.
pub const DEVICE_COMPARE_THREADS: u32 = 256;

/// The arguments of one [`DEVICE_COMPARE_KERNEL`] launch, in the kernel's order, held where
/// the launch's argument array can point at them. `P` is a backend's device pointer.
#[derive(Debug)]
pub struct CompareArgs<P> {
    got: P,
    want: P,
    n: u64,
    atol: f64,
    rtol: f64,
    counters: P,
}

impl<P> CompareArgs<P> {
    /// Compares `n` f32 elements of `got` with `want` under `tol`, counting into `counters`
    /// (the [`CompareCounters`], initialised to [`DEVICE_COMPARE_INIT`]).
    pub fn new(got: P, want: P, n: u64, tol: Tolerance, counters: P) -> CompareArgs<P> {
        CompareArgs { got, want, n, atol: tol.atol, rtol: tol.rtol, counters }
    }

    /// The launch's argument array: pointers to the values, valid while `self` is neither
    /// moved nor dropped.
    pub fn pointers(&mut self) -> [*mut std::ffi::c_void; 6] {
        fn raw<T>(x: &mut T) -> *mut std::ffi::c_void {
            x as *mut T as *mut std::ffi::c_void
        }
        [raw(&mut self.got), raw(&mut self.want), raw(&mut self.n), raw(&mut self.atol), raw(&mut self.rtol), raw(&mut self.counters)]
    }

    /// Blocks of [`DEVICE_COMPARE_THREADS`] (the kernel strides over the rest).
    pub fn blocks(&self) -> u32 {
        self.n.div_ceil(DEVICE_COMPARE_THREADS as u64).clamp(1, 4096) as u32
    }
}

/// The verdict on a device comparison of `n` elements of output `name` (of `dtype`): `Err` with
/// the message [`compare`] would give when the counters show mismatches. `first` reads (got,
/// expected) at an index, called only on a mismatch.
pub fn device_verdict(
    name: &str,
    dtype: crate::spec::problem::DType,
    counters: CompareCounters,
    (n, allowed): (u64, u64),
    first: impl FnOnce(u64) -> Result<(f64, f64), String>,
) -> Result<(), String> {
    if counters[0] <= allowed {
        return Ok(());
    }
    let i = counters[1];
    let (g, w) = first(i)?;
    let m = Mismatch {
        bad: counters[0],
        unwritten: counters[2],
        extra: counters[5],
        nonfinite: counters[6],
        max_abs: f64::from_bits(counters[3]),
        max_rel: f64::from_bits(counters[4]),
    };
    Err(m.message(name, n, &format!("first at index {i}: got {}, expected {}", shown(dtype, g), shown(dtype, w))) + &over_allowance(allowed))
}

/// An element's value as its own type prints it (the shortest text that reads back to it: `0.1`
/// for an f32's 0.1, not the f64 `0.10000000149011612` it widens to).
fn shown(dtype: crate::spec::problem::DType, v: f64) -> String {
    use crate::spec::problem::DType;
    match dtype {
        DType::F32 => (v as f32).to_string(),
        DType::F16 => half::f16::from_f64(v).to_string(),
        DType::BF16 => half::bf16::from_f64(v).to_string(),
        _ => v.to_string(),
    }
}

/// Fast path for f32 buffers: true when every element is within tolerance (compared in
/// parallel chunks). On `false` the slow path finds and describes the differences.
/// Whether every element of `got` is within `tol` of `want`'s (both of `dtype`), on every core:
/// the common case, a pass, decided without the element-by-element account of a mismatch.
fn all_close(got: &[u8], want: &[u8], dtype: crate::spec::problem::DType, tol: Tolerance) -> bool {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    let close = |x: f64, y: f64| within(x, y, tol);
    if dtype == crate::spec::problem::DType::F32 {
        return got.par_chunks(CHUNK).zip(want.par_chunks(CHUNK)).all(|(g, w)| {
            g.chunks_exact(4)
                .zip(w.chunks_exact(4))
                .all(|(a, b)| close(f32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64, f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64))
        });
    }
    let size = dtype.size();
    let chunk = CHUNK / 4 * size;
    got.par_chunks(chunk)
        .zip(want.par_chunks(chunk))
        .all(|(g, w)| g.chunks_exact(size).zip(w.chunks_exact(size)).all(|(a, b)| close(dtype.decode(a), dtype.decode(b))))
}

/// Whether a verification of `outputs` (empty: every buffer a kernel may write) compares
/// buffer `b`.
pub fn compared(outputs: &[String], b: &HostBuffer) -> bool {
    crate::spec::job::compares(outputs, &b.name, b.access)
}

/// Which of `buffers` (the problem's, in argument order) a verification of `outputs` compares:
/// the mask [`crate::backend::Backend::read_outputs`] takes.
pub fn compared_buffers<'a>(outputs: &[String], buffers: impl IntoIterator<Item = &'a HostBuffer>) -> Vec<bool> {
    buffers.into_iter().map(|b| compared(outputs, b)).collect()
}

/// What [`crate::backend::Backend::verify`] checks.
#[derive(Clone, Copy, Debug)]
pub struct VerifyRequest<'a> {
    /// Expected contents of every buffer, in argument order.
    pub reference: &'a [HostBuffer],
    /// Identifies `reference` for the duration of a tune, so a backend may cache it.
    pub reference_id: u64,
    /// Buffers to compare; empty means every written buffer.
    pub outputs: &'a [String],
    /// Tolerances of every output without one of its own in `per_output`.
    pub tolerance: crate::spec::job::Tolerance,
    /// Tolerances of single outputs, by buffer name.
    pub per_output: &'a [(String, crate::spec::job::Tolerance)],
    /// Outputs compared otherwise than element by element ([`compare_sum`], [`compare_sorted`]),
    /// by buffer name; the others element by element.
    pub compare: &'a [(String, crate::spec::job::Compare)],
    /// Elements of single outputs (compared element by element) that may differ, by buffer
    /// name ([`crate::spec::job::Allowance`]); an output not named may differ in none.
    pub mismatches: &'a [(String, crate::spec::job::Allowance)],
    /// Time limit of the launch.
    pub timeout: Duration,
}

impl<'a> VerifyRequest<'a> {
    /// The request a tune's `verify` settings make against `reference` (`reference_id`
    /// identifies it), each launch limited to `timeout`.
    pub fn of(verify: &'a crate::spec::job::Verification, reference: &'a [HostBuffer], reference_id: u64, timeout: Duration) -> VerifyRequest<'a> {
        VerifyRequest {
            reference,
            reference_id,
            outputs: &verify.outputs,
            tolerance: verify.tolerance,
            per_output: &verify.per_output,
            compare: &verify.compare,
            mismatches: &verify.mismatches,
            timeout,
        }
    }

    /// Whether a buffer is compared: the named outputs, or every written buffer.
    pub fn selects(&self, b: &HostBuffer) -> bool {
        compared(self.outputs, b)
    }

    /// Which of the problem's buffers (the reference's, in argument order) it compares.
    pub fn wanted(&self) -> Vec<bool> {
        compared_buffers(self.outputs, self.reference)
    }

    /// How many of output `name`'s `n` elements may differ.
    pub fn allowed_for(&self, name: &str, n: u64) -> u64 {
        crate::spec::job::allowed(self.mismatches, name, n)
    }

    /// The tolerance output `name` is compared with.
    pub fn tolerance_for(&self, name: &str) -> crate::spec::job::Tolerance {
        self.per_output.iter().find(|(n, _)| n == name).map_or(self.tolerance, |t| t.1)
    }

    /// Whether output `name` is compared otherwise than element by element (by its sum, or
    /// sorted): such an output is always read back and compared on the host.
    pub fn on_host(&self, name: &str) -> bool {
        crate::spec::job::compare_of(self.compare, name).is_some()
    }

    /// Compares one read-back output with its reference: as [`VerifyRequest::compare`] says
    /// ([`compare_sum`], [`compare_sorted`]), else element by element ([`compare`], which says
    /// when the outputs agree once sorted).
    pub fn compare_output(&self, got: &HostBuffer, want: &HostBuffer) -> Result<(), BackendError> {
        use crate::spec::job::Compare;
        let tol = self.tolerance_for(&want.name);
        let verdict = match crate::spec::job::compare_of(self.compare, &want.name) {
            Some(Compare::Sum) => compare_sum(got, want, tol),
            Some(Compare::Sorted) => compare_sorted(got, want, tol),
            None => compare_allowing(got, want, tol, self.allowed_for(&want.name, want.len() as u64)).map_err(|m| m + &sorted_hint(got, want, tol)),
        };
        verdict.map_err(BackendError::WrongOutput)
    }

    /// Compares read-back buffers with the reference (only the selected ones).
    pub fn check(&self, outs: &[HostBuffer]) -> Result<(), BackendError> {
        for (got, want) in outs.iter().zip(self.reference) {
            if self.selects(want) {
                self.compare_output(got, want)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::problem::{Access, DType, Init};

    /// An allowance passes an output with at most that many differing elements, on the host
    /// and from the device's counters alike, and says how many were allowed when there are more.
    #[test]
    fn a_few_elements_may_differ_where_allowed() {
        use crate::spec::job::{allowed, Allowance};
        assert_eq!(Allowance::parse("10"), Ok(Allowance::Count(10)));
        assert_eq!(Allowance::parse(" 0.5% "), Ok(Allowance::Share(0.005)));
        for bad in ["-1", "ten", "101%", "nan%", "1.5"] {
            assert!(Allowance::parse(bad).unwrap_err().contains("is not a count of elements (10) or a percentage of them (0.001%)"), "{bad}");
        }
        assert_eq!(Allowance::Share(0.005).of(1000), 5);
        assert_eq!(Allowance::Share(0.005).of(999), 4, "rounded down");
        let list = [("y".to_string(), Allowance::Count(2))];
        assert_eq!((allowed(&list, "y", 9), allowed(&list, "z", 9)), (2, 0));
        let buffer = |v: &[f32]| f32s("y", v);
        let want = buffer(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let two_off = buffer(&[1.0, 2.5, 3.0, 4.0, 6.0]);
        let tol = Tolerance { atol: 1e-5, rtol: 0.0 };
        assert!(compare(&two_off, &want, tol).is_err());
        assert!(compare_allowing(&two_off, &want, tol, 2).is_ok());
        let e = compare_allowing(&two_off, &want, tol, 1).unwrap_err();
        assert!(e.starts_with("`y`: 2 of 5 elements differ") && e.ends_with("; more than the 1 allowed to differ (verify.mismatches)"), "{e}");
        // The device's counters: two mismatches, the first at index 1.
        let mut counters = DEVICE_COMPARE_INIT;
        counters[0] = 2;
        counters[1] = 1;
        counters[3] = 1f64.to_bits();
        counters[4] = 0.25f64.to_bits();
        let first = |i: u64| Ok((two_off.get_f64(i as usize), want.get_f64(i as usize)));
        assert!(device_verdict("y", DType::F32, counters, (5, 2), first).is_ok());
        assert_eq!(device_verdict("y", DType::F32, counters, (5, 1), first).unwrap_err(), e, "the host's words");
        // Through a request: the allowance of the output named, none for the others.
        let reference = [want.clone()];
        let req = VerifyRequest {
            reference: &reference,
            reference_id: 1,
            outputs: &[],
            tolerance: tol,
            per_output: &[],
            compare: &[],
            mismatches: &list,
            timeout: Duration::from_secs(1),
        };
        assert!(req.compare_output(&two_off, &want).is_ok());
        assert!(VerifyRequest { mismatches: &[], ..req }.compare_output(&two_off, &want).is_err());
    }

    #[test]
    fn compare_arguments_point_at_their_values_in_kernel_order() {
        let mut args = CompareArgs::new(0x1000u64, 0x2000, 1000, Tolerance { atol: 1e-5, rtol: 1e-3 }, 0x3000);
        let p = args.pointers();
        // SAFETY: each pointer points at a field of `args` of the type read here.
        unsafe {
            assert_eq!((*(p[0] as *const u64), *(p[1] as *const u64), *(p[2] as *const u64)), (0x1000, 0x2000, 1000));
            assert_eq!((*(p[3] as *const f64), *(p[4] as *const f64), *(p[5] as *const u64)), (1e-5, 1e-3, 0x3000));
        }
        assert_eq!(args.blocks(), 4, "1000 elements in blocks of 256");
        assert_eq!(CompareArgs::new(0u64, 0, 0, Tolerance::default(), 0).blocks(), 1);
        assert_eq!(CompareArgs::new(0u64, 0, 1 << 40, Tolerance::default(), 0).blocks(), 4096, "capped; the kernel strides");
    }

    /// An f32 output named `name` holding `v`.
    fn f32s(name: &str, v: &[f32]) -> HostBuffer {
        HostBuffer { data: v.iter().flat_map(|x| x.to_le_bytes()).collect(), ..HostBuffer::new(name, DType::F32, 0, &Init::Zeros, Access::Write) }
    }

    /// The poison value (all bits set) and the tolerance the comparison tests use.
    const POISON: f32 = f32::from_bits(u32::MAX);
    const TOL: Tolerance = Tolerance { atol: 1e-3, rtol: 0.0 };

    #[test]
    fn an_output_compared_by_its_sum_leaves_unwritten_elements_out() {
        let buffer = |v: &[f32]| f32s("p", v);
        let (poison, tol) = (POISON, TOL);
        // Four partial sums against two of another config, the rest never written: the same sum.
        let want = buffer(&[3.0, 7.0, poison, poison]);
        assert_eq!(compare_sum(&buffer(&[1.0, 2.0, 3.0, 4.0]), &want, tol), Ok(()));
        // Or the expected sum alone.
        assert_eq!(compare_sum(&buffer(&[4.0, 6.0, poison, poison]), &buffer(&[10.0]), tol), Ok(()));
        let e = compare_sum(&buffer(&[1.0, 2.0, 3.0, poison]), &want, tol).unwrap_err();
        assert_eq!(
            e,
            "`p`: the sum of its 3 written elements (of 4) is 6e0; expected 1e1, the sum of the reference's 2; largest error 4.000e0 (relative 4.000e-1)"
        );
        assert_eq!((sum_text(-1123.091464996338), sum_text(16384.0), sum_text(f64::NAN)), ("-1.12309146e3".into(), "1.6384e4".into(), "NaN".into()));
        assert_eq!(Mismatch::largest_relative(&e), Some(0.4), "the diagnosis reads the error back");
        // Two configs whose sums differ from the reference alike, up to rounding, however many
        // partial sums each wrote (a tune's record starts `wrong output: `); not a third whose
        // sum is another.
        assert_eq!(Mismatch::sum_in(&e), Some(("p", 6.0, 10.0)));
        let other = compare_sum(&buffer(&[1.0, 2.0, 3.0000002, 0.0]), &want, tol).unwrap_err();
        assert!(Mismatch::alike(&format!("wrong output: {e}"), &format!("wrong output: {other}")), "{e} | {other}");
        let third = compare_sum(&buffer(&[1.0, 2.0, 4.0, poison]), &want, tol).unwrap_err();
        assert!(!Mismatch::alike(&e, &third), "{e} | {third}");
        let none = compare_sum(&buffer(&[poison; 4]), &want, tol).unwrap_err();
        assert!(Mismatch::unwritten_in(&none), "{none}");
        // A NaN the kernel computed is no sum.
        assert!(compare_sum(&buffer(&[f32::NAN, 10.0]), &want, tol).is_err());
        // Compensated: a million tenths in f64 come to 100,000 within 1e-9.
        let tenths = HostBuffer { data: 0.1f64.to_le_bytes().repeat(1_000_000), ..HostBuffer::new("p", DType::F64, 0, &Init::Zeros, Access::Write) };
        assert!(compare_sum(&tenths, &HostBuffer { data: 100_000f64.to_le_bytes().to_vec(), ..tenths.clone() }, Tolerance { atol: 1e-9, rtol: 0.0 }).is_ok());
    }

    #[test]
    fn an_output_compared_sorted_agrees_in_any_order() {
        let buffer = |v: &[f32]| f32s("y", v);
        let (poison, tol) = (POISON, TOL);
        let want = buffer(&[1.0, 2.0, 3.0, poison]);
        assert_eq!(compare_sorted(&buffer(&[3.0, poison, 1.0, 2.0]), &want, tol), Ok(()));
        assert_eq!(compare_sorted(&buffer(&[3.0, 1.0005, 2.0, poison]), &want, tol), Ok(()), "within the tolerance");
        assert_eq!(
            compare_sorted(&buffer(&[3.0, 1.0, 2.0, 4.0]), &want, tol).unwrap_err(),
            "`y`: compared sorted, it has 4 written elements (of 4), the reference 3"
        );
        // Sums further apart than the tolerances allow: no sort needed to tell.
        let e = compare_sorted(&buffer(&[3.0, 1.0, 5.0, poison]), &want, tol).unwrap_err();
        assert_eq!(e, "`y`: compared sorted, its 3 written values cannot agree with the reference's: their sum is 9e0, the reference's 6e0 (further apart than the tolerance allows)");
        // The same sum, other values: sorted and compared.
        let e = compare_sorted(&buffer(&[3.0, 0.5, 2.5, poison]), &want, tol).unwrap_err();
        assert_eq!(e, "`y`: 2 of 3 written elements differ (first at sorted position 0: got 0.5, expected 1); largest error 5.000e-1 (relative 5.000e-1) (compared sorted)");
        // Element by element, a reordered output says that it agrees sorted; a wrong one does not.
        let req = VerifyRequest {
            reference: std::slice::from_ref(&want),
            reference_id: 1,
            outputs: &[],
            tolerance: tol,
            per_output: &[],
            compare: &[],
            mismatches: &[],
            timeout: Default::default(),
        };
        let reordered = req.compare_output(&buffer(&[3.0, 1.0, 2.0, poison]), &want).unwrap_err().to_string();
        assert!(reordered.ends_with(SORTED_AGREE), "{reordered}");
        assert!(!req.compare_output(&buffer(&[3.0, 1.0, 5.0, poison]), &want).unwrap_err().to_string().contains("sorted"));
        let sorted = [("y".to_string(), crate::spec::job::Compare::Sorted)];
        assert!(VerifyRequest { compare: &sorted, ..req }.compare_output(&buffer(&[3.0, 1.0, 2.0, poison]), &want).is_ok());
    }

    #[test]
    fn a_device_comparison_reads_like_a_host_one() {
        let mut want = HostBuffer::new("y", DType::F32, 8, &Init::Sequence, Access::Write);
        let mut got = want.clone();
        got.set_f64(3, 9.0);
        got.data[20..24].copy_from_slice(&[0xFF; 4]);
        // An infinity this config computed where the reference is finite.
        got.set_f64(6, f64::INFINITY);
        // The reference never wrote element 7; this config did.
        want.data[28..32].copy_from_slice(&[0xFF; 4]);
        let host = compare(&got, &want, Tolerance::default()).unwrap_err();
        assert!(host.contains("1 were never written") && Mismatch::written_beyond(&host), "{host}");
        assert!(host.contains("; 1 is NaN or infinite where the reference is finite") && Mismatch::nonfinite_in(&host), "{host}");
        // What the comparison kernel would count for the same buffers.
        let counters = [4, 3, 1, 6f64.to_bits(), 2f64.to_bits(), 1, 1];
        let device = device_verdict("y", DType::F32, counters, (8, 0), |i| Ok((got.get_f64(i as usize), want.get_f64(i as usize)))).unwrap_err();
        assert_eq!(host, device);
        assert!(device_verdict("y", DType::F32, DEVICE_COMPARE_INIT, (8, 0), |_| unreachable!()).is_ok());
        for d in DType::ALL {
            let k = device_compare_kernel(d);
            assert_eq!(k.is_some(), matches!(d, DType::F32 | DType::F16 | DType::BF16), "{d:?}");
            assert!(k.is_none_or(|k| DEVICE_COMPARE_SRC.contains(&format!("KT_COMPARE({k},"))), "{d:?}");
        }
        assert_eq!(device_compare_kernel(DType::F32), Some(DEVICE_COMPARE_KERNEL));
        // Values as their own type prints them.
        let tenth = HostBuffer { data: 0.1f32.to_le_bytes().to_vec(), ..HostBuffer::new("y", DType::F32, 1, &Init::Zeros, Access::Write) };
        let zero = HostBuffer::new("y", DType::F32, 1, &Init::Zeros, Access::Write);
        assert!(compare(&tenth, &zero, Tolerance::default()).unwrap_err().contains("got 0.1, expected 0"));
    }

    /// Device memory on the host: the comparison "kernel" counts as the CUDA C one does.
    #[derive(Default)]
    struct HostDevice {
        bufs: Vec<HostBuffer>,
        uploads: Vec<Option<Vec<u8>>>,
        device_compares: usize,
        host_reads: usize,
        /// Uploads that find no room on the device (`upload` answers `None`).
        full: bool,
    }

    impl DeviceCompare for HostDevice {
        type Ptr = usize;
        fn upload(&mut self, want: &HostBuffer) -> Result<Option<usize>, crate::BackendError> {
            if self.full {
                return Ok(None);
            }
            self.uploads.push(Some(want.data.clone()));
            Ok(Some(self.uploads.len() - 1))
        }
        fn free(&mut self, p: usize) {
            assert!(self.uploads[p].take().is_some(), "freed twice");
        }
        fn compare(&mut self, output: usize, want: usize, n: u64, kernel: &'static str, tol: Tolerance) -> Result<CompareCounters, crate::BackendError> {
            self.device_compares += 1;
            let want = self.uploads[want].as_ref().expect("live");
            let dtype = self.bufs[output].dtype;
            assert_eq!(device_compare_kernel(dtype), Some(kernel), "the kernel for the output's type");
            let size = dtype.size();
            let mut c = DEVICE_COMPARE_INIT;
            for i in 0..n as usize {
                let raw = &self.bufs[output].data[i * size..(i + 1) * size];
                let (g, w) = (dtype.decode(raw) as f32, dtype.decode(&want[i * size..(i + 1) * size]) as f32);
                if !within(g as f64, w as f64, tol) {
                    c[0] += 1;
                    c[1] = c[1].min(i as u64);
                    // As the kernel counts: never written, else written where the reference was not.
                    if unwritten(raw) {
                        c[2] += 1;
                    } else if unwritten(&want[i * size..(i + 1) * size]) {
                        c[5] += 1;
                    } else if !g.is_finite() && w.is_finite() {
                        c[6] += 1;
                    }
                    if g.is_finite() && w.is_finite() {
                        let d = (g as f64 - w as f64).abs();
                        c[3] = c[3].max(d.to_bits());
                        if w != 0.0 {
                            c[4] = c[4].max((d / (w as f64).abs()).to_bits());
                        }
                    }
                }
            }
            Ok(c)
        }
        fn read_element(&mut self, output: usize, index: u64, dtype: DType) -> Result<f64, crate::BackendError> {
            assert_eq!(dtype, self.bufs[output].dtype);
            Ok(self.bufs[output].get_f64(index as usize))
        }
        fn read_back(&mut self, output: usize) -> Result<&HostBuffer, crate::BackendError> {
            self.host_reads += 1;
            Ok(&self.bufs[output])
        }
    }

    #[test]
    fn device_reference_uploads_once_per_tune_and_compares_like_the_host() {
        let x = HostBuffer::new("x", DType::F32, 16, &Init::Sequence, Access::Read);
        let y = HostBuffer::new("y", DType::F32, 16, &Init::Sequence, Access::Write);
        let k = HostBuffer::new("k", DType::I32, 16, &Init::Sequence, Access::Write);
        let reference = vec![x.clone(), y.clone(), k.clone()];
        let mut dev = HostDevice { bufs: reference.clone(), ..Default::default() };
        let req = |id| crate::VerifyRequest {
            reference: &reference,
            reference_id: id,
            outputs: &[],
            tolerance: Tolerance::default(),
            per_output: &[],
            compare: &[],
            mismatches: &[],
            timeout: Default::default(),
        };
        let mut r = DeviceReference::default();
        r.check(&mut dev, &req(1)).unwrap();
        r.check(&mut dev, &req(1)).unwrap();
        // Only the written f32 output went to the device, once; the i32 one is compared on the host.
        assert_eq!((dev.uploads.len(), dev.device_compares, dev.host_reads), (1, 2, 2));
        // A mismatch reads exactly as the host comparison's.
        dev.bufs[1].set_f64(5, 99.0);
        dev.bufs[1].data[40..44].copy_from_slice(&[0xFF; 4]);
        dev.bufs[1].set_f64(12, f64::NAN);
        dev.bufs[1].set_f64(13, f64::NEG_INFINITY);
        let e = r.check(&mut dev, &req(1)).unwrap_err();
        let host = compare(&dev.bufs[1], &y, Tolerance::default()).unwrap_err();
        assert!(host.contains("; 2 are NaN or infinite where the reference is finite"), "{host}");
        assert!(matches!(&e, crate::BackendError::WrongOutput(m) if *m == host), "{e} vs {host}");
        // Outputs after the first are checked too: a wrong i32 output is caught.
        dev.bufs[1] = y.clone();
        dev.bufs[2].set_f64(3, -1.0);
        let e = r.check(&mut dev, &req(1)).unwrap_err();
        assert!(e.to_string().contains("`k`: 1 of 16"), "{e}");
        // A new reference (a new tune) frees the old upload and uploads again.
        r.check(&mut dev, &req(2)).unwrap_err();
        assert_eq!(dev.uploads.len(), 2);
        assert!(dev.uploads[0].is_none());
        assert_eq!(r.ptrs().collect::<Vec<_>>(), vec![1]);

        // A device with no room for the reference: every output is compared on the host, with
        // the same verdicts.
        let mut full = HostDevice { bufs: reference.clone(), full: true, ..Default::default() };
        let mut r = DeviceReference::default();
        r.check(&mut full, &req(1)).unwrap();
        assert_eq!((full.uploads.len(), full.device_compares, full.host_reads), (0, 0, 2));
        full.bufs[1].set_f64(5, 99.0);
        let e = r.check(&mut full, &req(1)).unwrap_err();
        let mut wrong = y.clone();
        wrong.set_f64(5, 99.0);
        assert_eq!(e.to_string(), crate::BackendError::WrongOutput(compare(&wrong, &y, Tolerance::default()).unwrap_err()).to_string());
        assert_eq!(r.ptrs().count(), 0);
    }

    #[test]
    fn half_precision_outputs_are_compared_on_the_device_like_the_host() {
        let h = HostBuffer::new("h", DType::F16, 64, &Init::Generator { expr: "i * 0.25 - 3".into() }, Access::Write);
        let b = HostBuffer::new("b", DType::BF16, 64, &Init::Generator { expr: "i * 0.5".into() }, Access::Write);
        let reference = vec![h.clone(), b.clone()];
        let mut dev = HostDevice { bufs: reference.clone(), ..Default::default() };
        let req = crate::VerifyRequest {
            reference: &reference,
            reference_id: 1,
            outputs: &[],
            tolerance: Tolerance::default(),
            per_output: &[],
            compare: &[],
            mismatches: &[],
            timeout: Default::default(),
        };
        let mut r = DeviceReference::default();
        r.check(&mut dev, &req).unwrap();
        assert_eq!((dev.uploads.len(), dev.device_compares, dev.host_reads), (2, 2, 0), "both on the device");
        for (i, want) in reference.iter().enumerate() {
            dev.bufs = reference.clone();
            dev.bufs[i].set_f64(9, 0.1);
            dev.bufs[i].data[40..44].copy_from_slice(&[0xFF; 4]);
            let e = r.check(&mut dev, &req).unwrap_err();
            let host = compare(&dev.bufs[i], want, Tolerance::default()).unwrap_err();
            assert!(matches!(&e, crate::BackendError::WrongOutput(m) if *m == host), "{e} vs {host}");
            assert!(host.contains("3 of 64 elements differ") && host.contains("2 were never written"), "{host}");
        }
    }

    #[test]
    fn comparison_binaries_compile_once_per_architecture() {
        let c = CompareBinaries::new();
        let calls = std::cell::Cell::new(0);
        let compile = |arch: &str| {
            calls.set(calls.get() + 1);
            if arch == "sm_bad" {
                Err("no such architecture".to_string())
            } else {
                Ok(arch.as_bytes().to_vec())
            }
        };
        assert_eq!(c.get("sm_90", || compile("sm_90")).unwrap(), b"sm_90");
        assert_eq!(c.get("sm_90", || compile("sm_90")).unwrap(), b"sm_90");
        assert_eq!(c.get("gfx942", || compile("gfx942")).unwrap(), b"gfx942");
        assert!(c.get("sm_bad", || compile("sm_bad")).unwrap_err().to_string().contains("for sm_bad: no such architecture"));
        assert!(c.get("sm_bad", || compile("sm_bad")).is_err());
        assert_eq!(calls.get(), 3);
    }

    #[test]
    fn messages_state_the_largest_error_and_per_output_tolerances_apply() {
        let want = HostBuffer::new("y", DType::F32, 4, &Init::Sequence, Access::Write);
        let mut got = want.clone();
        got.set_f64(2, 2.002);
        let e = compare(&got, &want, Tolerance { atol: 0.0, rtol: 1e-6 }).unwrap_err();
        assert!(e.contains("largest error 2.000e-3 (relative 1.000e-3)"), "{e}");
        assert!((Mismatch::largest_relative(&e).unwrap() - 1e-3).abs() < 1e-9);
        assert!(!Mismatch::unwritten_in(&e));
        let loose = [("y".to_string(), Tolerance { atol: 0.0, rtol: 1e-2 })];
        let reference = [want.clone()];
        let req = VerifyRequest {
            reference: &reference,
            reference_id: 1,
            outputs: &[],
            tolerance: Tolerance { atol: 0.0, rtol: 1e-6 },
            per_output: &loose,
            compare: &[],
            mismatches: &[],
            timeout: Default::default(),
        };
        assert!(req.check(&[got.clone()]).is_ok());
        let strict = VerifyRequest { per_output: &[], ..req };
        assert!(strict.check(&[got]).is_err());
    }

    #[test]
    fn tolerances_and_poison() {
        let want = HostBuffer::new("y", DType::F32, 4, &Init::Sequence, Access::Write);
        let mut got = want.clone();
        assert!(compare(&got, &want, Tolerance::default()).is_ok());
        got.set_f64(2, 2.5);
        let e = compare(&got, &want, Tolerance::default()).unwrap_err();
        assert!(e.contains("1 of 4") && e.contains("index 2"), "{e}");
        assert!(compare(&got, &want, Tolerance { atol: 0.6, rtol: 0.0 }).is_ok());
        let mut got = want.clone();
        got.data[4..8].fill(0xFF);
        let e = compare(&got, &want, Tolerance::default()).unwrap_err();
        assert!(e.contains("never written"), "{e}");
    }

    #[test]
    fn half_precision_and_narrow_outputs_are_compared_by_value() {
        for dtype in [DType::F16, DType::BF16, DType::U8, DType::I16] {
            let want = HostBuffer::new("y", dtype, 100_000, &Init::Generator { expr: "i % 100".into() }, Access::Write);
            assert_eq!(compare(&want.clone(), &want, Tolerance::default()), Ok(()), "{dtype:?}");
            let mut got = want.clone();
            got.set_f64(70_001, 3.0);
            let e = compare(&got, &want, Tolerance::default()).unwrap_err();
            assert!(e.contains("1 of 100000 elements differ (first at index 70001: got 3, expected 1)"), "{dtype:?}: {e}");
            assert_eq!(compare(&got, &want, Tolerance { atol: 2.0, rtol: 0.0 }), Ok(()), "{dtype:?}");
            let poisoned = HostBuffer { data: want.poisoned(), ..want.clone() };
            let e = compare(&poisoned, &want, Tolerance::default()).unwrap_err();
            assert!(!dtype.is_float() || e.contains("100000 were never written"), "{dtype:?}: {e}");
        }
    }
}
