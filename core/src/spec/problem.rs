//! Problem data: the buffers and scalars a kernel is launched with, built on the host from the
//! spec and uploaded by the backend.

use crate::spec::value::Value;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// Element types of buffers and scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
    /// 32-bit signed integer.
    I32,
    /// 32-bit unsigned integer.
    U32,
    /// 64-bit signed integer.
    I64,
    /// IEEE 754 half precision (`__half`, WGSL's `f16`).
    F16,
    /// bfloat16 (`__nv_bfloat16`, `__hip_bfloat16`): an f32's upper 16 bits.
    BF16,
    /// 8-bit signed integer.
    I8,
    /// 8-bit unsigned integer.
    U8,
    /// 16-bit signed integer.
    I16,
    /// 16-bit unsigned integer.
    U16,
    /// 64-bit unsigned integer.
    U64,
}

impl DType {
    /// Every element type, in the order messages list them.
    pub const ALL: [DType; 12] =
        [DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8, DType::U8, DType::I16, DType::U16, DType::I32, DType::U32, DType::I64, DType::U64];

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// The name a spec gives it (`f32`, `bf16`, `u8`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::U64 => "u64",
        }
    }

    /// Parses a spec's type name (`f32`, `f16`, `bf16`, `i8` … `u64`), NumPy's (`float32`,
    /// `float16`, `int8`, …) and C's (`float`, `double`, `half`, `int`, `unsigned char`, …).
    pub fn parse(s: &str) -> Option<DType> {
        Some(match s {
            "f32" | "float" | "float32" => DType::F32,
            "f64" | "double" | "float64" => DType::F64,
            "i32" | "int" | "int32" | "int32_t" => DType::I32,
            "u32" | "uint" | "uint32" | "uint32_t" | "unsigned int" => DType::U32,
            "i64" | "long" | "int64" | "int64_t" | "long long" => DType::I64,
            "f16" | "half" | "float16" | "__half" => DType::F16,
            "bf16" | "bfloat16" | "__nv_bfloat16" | "__hip_bfloat16" => DType::BF16,
            "i8" | "int8" | "int8_t" | "char" | "signed char" => DType::I8,
            "u8" | "uint8" | "uint8_t" | "unsigned char" => DType::U8,
            "i16" | "int16" | "int16_t" | "short" => DType::I16,
            "u16" | "uint16" | "uint16_t" | "unsigned short" => DType::U16,
            "u64" | "uint64" | "uint64_t" | "unsigned long long" => DType::U64,
            _ => return None,
        })
    }

    /// The names [`DType::parse`] takes first, for messages: `f32, f64, f16, …, u64`.
    pub fn names() -> String {
        DType::ALL.map(DType::name).join(", ")
    }

    /// The C/C++ type name (`float`, `unsigned int`, `__half`, ...), for messages that suggest
    /// code.
    pub fn c_type(self) -> &'static str {
        match self {
            DType::F32 => "float",
            DType::F64 => "double",
            DType::I32 => "int",
            DType::U32 => "unsigned int",
            DType::I64 => "long long",
            DType::F16 => "__half",
            DType::BF16 => "__nv_bfloat16",
            DType::I8 => "signed char",
            DType::U8 => "unsigned char",
            DType::I16 => "short",
            DType::U16 => "unsigned short",
            DType::U64 => "unsigned long long",
        }
    }

    /// Whether values are floating point.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
    }

    /// The relative tolerance an output of this type is compared with when the spec gives
    /// none: the [`Tolerance`](crate::spec::job::Tolerance) default for 32- and 64-bit types,
    /// and for the half-precision ones PyTorch's `assert_close` defaults (`1e-3` for f16,
    /// `1.6e-2` for bf16: a few units in the last place, which two correct configs that
    /// accumulate in different orders can differ by).
    pub fn default_rtol(self) -> Option<f64> {
        match self {
            DType::F16 => Some(1e-3),
            DType::BF16 => Some(1.6e-2),
            _ => None,
        }
    }

    /// The element's bits of `v` (rounded to nearest; integers truncate toward zero and
    /// saturate), little-endian, into `out` (`size()` bytes).
    fn encode(self, v: f64, out: &mut [u8]) {
        match self {
            DType::F32 => out.copy_from_slice(&(v as f32).to_le_bytes()),
            DType::F64 => out.copy_from_slice(&v.to_le_bytes()),
            DType::I32 => out.copy_from_slice(&(v as i32).to_le_bytes()),
            DType::U32 => out.copy_from_slice(&(v as u32).to_le_bytes()),
            DType::I64 => out.copy_from_slice(&(v as i64).to_le_bytes()),
            DType::F16 => out.copy_from_slice(&half::f16::from_f64(v).to_le_bytes()),
            DType::BF16 => out.copy_from_slice(&half::bf16::from_f64(v).to_le_bytes()),
            DType::I8 => out.copy_from_slice(&(v as i8).to_le_bytes()),
            DType::U8 => out.copy_from_slice(&(v as u8).to_le_bytes()),
            DType::I16 => out.copy_from_slice(&(v as i16).to_le_bytes()),
            DType::U16 => out.copy_from_slice(&(v as u16).to_le_bytes()),
            DType::U64 => out.copy_from_slice(&(v as u64).to_le_bytes()),
        }
    }

    /// The value of one element's little-endian bytes (`size()` of them).
    pub fn decode(self, b: &[u8]) -> f64 {
        let two = || [b[0], b[1]];
        let four = || [b[0], b[1], b[2], b[3]];
        let eight = || [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
        match self {
            DType::F32 => f32::from_le_bytes(four()) as f64,
            DType::F64 => f64::from_le_bytes(eight()),
            DType::I32 => i32::from_le_bytes(four()) as f64,
            DType::U32 => u32::from_le_bytes(four()) as f64,
            DType::I64 => i64::from_le_bytes(eight()) as f64,
            DType::F16 => half::f16::from_le_bytes(two()).to_f64(),
            DType::BF16 => half::bf16::from_le_bytes(two()).to_f64(),
            DType::I8 => b[0] as i8 as f64,
            DType::U8 => b[0] as f64,
            DType::I16 => i16::from_le_bytes(two()) as f64,
            DType::U16 => u16::from_le_bytes(two()) as f64,
            DType::U64 => u64::from_le_bytes(eight()) as f64,
        }
    }
}

