//! Typed kernel arguments for launching a tuned kernel on an application's own buffers: what a
//! backend's launch API checks before any launch, so that a wrong argument list is an error and
//! never a launch.
//!
//! A backend's buffer and scalar types implement [`Arg`] (what the argument is, and a buffer's
//! length); a tuple of them implements [`Args`]. The expected list comes from the job
//! ([`Signature`]): the count, each argument's kind and element type, whether the kernel writes
//! a buffer, and each buffer's length for the problem the kernel was tuned for. Checking the
//! kinds and types of an argument tuple is done once per tuple type ([`Signature::check_types`]
//! caches it); lengths are compared on every launch (a few integer comparisons).

use crate::plan::prepare::{ArgLayout, LayoutKind};
use crate::spec::problem::{Access, DType, Memory};
use std::sync::atomic::{AtomicPtr, Ordering};

/// What one argument of a launch is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
///
/// ```
/// use kerntune_core::app::args::ArgType;
/// use kerntune_core::DType;
/// let t = ArgType::Buffer { dtype: Some(DType::F32), writable: true };
/// assert_eq!(t.to_string(), "a writable buffer of float");
/// assert_eq!(ArgType::Scalar(DType::U32).to_string(), "an unsigned int scalar");
/// ```
pub enum ArgType {
    /// A device buffer; `dtype` is `None` where the backend's buffers are untyped (wgpu).
    Buffer {
        /// Element type.
        dtype: Option<DType>,
        /// Whether the kernel may write it through this argument (`&mut`).
        writable: bool,
    },
    /// A by-value scalar.
    Scalar(DType),
}

impl std::fmt::Display for ArgType {
    /// With its article: "a writable buffer of float", "an unsigned int scalar".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = match self {
            ArgType::Buffer { dtype: Some(d), writable } => format!("{}buffer of {}", if *writable { "writable " } else { "" }, d.c_type()),
            ArgType::Buffer { dtype: None, writable } => format!("{}buffer", if *writable { "writable " } else { "" }),
            ArgType::Scalar(d) => format!("{} scalar", d.c_type()),
        };
        let an = text.starts_with(['a', 'e', 'i', 'o', 'u']);
        write!(f, "{} {text}", if an { "an" } else { "a" })
    }
}

/// One argument a backend can pass to a kernel.
///
/// ```
/// use kerntune_core::app::args::{Arg, ArgType};
/// use kerntune_core::DType;
///
/// /// An application's own device-buffer type.
/// struct MyBuffer { len: usize }
/// impl Arg for &MyBuffer {
///     const TYPE: ArgType = ArgType::Buffer { dtype: Some(DType::F32), writable: false };
///     fn size(&self) -> Option<u64> { Some(self.len as u64) }
/// }
/// assert_eq!((&MyBuffer { len: 8 }).size(), Some(8));
/// assert_eq!(2.0f32.size(), None); // scalars are Args too
/// ```
pub trait Arg {
    /// What it is.
    const TYPE: ArgType;
    /// A buffer's length in elements (in bytes for an untyped buffer); `None` for a scalar.
    fn size(&self) -> Option<u64>;
}

macro_rules! scalar_args {
    ($($t:ty => $d:ident),*) => {$(
        impl Arg for $t {
            const TYPE: ArgType = ArgType::Scalar(DType::$d);
            fn size(&self) -> Option<u64> {
                None
            }
        }
    )*};
}
crate::element_types!(scalar_args);

/// Calls macro `$m` with every Rust element type and its [`DType`] variant (`f32 => F32, …,
/// half::f16 => F16, …`): the one list the launch APIs' element and scalar types come from.
#[macro_export]
macro_rules! element_types {
    ($m:ident) => {
        $m!(
            f32 => F32, f64 => F64, $crate::half::f16 => F16, $crate::half::bf16 => BF16,
            i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64
        );
    };
}

/// The most arguments a launch passes (the tuples the launch APIs take).
///
/// ```
/// use kerntune_core::app::args::{Args, MAX_ARGS};
/// assert_eq!(<(f32, u32) as Args>::TYPES.len(), 2);
/// assert_eq!(MAX_ARGS, 16);
/// ```
pub const MAX_ARGS: usize = 16;