/// How a kernel uses a buffer. Write-only buffers are poisoned before each verified run so a
/// config that skips writes is caught; read-write buffers are restored instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Input only.
    Read,
    /// Output only.
    Write,
    /// Input and output (in-place kernels).
    ReadWrite,
}

/// Where a buffer lives on the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Memory {
    /// Global memory, passed to the kernel as a pointer argument.
    #[default]
    Global,
    /// A `__constant__` symbol of the buffer's name in the kernel's module (CUDA, HIP), filled
    /// with the buffer's contents before the module's first launch on a workspace. With
    /// `argument`, the buffer is also passed as a pointer argument (what Kernel Tuner does with a
    /// T1 file's `MemType: Constant` arguments).
    Constant {
        /// Also pass it as a pointer argument.
        argument: bool,
    },
}

impl Memory {
    /// Whether the kernel receives the buffer as a pointer argument.
    pub fn is_argument(self) -> bool {
        !matches!(self, Memory::Constant { argument: false })
    }

    /// Whether it fills a `__constant__` symbol.
    pub fn is_constant(self) -> bool {
        matches!(self, Memory::Constant { .. })
    }
}

/// A buffer's elements from a file: a NumPy `.npy` array (version 1–3, C order, little-endian)
/// whose type and element count match, or raw little-endian elements of exactly that size.
pub fn read_elements(path: &std::path::Path, dtype: DType, len: usize) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    let want = len * dtype.size();
    let Some(rest) = bytes.strip_prefix(b"\x93NUMPY") else {
        if bytes.len() != want {
            return Err(format!(
                "{shown}: {} bytes of raw data, but {len} elements of {} need {want}; give a file of exactly that size or a .npy array",
                bytes.len(),
                dtype.c_type()
            ));
        }
        return Ok(bytes);
    };
    let bad = |m: &str| format!("{shown}: not a NumPy array this reads ({m})");
    let (major, header_len, at) = match rest {
        [1, _, a, b, ..] => (1, u16::from_le_bytes([*a, *b]) as usize, 6 + 4),
        [2 | 3, _, a, b, c, d, ..] => (2, u32::from_le_bytes([*a, *b, *c, *d]) as usize, 6 + 6),
        _ => return Err(bad("unknown version")),
    };
    let _ = major;
    let header = bytes.get(at..at + header_len).ok_or_else(|| bad("the header is cut off"))?;
    let header = std::str::from_utf8(header).map_err(|_| bad("the header is not text"))?;
    let field = |name: &str| -> Option<&str> {
        let i = header.find(&format!("'{name}'"))? + name.len() + 2;
        Some(header[i..].trim_start().trim_start_matches(':').trim_start())
    };
    let descr = field("descr").and_then(|d| d.strip_prefix('\'')).and_then(|d| d.split('\'').next()).ok_or_else(|| bad("no descr"))?;
    let expected = match dtype {
        DType::F32 => "f4",
        DType::F64 => "f8",
        DType::I32 => "i4",
        DType::U32 => "u4",
        DType::I64 => "i8",
        DType::F16 => "f2",
        DType::I8 => "i1",
        DType::U8 => "u1",
        DType::I16 => "i2",
        DType::U16 => "u2",
        DType::U64 => "u8",
        // NumPy has no bfloat16: `ml_dtypes` saves it as two-byte void (`V2`).
        DType::BF16 => "V2",
    };
    let (order, code) = descr.split_at(1.min(descr.len()));
    if !matches!(order, "<" | "|" | "=") || code != expected {
        return Err(format!(
            "{shown}: the array holds `{descr}`, the buffer is {} (`<{expected}`); convert it, e.g. a.astype(np.{})",
            dtype.c_type(),
            np_name(dtype)
        ));
    }
    if field("fortran_order").is_some_and(|f| f.starts_with("True")) {
        return Err(format!("{shown}: the array is in Fortran order; save np.ascontiguousarray(a) instead"));
    }
    let shape = field("shape").and_then(|s| s.strip_prefix('(')).and_then(|s| s.split(')').next()).ok_or_else(|| bad("no shape"))?;
    let count = shape.split(',').map(str::trim).filter(|d| !d.is_empty()).try_fold(1usize, |acc, d| d.parse::<usize>().ok().and_then(|d| acc.checked_mul(d)));
    let count = count.ok_or_else(|| bad("the shape is not a list of sizes"))?;
    if count != len {
        let s = if count == 1 { "" } else { "s" };
        return Err(format!("{shown}: the array has {count} element{s} (shape ({shape})), the buffer {len}"));
    }
    let data = bytes.get(at + header_len..).ok_or_else(|| bad("no data"))?;
    if data.len() != want {
        return Err(format!("{shown}: {} bytes of data after the header, {want} expected", data.len()));
    }
    Ok(data.to_vec())
}

fn np_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "float32",
        DType::F64 => "float64",
        DType::I32 => "int32",
        DType::U32 => "uint32",
        DType::I64 => "int64",
        DType::F16 => "float16",
        // `ml_dtypes.bfloat16`, NumPy's usual bfloat16.
        DType::BF16 => "dtype(ml_dtypes.bfloat16)",
        DType::I8 => "int8",
        DType::U8 => "uint8",
        DType::I16 => "int16",
        DType::U16 => "uint16",
        DType::U64 => "uint64",
    }
}

/// How a buffer's initial contents are made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Init {
    /// All zero.
    Zeros,
    /// Uniform random in [-1, 1) for floats, [0, 100) for integers, from a seed.
    Random {
        /// The seed; the same seed gives the same data everywhere.
        seed: u64,
    },
    /// 0, 1, 2, ...
    Sequence,
    /// Every element the same value.
    Constant {
        /// The value.
        value: f64,
    },
    /// Element `i` is a Python expression of `i` (T1's `Generator` fill), e.g. `"i % 7 * 0.5"`.
    /// Loaders check it with [`Init::check_generator`]; an element it cannot compute is NaN.
    Generator {
        /// The expression.
        expr: String,
    },
    /// Read from a file: a NumPy `.npy` array of the buffer's element type and length, or raw
    /// little-endian elements (T1's `BinaryRaw`).
    File {
        /// The file.
        path: std::path::PathBuf,
    },
}

impl Init {
    /// A short description for reports: `zeros`, `file y.npy`, ...
    pub fn describe(&self) -> String {
        match self {
            Init::Zeros => "zeros".into(),
            Init::Random { seed } => format!("random (seed {seed})"),
            Init::Sequence => "0, 1, 2, ...".into(),
            Init::Constant { value } => format!("constant {value}"),
            Init::Generator { expr } => format!("generator `{}`", crate::spec::error::quote(expr)),
            Init::File { path } => format!("file {}", path.display()),
        }
    }