/// Each argument's length, as a launch checks it (no allocation).
///
/// ```
/// use kerntune_core::app::args::{Args, Lens, MAX_ARGS};
/// let mut lens: Lens = [None; MAX_ARGS];
/// (1.0f32, 7u32).lens(&mut lens);
/// assert_eq!(&lens[..2], &[None, None]);
/// ```
pub type Lens = [Option<u64>; MAX_ARGS];

/// A list of arguments, in the kernel's order: implemented for tuples of up to 16 [`Arg`]s.
/// A backend whose argument types are not its own implements an equivalent trait for tuples
/// and calls [`Signature::check_raw`].
///
/// ```
/// use kerntune_core::fake::app::{In, Out};
/// use kerntune_core::app::args::{ArgType, Args};
/// use kerntune_core::DType;
/// type Triad<'a> = (In<'a>, Out<'a>, f32);
/// assert_eq!(<Triad as Args>::TYPES[2], ArgType::Scalar(DType::F32));
/// ```
pub trait Args {
    /// The arguments' types.
    const TYPES: &'static [ArgType];
    /// Each argument's length (see [`Arg::size`]), from index 0.
    fn lens(&self, out: &mut Lens);
}

macro_rules! impl_args {
    ($($t:ident $i:tt),*) => {
        impl<$($t: Arg),*> Args for ($($t,)*) {
            const TYPES: &'static [ArgType] = &[$($t::TYPE),*];
            #[allow(unused_variables)]
            fn lens(&self, out: &mut Lens) {
                $(out[$i] = self.$i.size();)*
            }
        }
    };
}
impl_args!();
impl_args!(A 0);
impl_args!(A 0, B 1);
impl_args!(A 0, B 1, C 2);
impl_args!(A 0, B 1, C 2, D 3);
impl_args!(A 0, B 1, C 2, D 3, E 4);
impl_args!(A 0, B 1, C 2, D 3, E 4, F 5);
impl_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
impl_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
impl_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
impl_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
impl_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
impl_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
impl_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
impl_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
impl_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
impl_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);

/// Why a launch was refused (nothing was launched).
#[derive(Debug, thiserror::Error)]
///
/// ```
/// use kerntune_core::fake::app::{FakeTunable, In};
/// use kerntune_core::{LaunchError, Policy};
/// let (tuner, job) = kerntune_core::fake::example();
/// let app = FakeTunable::new(tuner, job, Default::default(), Policy::Default, &[]);
/// let k = app.kernel(&[1024])?;
/// let x = vec![0f32; 1024];
/// let e = k.launch((In(&x),)).unwrap_err();
/// assert!(matches!(e, LaunchError::WrongCount { expected: 2, given: 1, .. }));
/// assert_eq!(e.to_string(), "kernel `k` takes 2 arguments (x, y), 1 were given");
/// # Ok::<(), kerntune_core::Error>(())
/// ```
pub enum LaunchError {
    /// Not as many arguments as the kernel takes.
    #[error("kernel `{kernel}` takes {expected} arguments ({names}), {given} were given")]
    WrongCount {
        /// The kernel.
        kernel: String,
        /// Arguments it takes.
        expected: usize,
        /// Arguments given.
        given: usize,
        /// Their names, in order.
        names: String,
    },
    /// An argument of the wrong kind or type.
    #[error("kernel `{kernel}`, argument {index} (`{name}`): expected {expected}, got {given}")]
    WrongType {
        /// The kernel.
        kernel: String,
        /// Its position.
        index: usize,
        /// Its name in the spec.
        name: String,
        /// What the spec declares.
        expected: ArgType,
        /// What was given.
        given: ArgType,
    },
    /// A buffer shorter than the problem the kernel was tuned and compiled for needs.
    #[error("kernel `{kernel}`, argument {index} (`{name}`): the buffer holds {len} {unit}, the problem needs {needs}")]
    TooShort {
        /// The kernel.
        kernel: String,
        /// Its position.
        index: usize,
        /// Its name.
        name: String,
        /// Its length.
        len: u64,
        /// The length needed.
        needs: u64,
        /// `elements` or `bytes`.
        unit: &'static str,
    },
    /// The device refused the launch, or the arguments belong to another device or context.
    #[error("kernel `{kernel}`: {message}")]
    Device {
        /// The kernel.
        kernel: String,
        /// What happened.
        message: String,
    },
}