    /// Checks a generator expression on every index of a buffer of `len` elements; the error
    /// names the first index that fails.
    pub fn check_generator(expr: &str, len: usize) -> Result<(), String> {
        use rayon::prelude::*;
        let e = crate::spec::expr::Expr::compile(expr, &["i"]).map_err(|e| e.to_string())?;
        let first_bad = (0..len).into_par_iter().find_first(|&i| e.eval_f64(&[Value::Int(i as i64)]).is_err());
        match first_bad {
            Some(i) => Err(format!("at i = {i}: {}", e.eval_f64(&[Value::Int(i as i64)]).expect_err("failed above"))),
            None => Ok(()),
        }
    }
}

/// The most elements a generated fill ([`Init::Generator`]) evaluates: beyond it, making the
/// problem would take minutes.
pub const MAX_GENERATED: usize = 1 << 27;

/// One buffer's host contents.
#[derive(Clone, Debug, PartialEq)]
pub struct HostBuffer {
    /// Argument name.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Raw little-endian bytes.
    pub data: Vec<u8>,
    /// How the kernel uses it.
    pub access: Access,
    /// Where it lives on the device.
    pub memory: Memory,
}

impl HostBuffer {
    /// The buffer without its data, except in constant memory (whose contents a backend fills
    /// from its host copy): what a device workspace keeps of it beside the device copy.
    pub fn described(&self) -> HostBuffer {
        let data = if self.memory.is_constant() { self.data.clone() } else { Vec::new() };
        HostBuffer { name: self.name.clone(), dtype: self.dtype, data, access: self.access, memory: self.memory }
    }

    /// Makes a buffer of `len` elements; panics where [`HostBuffer::try_new`] fails (for tests
    /// and small buffers made in code).
    pub fn new(name: &str, dtype: DType, len: usize, init: &Init, access: Access) -> HostBuffer {
        HostBuffer::try_new(name, dtype, len, init, access).unwrap_or_else(|e| panic!("HostBuffer::new({name}): {e}"))
    }

    /// Makes a buffer of `len` elements; an error, never an abort, when its size overflows or
    /// the host cannot hold it.
    pub fn try_new(name: &str, dtype: DType, len: usize, init: &Init, access: Access) -> Result<HostBuffer, String> {
        let bytes = len.checked_mul(dtype.size()).ok_or_else(|| format!("{len} elements of {} bytes overflow the address space", dtype.size()))?;
        if let (Init::Generator { expr }, true) = (init, len > MAX_GENERATED) {
            return Err(format!(
                "a generated fill (`{}`) of {len} elements is beyond the {MAX_GENERATED} this evaluates (one expression per element); use random or constant data for buffers this large",
                crate::spec::error::quote(expr)
            ));
        }
        if let Init::File { path } = init {
            return Ok(HostBuffer { name: name.into(), dtype, data: read_elements(path, dtype, len)?, access, memory: Memory::Global });
        }
        let mut data = zeroed(bytes).ok_or_else(|| format!("cannot allocate {} on the host", human_bytes(bytes as u64)))?;
        let size = dtype.size();
        match init {
            Init::Zeros => {}
            Init::Random { seed } => {
                // Chunks of 64 Ki elements, each from its own stream of the seed, filled in
                // parallel: the same seed gives the same data whatever the thread count.
                use rayon::prelude::*;
                const CHUNK: usize = 1 << 16;
                data.par_chunks_mut(CHUNK * size).enumerate().for_each(|(ci, chunk)| {
                    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(*seed);
                    rng.set_stream(ci as u64);
                    for i in 0..chunk.len() / size {
                        let element = &mut chunk[i * size..(i + 1) * size];
                        match dtype {
                            DType::F32 => element.copy_from_slice(&rng.random_range(-1.0f32..1.0).to_le_bytes()),
                            DType::F64 => element.copy_from_slice(&rng.random_range(-1.0f64..1.0).to_le_bytes()),
                            // Half precision: an f32 draw, rounded to the type; a draw that
                            // rounds up to 1 is the largest value below it, so the range stays
                            // [-1, 1).
                            DType::F16 => dtype.encode(rng.random_range(-1.0f32..1.0).min(1.0 - 2f32.powi(-11)) as f64, element),
                            DType::BF16 => dtype.encode(rng.random_range(-1.0f32..1.0).min(1.0 - 2f32.powi(-8)) as f64, element),
                            // Integers: [0, 100).
                            _ => dtype.encode(rng.random_range(0u32..100) as f64, element),
                        }
                    }
                });
            }
            Init::Sequence => {
                use rayon::prelude::*;
                data.par_chunks_mut(size).enumerate().for_each(|(i, element)| write_f64(element, dtype, 0, i as f64));
            }
            Init::Constant { value } => {
                use rayon::prelude::*;
                data.par_chunks_mut(size).for_each(|element| write_f64(element, dtype, 0, *value));
            }
            // Read before anything was allocated.
            Init::File { .. } => {}
            Init::Generator { expr } => {
                use rayon::prelude::*;
                let e = crate::spec::expr::Expr::compile(expr, &["i"])
                    .map_err(|e| format!("the generator `{}` is not an expression of i: {e}", crate::spec::error::quote(expr)))?;
                // The first element that fails, if any (an error, never a silent NaN).
                let failed = std::sync::Mutex::new(None::<(usize, String)>);
                data.par_chunks_mut(size).enumerate().for_each(|(i, element)| match e.eval_f64(&[Value::Int(i as i64)]) {
                    Ok(v) => write_f64(element, dtype, 0, v),
                    Err(err) => {
                        let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
                        if f.as_ref().is_none_or(|(j, _)| i < *j) {
                            *f = Some((i, err.to_string()));
                        }
                    }
                });
                if let Some((i, err)) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
                    return Err(format!("the generator `{}` fails at i = {i}: {err}", crate::spec::error::quote(expr)));
                }
            }
        }
        Ok(HostBuffer { name: name.into(), dtype, data, access, memory: Memory::Global })
    }

    /// A copy made by several threads (a plain `clone` copies, and first touches every page, on
    /// one); `None` when the host cannot hold it.
    pub fn par_clone(&self) -> Option<HostBuffer> {
        use rayon::prelude::*;
        let mut data = zeroed(self.data.len())?;
        data.par_chunks_mut(1 << 20).zip(self.data.par_chunks(1 << 20)).for_each(|(to, from)| to.copy_from_slice(from));
        Some(HostBuffer { data, name: self.name.clone(), ..*self })
    }

    /// The same buffer in `memory`.
    pub fn in_memory(mut self, memory: Memory) -> HostBuffer {
        self.memory = memory;
        self
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len() / self.dtype.size()
    }

    /// True when the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Element `i` as f64.
    pub fn get_f64(&self, i: usize) -> f64 {
        let s = self.dtype.size();
        self.dtype.decode(&self.data[i * s..(i + 1) * s])
    }

    /// Sets element `i` from an f64.
    pub fn set_f64(&mut self, i: usize, v: f64) {
        write_f64(&mut self.data, self.dtype, i, v)
    }

    /// The whole buffer as f32 (an f32 buffer straight from its bytes, in parallel, for the
    /// gigabyte-sized inputs of CPU references; others convert).
    pub fn to_f32(&self) -> Vec<f32> {
        use rayon::prelude::*;
        if self.dtype == DType::F32 {
            return self.data.par_chunks_exact(4).map(|x| f32::from_le_bytes([x[0], x[1], x[2], x[3]])).collect();
        }
        (0..self.len()).map(|i| self.get_f64(i) as f32).collect()
    }

    /// Sets the first `values.len()` elements (an f32 buffer straight to its bytes, in
    /// parallel; others convert).
    pub fn set_f32s(&mut self, values: &[f32]) {
        use rayon::prelude::*;
        if self.dtype == DType::F32 {
            self.data[..4 * values.len()].par_chunks_mut(4 << 16).zip(values.par_chunks(1 << 16)).for_each(|(bytes, vals)| {
                for (o, v) in bytes.chunks_exact_mut(4).zip(vals) {
                    o.copy_from_slice(&v.to_le_bytes());
                }
            });
        } else {
            for (i, v) in values.iter().enumerate() {
                self.set_f64(i, *v as f64);
            }
        }
    }

    /// The poison pattern: all bits set (NaN for floats, -1 / MAX for integers).
    pub fn poisoned(&self) -> Vec<u8> {
        vec![0xFF; self.data.len()]
    }
}

pub use crate::limits::human_bytes;

/// `bytes` zero bytes, or `None` when the host cannot hold them. Large blocks come from the
/// allocator already zeroed (fresh pages from the system), so nothing writes them here: a
/// buffer of zeros costs nothing until used, and a filled one is touched once, by the threads
/// that fill it, not first by one thread zeroing it.
fn zeroed(bytes: usize) -> Option<Vec<u8>> {
    if bytes == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(bytes).ok()?;
    // SAFETY: `layout` has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `bytes` u8s (the
    // layout a `Vec<u8>` of capacity `bytes` has), and all `bytes` of it are initialised (zero).
    Some(unsafe { Vec::from_raw_parts(ptr, bytes, bytes) })
}