/// The arguments a kernel expects for one problem: what a launch is checked against.
#[derive(Debug)]
///
/// ```
/// # let (_, job) = kerntune_core::fake::example();
/// # let prep = kerntune_core::Prepared::new(&job).unwrap();
/// use kerntune_core::fake::app::{In, Out};
/// use kerntune_core::app::Signature;
/// let sig = Signature::new("k", &prep.layout, true, true);
/// let (x, mut y, mut short) = (vec![0f32; 1024], vec![0f32; 1024], vec![0f32; 10]);
/// assert!(sig.check(&(In(&x), Out(&mut y))).is_ok());
/// assert!(sig.check(&(In(&x), Out(&mut short))).is_err());
/// ```
pub struct Signature {
    kernel: String,
    args: Vec<Expected>,
    /// The type list of the argument tuple checked last (a `'static` slice of the tuple type's).
    checked: AtomicPtr<ArgType>,
}

#[derive(Clone, Debug)]
struct Expected {
    name: String,
    ty: ArgType,
    /// Elements (or bytes, for untyped buffers) the problem needs.
    needs: Option<u64>,
}

impl Signature {
    /// The signature of `kernel` for a problem laid out as `layout`. `typed_buffers`: whether
    /// the backend's buffers carry an element type (CUDA and HIP do; wgpu's are bytes, so their
    /// lengths are checked in bytes). `scalars`: whether scalars are passed at launch (wgpu
    /// compiles them in). Constant-memory buffers that are not arguments are left out.
    ///
    /// ```
    /// # let (_, job) = kerntune_core::fake::example();
    /// # let prep = kerntune_core::Prepared::new(&job).unwrap();
    /// // wgpu: untyped buffers (lengths in bytes), scalars compiled in.
    /// let sig = kerntune_core::app::Signature::new("k", &prep.layout, false, false);
    /// assert_eq!(sig.len(), 2);
    /// ```
    pub fn new(kernel: &str, layout: &[ArgLayout], typed_buffers: bool, scalars: bool) -> Signature {
        let args = layout
            .iter()
            .filter_map(|a| match &a.kind {
                LayoutKind::Buffer { elements, bytes, access, memory } => (*memory != Memory::Constant { argument: false }).then(|| Expected {
                    name: a.name.clone(),
                    ty: ArgType::Buffer { dtype: typed_buffers.then_some(a.dtype), writable: *access != Access::Read },
                    needs: Some(if typed_buffers { *elements } else { *bytes }),
                }),
                LayoutKind::Scalar { .. } => scalars.then(|| Expected { name: a.name.clone(), ty: ArgType::Scalar(a.dtype), needs: None }),
            })
            .collect();
        Signature { kernel: kernel.to_string(), args, checked: AtomicPtr::new(std::ptr::null_mut()) }
    }