fn write_f64(data: &mut [u8], dtype: DType, i: usize, v: f64) {
    let s = dtype.size();
    dtype.encode(v, &mut data[i * s..(i + 1) * s]);
}

/// A kernel argument with its host data.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgData {
    /// A device buffer.
    Buffer(HostBuffer),
    /// A by-value scalar.
    Scalar {
        /// Argument name.
        name: String,
        /// Type.
        dtype: DType,
        /// Value.
        value: Value,
    },
}

impl ArgData {
    /// The argument's name.
    pub fn name(&self) -> &str {
        match self {
            ArgData::Buffer(b) => &b.name,
            ArgData::Scalar { name, .. } => name,
        }
    }

    /// Scalar bytes as passed to a kernel.
    pub fn scalar_bytes(dtype: DType, value: &Value) -> Vec<u8> {
        let f = value.as_f64().unwrap_or(0.0);
        let whole = || value.as_i64().unwrap_or(f as i64);
        match dtype {
            DType::F64 => f.to_le_bytes().to_vec(),
            DType::I32 => (whole() as i32).to_le_bytes().to_vec(),
            DType::U32 => (whole() as u32).to_le_bytes().to_vec(),
            DType::I64 => whole().to_le_bytes().to_vec(),
            DType::U64 => (whole() as u64).to_le_bytes().to_vec(),
            DType::I8 => (whole() as i8).to_le_bytes().to_vec(),
            DType::U8 => (whole() as u8).to_le_bytes().to_vec(),
            DType::I16 => (whole() as i16).to_le_bytes().to_vec(),
            DType::U16 => (whole() as u16).to_le_bytes().to_vec(),
            DType::F32 | DType::F16 | DType::BF16 => {
                let mut b = vec![0; dtype.size()];
                dtype.encode(f, &mut b);
                b
            }
        }
    }
}

/// Everything a backend needs to allocate a workspace: the arguments in kernel order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ProblemData {
    /// Arguments, in the kernel's parameter order.
    pub args: Vec<ArgData>,
}

impl ProblemData {
    /// Buffers only, in argument order.
    pub fn buffers(&self) -> impl Iterator<Item = &HostBuffer> {
        self.args.iter().filter_map(|a| match a {
            ArgData::Buffer(b) => Some(b),
            _ => None,
        })
    }

    /// Each buffer's name and size in bytes, in argument order.
    pub fn buffer_sizes(&self) -> Vec<(&str, usize)> {
        self.buffers().map(|b| (b.name.as_str(), b.data.len())).collect()
    }

    /// The data of argument `arg` (a buffer's bytes; empty for a scalar or past the end).
    pub fn buffer_data(&self, arg: usize) -> &[u8] {
        match self.args.get(arg) {
            Some(ArgData::Buffer(b)) => &b.data,
            _ => &[],
        }
    }

    /// A buffer by name.
    pub fn buffer(&self, name: &str) -> Option<&HostBuffer> {
        self.buffers().find(|b| b.name == name)
    }