    /// Number of arguments a launch passes.
    ///
    /// ```
    /// # let (_, job) = kerntune_core::fake::example();
    /// # let prep = kerntune_core::Prepared::new(&job).unwrap();
    /// assert_eq!(kerntune_core::app::Signature::new("k", &prep.layout, true, true).len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.args.len()
    }

    /// True when the kernel takes no argument.
    ///
    /// ```
    /// # let (_, job) = kerntune_core::fake::example();
    /// # let prep = kerntune_core::Prepared::new(&job).unwrap();
    /// assert!(!kerntune_core::app::Signature::new("k", &prep.layout, true, true).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }

    /// Checks the kinds and types of a tuple type's arguments (`given`: its `'static` type
    /// list) against the spec; after the first success for a list, a pointer comparison. A
    /// read-only argument may be given as writable (`&mut`) but not the other way round.
    ///
    /// ```
    /// # let (_, job) = kerntune_core::fake::example();
    /// # let prep = kerntune_core::Prepared::new(&job).unwrap();
    /// use kerntune_core::fake::app::{In, Out};
    /// use kerntune_core::app::args::Args;
    /// let sig = kerntune_core::app::Signature::new("k", &prep.layout, true, true);
    /// assert!(sig.check_types(<(In, Out) as Args>::TYPES).is_ok());
    /// let e = sig.check_types(<(In, In) as Args>::TYPES).unwrap_err();
    /// assert!(e.to_string().contains("expected a writable buffer of float"));
    /// ```
    pub fn check_types(&self, given: &'static [ArgType]) -> Result<(), LaunchError> {
        if std::ptr::eq(self.checked.load(Ordering::Relaxed), given.as_ptr()) && given.len() == self.args.len() {
            return Ok(());
        }
        if given.len() != self.args.len() {
            return Err(LaunchError::WrongCount {
                kernel: self.kernel.clone(),
                expected: self.args.len(),
                given: given.len(),
                names: self.args.iter().map(|a| a.name.as_str()).collect::<Vec<_>>().join(", "),
            });
        }
        for (index, (e, g)) in self.args.iter().zip(given).enumerate() {
            let fits = match (e.ty, *g) {
                (ArgType::Buffer { dtype: ed, writable: ew }, ArgType::Buffer { dtype: gd, writable: gw }) => {
                    (ed.is_none() || gd.is_none() || ed == gd) && (gw || !ew)
                }
                (ArgType::Scalar(ed), ArgType::Scalar(gd)) => ed == gd,
                _ => false,
            };
            if !fits {
                return Err(LaunchError::WrongType { kernel: self.kernel.clone(), index, name: e.name.clone(), expected: e.ty, given: *g });
            }
        }
        self.checked.store(given.as_ptr().cast_mut(), Ordering::Relaxed);
        Ok(())
    }

    /// Checks every buffer's length against the problem's (`lens` from [`Args::lens`]).
    ///
    /// ```
    /// # let (_, job) = kerntune_core::fake::example();
    /// # let prep = kerntune_core::Prepared::new(&job).unwrap();
    /// let sig = kerntune_core::app::Signature::new("k", &prep.layout, true, true);
    /// assert!(sig.check_lens(&[Some(1024), Some(4096)]).is_ok());
    /// let e = sig.check_lens(&[Some(1024), Some(1000)]).unwrap_err();
    /// assert_eq!(e.to_string(), "kernel `k`, argument 1 (`y`): the buffer holds 1000 elements, the problem needs 1024");
    /// ```
    pub fn check_lens(&self, lens: &[Option<u64>]) -> Result<(), LaunchError> {
        for (index, (e, len)) in self.args.iter().zip(lens).enumerate() {
            if let (Some(needs), Some(len)) = (e.needs, *len) {
                if len < needs {
                    let unit = if matches!(e.ty, ArgType::Buffer { dtype: None, .. }) { "bytes" } else { "elements" };
                    return Err(LaunchError::TooShort { kernel: self.kernel.clone(), index, name: e.name.clone(), len, needs, unit });
                }
            }
        }
        Ok(())
    }

    /// Both checks for one launch of `args`; nothing is allocated.
    ///
    /// ```
    /// # let (_, job) = kerntune_core::fake::example();
    /// # let prep = kerntune_core::Prepared::new(&job).unwrap();
    /// use kerntune_core::fake::app::{In, Out};
    /// let sig = kerntune_core::app::Signature::new("k", &prep.layout, true, true);
    /// let (x, mut y) = (vec![0f32; 1024], vec![0f32; 1024]);
    /// sig.check(&(In(&x), Out(&mut y)))?;
    /// # Ok::<(), kerntune_core::LaunchError>(())
    /// ```
    pub fn check<A: Args>(&self, args: &A) -> Result<(), LaunchError> {
        let mut lens: Lens = [None; MAX_ARGS];
        args.lens(&mut lens);
        self.check_raw(A::TYPES, &lens)
    }

    /// Both checks, for a backend's own tuple trait: the tuple type's `'static` type list and
    /// the arguments' lengths.
    ///
    /// ```
    /// # let (_, job) = kerntune_core::fake::example();
    /// # let prep = kerntune_core::Prepared::new(&job).unwrap();
    /// use kerntune_core::fake::app::{In, Out};
    /// use kerntune_core::app::args::{Args, Lens, MAX_ARGS};
    /// let sig = kerntune_core::app::Signature::new("k", &prep.layout, true, true);
    /// let mut lens: Lens = [None; MAX_ARGS];
    /// lens[0] = Some(1024);
    /// lens[1] = Some(1024);
    /// sig.check_raw(<(In, Out) as Args>::TYPES, &lens)?;
    /// # Ok::<(), kerntune_core::LaunchError>(())
    /// ```
    pub fn check_raw(&self, types: &'static [ArgType], lens: &Lens) -> Result<(), LaunchError> {
        self.check_types(types)?;
        self.check_lens(&lens[..types.len().min(MAX_ARGS)])
    }

    /// The kernel's name, for messages.
    ///
    /// ```
    /// # let (_, job) = kerntune_core::fake::example();
    /// # let prep = kerntune_core::Prepared::new(&job).unwrap();
    /// assert_eq!(kerntune_core::app::Signature::new("k", &prep.layout, true, true).kernel(), "k");
    /// ```
    pub fn kernel(&self) -> &str {
        &self.kernel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Buf(u64, bool);
    struct BufF32(u64);
    struct MutF32(u64);
    impl Arg for BufF32 {
        const TYPE: ArgType = ArgType::Buffer { dtype: Some(DType::F32), writable: false };
        fn size(&self) -> Option<u64> {
            Some(self.0)
        }
    }
    impl Arg for MutF32 {
        const TYPE: ArgType = ArgType::Buffer { dtype: Some(DType::F32), writable: true };
        fn size(&self) -> Option<u64> {
            Some(self.0)
        }
    }
    impl Arg for Buf {
        const TYPE: ArgType = ArgType::Buffer { dtype: None, writable: true };
        fn size(&self) -> Option<u64> {
            Some(self.0 + self.1 as u64)
        }
    }

    fn triad() -> Vec<ArgLayout> {
        let buf = |name: &str, access| ArgLayout {
            name: name.into(),
            dtype: DType::F32,
            kind: LayoutKind::Buffer { elements: 1000, bytes: 4000, access, memory: Memory::Global },
        };
        vec![
            buf("x", Access::Read),
            buf("y", Access::ReadWrite),
            ArgLayout { name: "a".into(), dtype: DType::F32, kind: LayoutKind::Scalar { value: 2.0.into() } },
        ]
    }

    #[test]
    fn counts_types_and_lengths_are_checked() {
        let s = Signature::new("triad", &triad(), true, true);
        s.check(&(BufF32(1000), MutF32(1000), 2.0f32)).unwrap();
        // A longer buffer is fine; a read-only one may be passed writable.
        s.check(&(MutF32(5000), MutF32(1000), 2.0f32)).unwrap();
        let e = s.check(&(BufF32(1000), MutF32(1000))).unwrap_err().to_string();
        assert_eq!(e, "kernel `triad` takes 3 arguments (x, y, a), 2 were given");
        let e = s.check(&(BufF32(1000), BufF32(1000), 2.0f32)).unwrap_err().to_string();
        assert_eq!(e, "kernel `triad`, argument 1 (`y`): expected a writable buffer of float, got a buffer of float");
        let e = s.check(&(BufF32(1000), MutF32(1000), MutF32(3))).unwrap_err().to_string();
        assert!(e.contains("argument 2 (`a`): expected a float scalar"), "{e}");
        let e = s.check(&(BufF32(999), MutF32(1000), 2.0f32)).unwrap_err().to_string();
        assert_eq!(e, "kernel `triad`, argument 0 (`x`): the buffer holds 999 elements, the problem needs 1000");
        // Untyped buffers (wgpu) and no scalars: lengths in bytes.
        let w = Signature::new("triad", &triad(), false, false);
        w.check(&(Buf(4000, false), Buf(4000, false))).unwrap();
        let e = w.check(&(Buf(3999, false), Buf(4000, false))).unwrap_err().to_string();
        assert!(e.contains("holds 3999 bytes, the problem needs 4000"), "{e}");
    }
}