    /// A scalar's value by name.
    pub fn scalar(&self, name: &str) -> Option<&Value> {
        self.args.iter().find_map(|a| match a {
            ArgData::Scalar { name: n, value, .. } if n == name => Some(value),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn f32_reads_and_writes_agree_with_the_element_accessors() {
        let values: Vec<f32> = (0..200_000).map(|i| i as f32 * 0.25 - 7.0).collect();
        for dtype in [DType::F32, DType::F64, DType::I64] {
            let mut b = HostBuffer::new("x", dtype, values.len() + 3, &Init::Zeros, Access::Write);
            b.set_f32s(&values);
            let want: Vec<f32> = values.iter().map(|v| if dtype == DType::I64 { *v as f64 as i64 as f32 } else { *v }).collect();
            assert_eq!(&b.to_f32()[..values.len()], &want[..], "{dtype:?}");
            assert_eq!(b.get_f64(values.len() - 1), want[values.len() - 1] as f64, "{dtype:?}");
            assert_eq!(b.get_f64(values.len()), 0.0, "{dtype:?}: elements past the values are left alone");
        }
    }

    #[test]
    fn init_kinds() {
        let b = HostBuffer::new("x", DType::F32, 4, &Init::Sequence, Access::Read);
        assert_eq!(b.to_f32(), vec![0.0, 1.0, 2.0, 3.0]);
        let r1 = HostBuffer::new("x", DType::F32, 64, &Init::Random { seed: 7 }, Access::Read);
        let r2 = HostBuffer::new("x", DType::F32, 64, &Init::Random { seed: 7 }, Access::Read);
        assert_eq!(r1, r2);
        assert!(r1.to_f32().iter().all(|v| (-1.0..1.0).contains(v)));
        let c = HostBuffer::new("x", DType::I32, 3, &Init::Constant { value: 5.0 }, Access::Read);
        assert_eq!(c.get_f64(2), 5.0);
        assert!(f32::from_le_bytes(b.poisoned()[..4].try_into().unwrap()).is_nan());
    }

    #[test]
    fn large_buffers_are_filled_whole_from_zeroed_memory() {
        // Past several 64 Ki-element chunks, with a ragged end.
        let n = (1 << 18) + 3;
        let z = HostBuffer::new("z", DType::F64, n, &Init::Zeros, Access::Write);
        assert_eq!(z.data.len(), n * 8);
        assert!(z.data.iter().all(|&b| b == 0));
        let q = HostBuffer::new("q", DType::I32, n, &Init::Sequence, Access::Read);
        assert!((0..n).all(|i| q.get_f64(i) == i as f64));
        let c = HostBuffer::new("c", DType::F32, n, &Init::Constant { value: -2.5 }, Access::Read);
        assert!(c.to_f32().iter().all(|&v| v == -2.5));
        let r = HostBuffer::new("r", DType::F32, n, &Init::Random { seed: 7 }, Access::Read);
        assert_eq!(r, HostBuffer::new("r", DType::F32, n, &Init::Random { seed: 7 }, Access::Read));
        assert!(r.to_f32().iter().all(|v| (-1.0..1.0).contains(v)) && r.get_f64(n - 1) != 0.0);
        // The same data as before the buffers came zeroed from the allocator (these values were
        // also what the previous build made).
        assert_eq!(r.to_f32()[..3], [-0.71999335, -0.68440795, -0.63589]);
        assert!(HostBuffer::new("e", DType::F32, 0, &Init::Random { seed: 1 }, Access::Read).data.is_empty());
    }

    #[test]
    fn a_generator_that_fails_is_an_error_not_nan() {
        let g = |e: &str, n| HostBuffer::try_new("x", DType::F32, n, &Init::Generator { expr: e.into() }, Access::Read);
        assert_eq!(g("i % 7 * 0.5", 16).unwrap().get_f64(3), 1.5);
        let e = g("100 // (i - 5)", 16).unwrap_err();
        assert!(e.contains("fails at i = 5") && e.contains("division by zero"), "{e}");
        assert!(g("j + 1", 4).unwrap_err().contains("not an expression of i"));
        assert!(g("i", MAX_GENERATED + 1).unwrap_err().contains("beyond"));
    }

    #[test]
    fn every_element_type_reads_writes_and_parses() {
        for d in DType::ALL {
            assert_eq!(DType::parse(d.name()), Some(d));
            assert_eq!(serde_json::to_string(&d).unwrap(), format!("\"{}\"", d.name()), "the name a spec and the worker protocol use");
            let mut b = HostBuffer::new("x", d, 5, &Init::Zeros, Access::Write);
            assert_eq!(b.data.len(), 5 * d.size());
            for (i, v) in [0.0, 1.0, -2.0, 100.0, 0.5].into_iter().enumerate() {
                b.set_f64(i, v);
            }
            let signed = !matches!(d, DType::U8 | DType::U16 | DType::U32 | DType::U64);
            let want = [0.0, 1.0, if signed { -2.0 } else { 0.0 }, 100.0, if d.is_float() { 0.5 } else { 0.0 }];
            assert_eq!((0..5).map(|i| b.get_f64(i)).collect::<Vec<_>>(), want, "{d:?}");
            assert!(d.c_type().len() > 2 && DType::names().contains(d.name()));
            let bytes = ArgData::scalar_bytes(d, &Value::Int(3));
            assert_eq!((bytes.len(), d.decode(&bytes)), (d.size(), 3.0), "{d:?} scalar");
            // Random data in the documented ranges; the poison pattern a NaN for every float.
            let r = HostBuffer::new("r", d, 4096, &Init::Random { seed: 3 }, Access::Read);
            let range = if d.is_float() { -1.0..1.0 } else { 0.0..100.0 };
            assert!((0..4096).all(|i| range.contains(&r.get_f64(i))), "{d:?}");
            assert!((0..4096).any(|i| r.get_f64(i) != r.get_f64(0)), "{d:?}");
            if d.is_float() {
                let p = HostBuffer { data: r.poisoned(), ..r.clone() };
                assert!(p.get_f64(7).is_nan(), "{d:?}");
            }
        }
        // The C, NumPy and Kernel Tuner spellings.
        for (name, d) in [("half", DType::F16), ("__half", DType::F16), ("float16", DType::F16), ("bfloat16", DType::BF16), ("__nv_bfloat16", DType::BF16)] {
            assert_eq!(DType::parse(name), Some(d), "{name}");
        }
        for (name, d) in [("unsigned char", DType::U8), ("int8", DType::I8), ("short", DType::I16), ("uint16", DType::U16), ("uint64", DType::U64)] {
            assert_eq!(DType::parse(name), Some(d), "{name}");
        }
        assert_eq!(DType::parse("float4"), None);
    }

    #[test]
    fn half_precision_rounds_to_nearest_and_integers_saturate() {
        let one = |d: DType, v: f64| {
            let mut b = vec![0; d.size()];
            d.encode(v, &mut b);
            (
                b,
                d.decode(&{
                    let mut c = vec![0; d.size()];
                    d.encode(v, &mut c);
                    c
                }),
            )
        };
        // f16: 11 significant bits; 1 + 2^-11 is halfway and rounds to even (1), 1 + 3·2^-11 up.
        assert_eq!(one(DType::F16, 1.0 + 2f64.powi(-11)).1, 1.0);
        assert_eq!(one(DType::F16, 1.0 + 3.0 * 2f64.powi(-11)).1, 1.0 + 2f64.powi(-9));
        assert_eq!(one(DType::F16, 1.0).0, vec![0x00, 0x3C]);
        assert_eq!(one(DType::F16, 70000.0).1, f64::INFINITY, "beyond f16's 65504");
        // bf16: an f32's upper half, 8 significant bits.
        assert_eq!(one(DType::BF16, 1.0).0, vec![0x80, 0x3F]);
        assert_eq!(one(DType::BF16, 1.0 + 2f64.powi(-7)).1, 1.0 + 2f64.powi(-7));
        assert_eq!(one(DType::BF16, 1.0 + 2f64.powi(-9)).1, 1.0);
        assert!(one(DType::BF16, 3.0e38).1.is_finite());
        assert_eq!(one(DType::I8, -200.0).1, -128.0);
        assert_eq!(one(DType::U8, 300.0).1, 255.0);
        assert_eq!(one(DType::I16, 40000.0).1, 32767.0);
        assert_eq!(one(DType::U16, -1.0).1, 0.0);
        assert_eq!(one(DType::U64, 2f64.powi(63)).1, 2f64.powi(63));
    }

    #[test]
    fn npy_files_of_every_type_are_read_or_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let npy = |descr: &str, data: &[u8], n: usize| {
            let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({n},), }}");
            let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
            bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
            bytes.extend_from_slice(header.as_bytes());
            bytes.extend_from_slice(data);
            let path = dir.path().join(format!("{}.npy", descr.replace(['<', '|'], "")));
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let halves = [half::f16::from_f32(1.5), half::f16::from_f32(-0.25)].map(half::f16::to_le_bytes).concat();
        let b = HostBuffer::try_new("h", DType::F16, 2, &Init::File { path: npy("<f2", &halves, 2) }, Access::Read).unwrap();
        assert_eq!((b.get_f64(0), b.get_f64(1)), (1.5, -0.25));
        let bytes = HostBuffer::try_new("u", DType::U8, 3, &Init::File { path: npy("|u1", &[1, 2, 255], 3) }, Access::Read).unwrap();
        assert_eq!(bytes.get_f64(2), 255.0);
        // ml_dtypes saves bfloat16 as two-byte void.
        let bf = [half::bf16::from_f32(2.0)].map(half::bf16::to_le_bytes).concat();
        assert_eq!(HostBuffer::try_new("b", DType::BF16, 1, &Init::File { path: npy("|V2", &bf, 1) }, Access::Read).unwrap().get_f64(0), 2.0);
        let e = HostBuffer::try_new("h", DType::F16, 2, &Init::File { path: npy("<f4", &[0; 8], 2) }, Access::Read).unwrap_err();
        assert!(e.contains("the buffer is __half (`<f2`)") && e.contains("a.astype(np.float16)"), "{e}");
    }
}
