//! Constant Python expressions that make values and lists, as T1 files and Kernel Tuner scripts
//! write them: `"[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))"`, `"[2**i for i in
//! range(0, 6)]"`, `"(ProblemSize[0]+max(filter_width)-1) * (ProblemSize[1]+max(filter_height)-1)"`.
//!
//! Kernel Tuner hands these strings to Python's `eval`; kerntune evaluates them itself, with no
//! code execution: the text is parsed by `rustpython-parser` and walked by a small interpreter
//! over numbers, booleans, strings and lists (tuples are lists). It knows list and tuple
//! literals, `+` and `*` on lists, indexing and slicing, list comprehensions (several `for`s,
//! `if` filters) and generator expressions, conditional expressions, Python's arithmetic and
//! comparisons, and the functions `range list tuple len min max sum sorted reversed abs int
//! float round pow divmod` and `math.*` / `np.*` `ceil floor sqrt log log2 exp`. Names come
//! from an environment: a T1 file's parameters (each bound to its list of values, as Kernel
//! Tuner binds them) and `ProblemSize`.
//!
//! Every evaluation is bounded ([`EvalLimits`]): text length and nesting depth (through
//! [`crate::spec::expr`]'s parser guard), elements in any list, total elements produced, and
//! steps. Exceeding one is an error that names the limit, never a hang, an abort or a stack
//! overflow.

use crate::spec::error::quote;
use crate::spec::expr::{arith, bin_op, float_to_int, with_python_ast, BinOp, ExprError, Num, MAX_EXPR_DEPTH};
use crate::spec::value::Value;
use rustpython_parser::ast::{self, Constant};
use std::fmt;

/// A value during evaluation.
#[derive(Clone, Debug, PartialEq)]
pub enum PyValue {
    /// An integer (64-bit; overflow is an error).
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(String),
    /// A list or tuple.
    List(Vec<PyValue>),
}

impl fmt::Display for PyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyValue::Int(i) => write!(f, "{i}"),
            PyValue::Float(x) => write!(f, "{x:?}"),
            PyValue::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            PyValue::Str(s) => write!(f, "'{s}'"),
            PyValue::List(l) => {
                f.write_str("[")?;
                for (i, v) in l.iter().take(8).enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                if l.len() > 8 {
                    write!(f, ", … ({} in all)", l.len())?;
                }
                f.write_str("]")
            }
        }
    }
}

impl PyValue {
    /// A scalar as a kerntune [`Value`]; `None` for a list.
    pub fn to_value(&self) -> Option<Value> {
        Some(match self {
            PyValue::Int(i) => Value::Int(*i),
            PyValue::Float(x) => Value::Float(*x),
            PyValue::Bool(b) => Value::Bool(*b),
            PyValue::Str(s) => Value::Str(s.clone()),
            PyValue::List(_) => return None,
        })
    }

    /// A kerntune [`Value`] as a Python value.
    pub fn from_value(v: &Value) -> PyValue {
        match v {
            Value::Int(i) => PyValue::Int(*i),
            Value::Float(x) => PyValue::Float(*x),
            Value::Bool(b) => PyValue::Bool(*b),
            Value::Str(s) => PyValue::Str(s.clone()),
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Bool(_) => "bool",
            PyValue::Str(_) => "str",
            PyValue::List(_) => "list",
        }
    }

    fn num(&self) -> Option<Num> {
        match self {
            PyValue::Int(i) => Some(Num::Int(*i)),
            PyValue::Bool(b) => Some(Num::Int(*b as i64)),
            PyValue::Float(x) => Some(Num::Float(*x)),
            _ => None,
        }
    }

    fn truthy(&self) -> bool {
        match self {
            PyValue::Int(i) => *i != 0,
            PyValue::Float(x) => *x != 0.0,
            PyValue::Bool(b) => *b,
            PyValue::Str(s) => !s.is_empty(),
            PyValue::List(l) => !l.is_empty(),
        }
    }
}

/// How much one evaluation may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalLimits {
    /// Most elements in any one list (or range iterated).
    pub max_list: usize,
    /// Most list elements made in all.
    pub max_elements: usize,
    /// Most interpreter steps (roughly, nodes evaluated).
    pub max_steps: u64,
}

impl Default for EvalLimits {
    /// A million elements per list, four million in all, twenty million steps (well under a
    /// second): far beyond any published search space, far below a hang.
    fn default() -> Self {
        EvalLimits { max_list: 1_000_000, max_elements: 4_000_000, max_steps: 20_000_000 }
    }
}

/// Why an evaluation failed; the message says what and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PyError {
    /// The text is not an expression, or is too long or too deeply nested.
    #[error(transparent)]
    Parse(#[from] ExprError),
    /// Evaluating it failed (an unknown name, a type mismatch, a limit).
    #[error("`{text}`: {message}")]
    Eval {
        /// The expression (quoted short).
        text: String,
        /// What went wrong.
        message: String,
    },
}

/// Evaluates `text` with `env` naming the values it may use.
pub fn eval(text: &str, env: &[(&str, PyValue)]) -> Result<PyValue, PyError> {
    eval_with(text, env, EvalLimits::default())
}

/// Evaluates `text` under explicit limits.
pub fn eval_with(text: &str, env: &[(&str, PyValue)], limits: EvalLimits) -> Result<PyValue, PyError> {
    let text = text.trim();
    let shown = quote(text).into_owned();
    let env: Vec<(String, PyValue)> = env.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let r = with_python_ast(text, move |body| {
        let mut i = Interp { env, scopes: Vec::new(), limits, steps: 0, elements: 0, depth: 0 };
        Ok(i.eval(body))
    })?;
    r.map_err(|message| PyError::Eval { text: shown, message })
}

/// Evaluates `text` as a list of scalar values (a T1 parameter's `Values`); a scalar result is a
/// one-element list.
pub fn eval_values(text: &str, env: &[(&str, PyValue)]) -> Result<Vec<Value>, PyError> {
    let v = eval(text, env)?;
    let items = match v {
        PyValue::List(l) => l,
        scalar => vec![scalar],
    };
    items
        .iter()
        .map(|x| {
            x.to_value().ok_or_else(|| PyError::Eval {
                text: quote(text).into_owned(),
                message: format!("gave a nested list ({x}); values must be numbers, booleans or strings"),
            })
        })
        .collect()
}

/// Evaluates `text` to a non-negative integer (a T1 argument's `Size`); whole floats count.
pub fn eval_count(text: &str, env: &[(&str, PyValue)]) -> Result<u64, PyError> {
    let fail = |message: String| PyError::Eval { text: quote(text).into_owned(), message };
    match eval(text, env)? {
        PyValue::Int(i) => u64::try_from(i).map_err(|_| fail(format!("gave {i}; a size must not be negative"))),
        PyValue::Bool(b) => Ok(b as u64),
        PyValue::Float(x) if x.fract() == 0.0 && x >= 0.0 => Ok(float_to_int(x).map_err(|e| fail(e.to_string()))? as u64),
        other => Err(fail(format!("gave {other}, not a whole non-negative number"))),
    }
}

struct Interp {
    env: Vec<(String, PyValue)>,
    /// Comprehension variables, innermost last.
    scopes: Vec<(String, PyValue)>,
    limits: EvalLimits,
    steps: u64,
    elements: usize,
    depth: usize,
}

type R = Result<PyValue, String>;

impl Interp {
    fn step(&mut self) -> Result<(), String> {
        self.steps += 1;
        if self.steps > self.limits.max_steps {
            return Err(format!("needs more than {} steps to evaluate; simplify it", self.limits.max_steps));
        }
        Ok(())
    }

    /// Accounts for a list of `n` elements about to be made.
    fn make(&mut self, n: usize) -> Result<(), String> {
        if n > self.limits.max_list {
            return Err(format!("makes a list of {n} elements; the limit is {}", self.limits.max_list));
        }
        self.elements = self.elements.saturating_add(n);
        if self.elements > self.limits.max_elements {
            return Err(format!("makes more than {} list elements in all; the limit keeps loading fast", self.limits.max_elements));
        }
        Ok(())
    }

    fn eval(&mut self, e: &ast::Expr) -> R {
        self.step()?;
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return Err(format!("is nested more than {MAX_EXPR_DEPTH} levels deep"));
        }
        let r = self.node(e);
        self.depth -= 1;
        r
    }

    fn node(&mut self, e: &ast::Expr) -> R {
        match e {
            ast::Expr::Constant(c) => constant(&c.value),
            ast::Expr::Name(n) => self.lookup(n.id.as_str()),
            ast::Expr::List(l) => self.seq(&l.elts),
            ast::Expr::Tuple(t) => self.seq(&t.elts),
            ast::Expr::UnaryOp(u) => {
                let v = self.eval(&u.operand)?;
                unary(u.op, v)
            }
            ast::Expr::BinOp(b) => {
                let (l, r) = (self.eval(&b.left)?, self.eval(&b.right)?);
                self.binop(b.op, l, r)
            }
            ast::Expr::BoolOp(b) => {
                let mut last = PyValue::Bool(matches!(b.op, ast::BoolOp::And));
                for v in &b.values {
                    last = self.eval(v)?;
                    if last.truthy() != matches!(b.op, ast::BoolOp::And) {
                        break;
                    }
                }
                Ok(last)
            }
            ast::Expr::Compare(c) => {
                let mut left = self.eval(&c.left)?;
                for (op, rhs) in c.ops.iter().zip(&c.comparators) {
                    let right = self.eval(rhs)?;
                    if !compare(*op, &left, &right)? {
                        return Ok(PyValue::Bool(false));
                    }
                    left = right;
                }
                Ok(PyValue::Bool(true))
            }
            ast::Expr::IfExp(i) => {
                if self.eval(&i.test)?.truthy() {
                    self.eval(&i.body)
                } else {
                    self.eval(&i.orelse)
                }
            }
            ast::Expr::Subscript(s) => {
                let target = self.eval(&s.value)?;
                self.subscript(target, &s.slice)
            }
            ast::Expr::Call(c) => self.call(c),
            ast::Expr::ListComp(c) => self.comprehension(&c.elt, &c.generators),
            ast::Expr::GeneratorExp(g) => self.comprehension(&g.elt, &g.generators),
            ast::Expr::Lambda(_) => Err("uses a lambda, which value expressions do not support".into()),
            ast::Expr::Attribute(_) => Err("uses an attribute; only calls like `math.ceil(x)` are supported".into()),
            _ => Err("uses a construct value expressions do not support (lists, tuples, comprehensions, arithmetic, comparisons and calls are)".into()),
        }
    }

    fn lookup(&self, name: &str) -> R {
        if let Some((_, v)) = self.scopes.iter().rev().find(|(k, _)| k == name) {
            return Ok(v.clone());
        }
        match name {
            "True" => return Ok(PyValue::Bool(true)),
            "False" => return Ok(PyValue::Bool(false)),
            _ => {}
        }
        self.env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).ok_or_else(|| {
            let known: Vec<&str> = self.env.iter().map(|(k, _)| k.as_str()).collect();
            if known.is_empty() {
                format!("uses unknown name `{name}`")
            } else {
                format!("uses unknown name `{name}`; known names: {}", quote(&known.join(", ")))
            }
        })
    }

    fn seq(&mut self, elts: &[ast::Expr]) -> R {
        self.make(elts.len())?;
        let mut out = Vec::with_capacity(elts.len());
        for x in elts {
            out.push(self.eval(x)?);
        }
        Ok(PyValue::List(out))
    }

    fn binop(&mut self, op: ast::Operator, l: PyValue, r: PyValue) -> R {
        match (op, &l, &r) {
            (ast::Operator::Add, PyValue::List(a), PyValue::List(b)) => {
                self.make(a.len() + b.len())?;
                Ok(PyValue::List(a.iter().chain(b).cloned().collect()))
            }
            (ast::Operator::Add, PyValue::Str(a), PyValue::Str(b)) => {
                self.make(a.len() + b.len())?;
                Ok(PyValue::Str(format!("{a}{b}")))
            }
            (ast::Operator::Mult, PyValue::List(a), n) | (ast::Operator::Mult, n, PyValue::List(a)) if matches!(n, PyValue::Int(_) | PyValue::Bool(_)) => {
                let times = usize::try_from(n.num().map_or(0, |x| x.f() as i64).max(0)).unwrap_or(0);
                self.make(a.len().saturating_mul(times))?;
                Ok(PyValue::List(a.iter().cloned().cycle().take(a.len() * times).collect()))
            }
            _ => {
                let (Some(x), Some(y)) = (l.num(), r.num()) else {
                    return Err(format!("cannot apply `{}` to {} and {}", op_text(op), l.type_name(), r.type_name()));
                };
                let op = bin_op(op).ok_or_else(|| "uses the `@` operator".to_string())?;
                arith(op, x, y).map(num_value).map_err(|e| e.0)
            }
        }
    }

    fn subscript(&mut self, target: PyValue, slice: &ast::Expr) -> R {
        let PyValue::List(items) = target else {
            return Err(format!("indexes a {}; only lists and tuples can be indexed", target.type_name()));
        };
        let len = items.len() as i64;
        if let ast::Expr::Slice(s) = slice {
            let bound = |me: &mut Self, x: &Option<Box<ast::Expr>>| -> Result<Option<i64>, String> { x.as_ref().map(|x| me.int_of(x)).transpose() };
            let step = bound(self, &s.step)?.unwrap_or(1);
            if step == 0 {
                return Err("slice step cannot be zero".into());
            }
            let (lo, hi) = (bound(self, &s.lower)?, bound(self, &s.upper)?);
            let clamp = |i: i64, low: i64, high: i64| if i < 0 { (i + len).max(low) } else { i.min(high) };
            let out: Vec<PyValue> = if step > 0 {
                let (a, b) = (lo.map_or(0, |i| clamp(i, 0, len)), hi.map_or(len, |i| clamp(i, 0, len)));
                (a..b.max(a)).step_by(step as usize).map(|i| items[i as usize].clone()).collect()
            } else {
                let (a, b) = (lo.map_or(len - 1, |i| clamp(i, -1, len - 1)), hi.map_or(-1, |i| clamp(i, -1, len - 1)));
                let mut v = Vec::new();
                let mut i = a;
                while i > b {
                    v.push(items[i as usize].clone());
                    i += step;
                }
                v
            };
            self.make(out.len())?;
            return Ok(PyValue::List(out));
        }
        let i = self.int_of(slice)?;
        let at = if i < 0 { i + len } else { i };
        items.get(usize::try_from(at).unwrap_or(usize::MAX)).cloned().ok_or_else(|| format!("index {i} is out of range for a list of {len}"))
    }

    fn int_of(&mut self, e: &ast::Expr) -> Result<i64, String> {
        match self.eval(e)? {
            PyValue::Int(i) => Ok(i),
            PyValue::Bool(b) => Ok(b as i64),
            other => Err(format!("needs an integer, got {other}")),
        }
    }

    fn comprehension(&mut self, elt: &ast::Expr, gens: &[ast::Comprehension]) -> R {
        let mut out = Vec::new();
        self.generate(elt, gens, &mut out)?;
        Ok(PyValue::List(out))
    }

    fn generate(&mut self, elt: &ast::Expr, gens: &[ast::Comprehension], out: &mut Vec<PyValue>) -> Result<(), String> {
        let Some((g, rest)) = gens.split_first() else {
            self.make(1)?;
            if out.len() >= self.limits.max_list {
                return Err(format!("makes a list of more than {0} elements; the limit is {0}", self.limits.max_list));
            }
            let v = self.eval(elt)?;
            out.push(v);
            return Ok(());
        };
        if g.is_async {
            return Err("uses an async comprehension".into());
        }
        let ast::Expr::Name(target) = &g.target else {
            return Err("a comprehension variable must be a plain name".into());
        };
        let PyValue::List(items) = self.eval(&g.iter)? else {
            return Err("a comprehension iterates over a list, a tuple or a range".into());
        };
        for item in items {
            self.step()?;
            self.scopes.push((target.id.to_string(), item));
            let keep = g.ifs.iter().try_fold(true, |k, cond| Ok::<bool, String>(k && self.eval(cond)?.truthy()));
            let r = match keep {
                Ok(true) => self.generate(elt, rest, out),
                Ok(false) => Ok(()),
                Err(e) => Err(e),
            };
            self.scopes.pop();
            r?;
        }
        Ok(())
    }

    fn call(&mut self, c: &ast::ExprCall) -> R {
        if !c.keywords.is_empty() {
            return Err("uses keyword arguments, which value expressions do not support".into());
        }
        let name = match c.func.as_ref() {
            ast::Expr::Name(n) => n.id.to_string(),
            ast::Expr::Attribute(a) => match a.value.as_ref() {
                ast::Expr::Name(m) if ["math", "np", "numpy"].contains(&m.id.as_str()) => a.attr.to_string(),
                _ => return Err("calls a method; only functions and `math.f(x)` / `np.f(x)` are supported".into()),
            },
            _ => return Err("calls a computed function".into()),
        };
        let mut args = Vec::with_capacity(c.args.len());
        for a in &c.args {
            args.push(self.eval(a)?);
        }
        self.builtin(&name, args)
    }

    fn builtin(&mut self, name: &str, args: Vec<PyValue>) -> R {
        let arity = |lo: usize, hi: usize| -> Result<(), String> {
            if args.len() < lo || args.len() > hi {
                Err(format!("`{name}` takes {} arguments, not {}", if lo == hi { lo.to_string() } else { format!("{lo} to {hi}") }, args.len()))
            } else {
                Ok(())
            }
        };
        let list_arg = |v: &PyValue| -> Result<Vec<PyValue>, String> {
            match v {
                PyValue::List(l) => Ok(l.clone()),
                other => Err(format!("`{name}` needs a list, got {other}")),
            }
        };
        let one_num = |v: &PyValue| v.num().ok_or_else(|| format!("`{name}` needs a number, got {v}"));
        match name {
            "range" => {
                arity(1, 3)?;
                let ints: Vec<i64> = args.iter().map(|a| as_int(a).ok_or_else(|| format!("`range` needs integers, got {a}"))).collect::<Result<_, _>>()?;
                let (start, stop, step) = match ints[..] {
                    [stop] => (0, stop, 1),
                    [start, stop] => (start, stop, 1),
                    [start, stop, step] => (start, stop, step),
                    _ => unreachable!("arity checked"),
                };
                if step == 0 {
                    return Err("`range` step must not be zero".into());
                }
                let span = if step > 0 { (stop as i128 - start as i128).max(0) } else { (start as i128 - stop as i128).max(0) };
                let n = (span + step.unsigned_abs() as i128 - 1) / step.unsigned_abs() as i128;
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                self.make(n)?;
                Ok(PyValue::List((0..n as i64).map(|k| PyValue::Int(start + k * step)).collect()))
            }
            "list" | "tuple" | "sorted" | "reversed" => {
                arity(1, 1)?;
                let mut l = match &args[0] {
                    PyValue::Str(s) => s.chars().map(|c| PyValue::Str(c.to_string())).collect(),
                    other => list_arg(other)?,
                };
                self.make(l.len())?;
                if name == "sorted" {
                    let mut err = None;
                    l.sort_by(|a, b| order(a, b).unwrap_or_else(|e| {
                        err.get_or_insert(e);
                        std::cmp::Ordering::Equal
                    }));
                    if let Some(e) = err {
                        return Err(e);
                    }
                } else if name == "reversed" {
                    l.reverse();
                }
                Ok(PyValue::List(l))
            }
            "len" => {
                arity(1, 1)?;
                match &args[0] {
                    PyValue::List(l) => Ok(PyValue::Int(l.len() as i64)),
                    PyValue::Str(s) => Ok(PyValue::Int(s.chars().count() as i64)),
                    other => Err(format!("`len` of a {}", other.type_name())),
                }
            }
            "min" | "max" => {
                let items = if args.len() == 1 { list_arg(&args[0])? } else { args };
                let mut it = items.into_iter();
                let mut best = it.next().ok_or_else(|| format!("`{name}` of an empty list"))?;
                for v in it {
                    let o = order(&v, &best)?;
                    if (name == "min" && o.is_lt()) || (name == "max" && o.is_gt()) {
                        best = v;
                    }
                }
                Ok(best)
            }
            "sum" => {
                arity(1, 2)?;
                let mut acc = args.get(1).cloned().unwrap_or(PyValue::Int(0));
                for v in list_arg(&args[0])? {
                    acc = self.binop(ast::Operator::Add, acc, v)?;
                }
                Ok(acc)
            }
            "abs" => {
                arity(1, 1)?;
                Ok(match one_num(&args[0])? {
                    Num::Int(i) => PyValue::Int(i.checked_abs().ok_or("integer overflow")?),
                    Num::Float(x) => PyValue::Float(x.abs()),
                })
            }
            "int" => {
                arity(1, 1)?;
                match &args[0] {
                    PyValue::Str(s) => s.trim().parse().map(PyValue::Int).map_err(|_| format!("int('{}') is not an integer", quote(s))),
                    v => Ok(PyValue::Int(match one_num(v)? {
                        Num::Int(i) => i,
                        Num::Float(x) => float_to_int(x.trunc()).map_err(|e| e.0)?,
                    })),
                }
            }
            "float" => {
                arity(1, 1)?;
                match &args[0] {
                    PyValue::Str(s) => s.trim().parse().map(PyValue::Float).map_err(|_| format!("float('{}') is not a number", quote(s))),
                    v => Ok(PyValue::Float(one_num(v)?.f())),
                }
            }
            "round" => {
                arity(1, 2)?;
                let x = one_num(&args[0])?.f();
                match args.get(1) {
                    None => Ok(PyValue::Int(float_to_int(x.round_ties_even()).map_err(|e| e.0)?)),
                    Some(d) => {
                        let d = as_int(d).ok_or("`round` digits must be an integer")?.clamp(-300, 300) as i32;
                        let m = 10f64.powi(d);
                        Ok(PyValue::Float((x * m).round_ties_even() / m))
                    }
                }
            }
            "pow" => {
                arity(2, 2)?;
                let (a, b) = (args[0].clone(), args[1].clone());
                self.binop(ast::Operator::Pow, a, b)
            }
            "divmod" => {
                arity(2, 2)?;
                let (a, b) = (one_num(&args[0])?, one_num(&args[1])?);
                let q = arith(BinOp::FloorDiv, a, b).map_err(|e| e.0)?;
                let r = arith(BinOp::Mod, a, b).map_err(|e| e.0)?;
                self.make(2)?;
                Ok(PyValue::List(vec![num_value(q), num_value(r)]))
            }
            "ceil" | "floor" => {
                arity(1, 1)?;
                Ok(PyValue::Int(match one_num(&args[0])? {
                    Num::Int(i) => i,
                    Num::Float(x) => float_to_int(if name == "ceil" { x.ceil() } else { x.floor() }).map_err(|e| e.0)?,
                }))
            }
            "sqrt" | "log" | "log2" | "log10" | "exp" => {
                arity(1, 1)?;
                let x = one_num(&args[0])?.f();
                Ok(PyValue::Float(match name {
                    "sqrt" => x.sqrt(),
                    "log" => x.ln(),
                    "log2" => x.log2(),
                    "log10" => x.log10(),
                    _ => x.exp(),
                }))
            }
            other => Err(format!(
                "calls `{other}`, which value expressions do not have (range, list, tuple, len, min, max, sum, sorted, reversed, abs, int, float, round, pow, divmod, ceil, floor, sqrt, log, log2, log10, exp)"
            )),
        }
    }
}

fn as_int(v: &PyValue) -> Option<i64> {
    match v {
        PyValue::Int(i) => Some(*i),
        PyValue::Bool(b) => Some(*b as i64),
        _ => None,
    }
}

fn num_value(n: Num) -> PyValue {
    match n {
        Num::Int(i) => PyValue::Int(i),
        Num::Float(x) => PyValue::Float(x),
    }
}

fn constant(c: &Constant) -> R {
    Ok(match c {
        Constant::Bool(b) => PyValue::Bool(*b),
        Constant::Int(i) => PyValue::Int(i.to_string().parse::<i64>().map_err(|_| "uses an integer beyond 64 bits".to_string())?),
        Constant::Float(f) => PyValue::Float(*f),
        Constant::Str(s) => PyValue::Str(s.clone()),
        Constant::None => return Err("uses None".into()),
        _ => return Err("uses a kind of constant value expressions do not support".into()),
    })
}

fn unary(op: ast::UnaryOp, v: PyValue) -> R {
    match op {
        ast::UnaryOp::Not => Ok(PyValue::Bool(!v.truthy())),
        ast::UnaryOp::UAdd => v.num().map(num_value).ok_or_else(|| format!("cannot apply unary `+` to a {}", v.type_name())),
        ast::UnaryOp::USub => match v.num() {
            Some(Num::Int(i)) => i.checked_neg().map(PyValue::Int).ok_or_else(|| "integer overflow".to_string()),
            Some(Num::Float(x)) => Ok(PyValue::Float(-x)),
            None => Err(format!("cannot negate a {}", v.type_name())),
        },
        ast::UnaryOp::Invert => as_int(&v).map(|i| PyValue::Int(!i)).ok_or_else(|| format!("`~` needs an integer, got a {}", v.type_name())),
    }
}

fn op_text(op: ast::Operator) -> &'static str {
    match op {
        ast::Operator::Add => "+",
        ast::Operator::Sub => "-",
        ast::Operator::Mult => "*",
        ast::Operator::Div => "/",
        ast::Operator::FloorDiv => "//",
        ast::Operator::Mod => "%",
        ast::Operator::Pow => "**",
        ast::Operator::BitAnd => "&",
        ast::Operator::BitOr => "|",
        ast::Operator::BitXor => "^",
        ast::Operator::LShift => "<<",
        ast::Operator::RShift => ">>",
        ast::Operator::MatMult => "@",
    }
}

/// Python's ordering of two values (numbers with numbers, strings with strings, lists
/// element-wise).
fn order(a: &PyValue, b: &PyValue) -> Result<std::cmp::Ordering, String> {
    match (a, b) {
        (PyValue::Str(x), PyValue::Str(y)) => Ok(x.cmp(y)),
        (PyValue::List(x), PyValue::List(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = order(p, q)?;
                if o.is_ne() {
                    return Ok(o);
                }
            }
            Ok(x.len().cmp(&y.len()))
        }
        _ => match (a.num(), b.num()) {
            (Some(Num::Int(x)), Some(Num::Int(y))) => Ok(x.cmp(&y)),
            (Some(x), Some(y)) => x.f().partial_cmp(&y.f()).ok_or_else(|| "compares with NaN".to_string()),
            _ => Err(format!("cannot order a {} and a {}", a.type_name(), b.type_name())),
        },
    }
}

fn equal(a: &PyValue, b: &PyValue) -> bool {
    match (a, b) {
        (PyValue::Str(x), PyValue::Str(y)) => x == y,
        (PyValue::List(x), PyValue::List(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q)),
        _ => match (a.num(), b.num()) {
            (Some(Num::Int(x)), Some(Num::Int(y))) => x == y,
            (Some(x), Some(y)) => x.f() == y.f(),
            _ => false,
        },
    }
}

fn compare(op: ast::CmpOp, a: &PyValue, b: &PyValue) -> Result<bool, String> {
    Ok(match op {
        ast::CmpOp::Eq | ast::CmpOp::Is => equal(a, b),
        ast::CmpOp::NotEq | ast::CmpOp::IsNot => !equal(a, b),
        ast::CmpOp::Lt => order(a, b)?.is_lt(),
        ast::CmpOp::LtE => order(a, b)?.is_le(),
        ast::CmpOp::Gt => order(a, b)?.is_gt(),
        ast::CmpOp::GtE => order(a, b)?.is_ge(),
        ast::CmpOp::In | ast::CmpOp::NotIn => {
            let found = match b {
                PyValue::List(items) => items.iter().any(|x| equal(a, x)),
                PyValue::Str(s) => matches!(a, PyValue::Str(n) if s.contains(n.as_str())),
                other => return Err(format!("`in` needs a list, tuple or string on its right, got a {}", other.type_name())),
            };
            found == matches!(op, ast::CmpOp::In)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i64]) -> Vec<Value> {
        v.iter().map(|&i| Value::Int(i)).collect()
    }

    #[test]
    fn the_forms_published_files_use() {
        let v = eval_values("[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))", &[]).unwrap();
        assert_eq!(v.len(), 5 + 32);
        assert_eq!((v[5].clone(), v[36].clone()), (Value::Int(32), Value::Int(1024)));
        assert_eq!(eval_values("[2**i for i in range(0, 6)]", &[]).unwrap(), ints(&[1, 2, 4, 8, 16, 32]));
        assert_eq!(eval_values("[i for i in range(1, 11)]", &[]).unwrap(), ints(&(1..=10).collect::<Vec<_>>()));
        assert_eq!(eval_values("[i*j for i in range(1, 4) for j in (1, 10) if i != 2]", &[]).unwrap(), ints(&[1, 10, 3, 30]));
        assert_eq!(eval_values("list(range(32, 1024+1, 32))", &[]).unwrap().len(), 32);
        assert_eq!(eval_values("range(4)", &[]).unwrap(), ints(&[0, 1, 2, 3]));
        assert_eq!(eval_values("[16*2**i for i in range(3)]", &[]).unwrap(), ints(&[16, 32, 64]));
        assert_eq!(eval_values("[0]", &[]).unwrap(), ints(&[0]), "a one-element Default");
        assert_eq!(eval_values("4", &[]).unwrap(), ints(&[4]));
        assert_eq!(eval_values("['float', 'double']", &[]).unwrap(), vec![Value::Str("float".into()), Value::Str("double".into())]);
        assert_eq!(eval_values("[0.5, 1e-3, True]", &[]).unwrap(), vec![Value::Float(0.5), Value::Float(1e-3), Value::Bool(true)]);
        let env = [
            ("ProblemSize", PyValue::List(vec![PyValue::Int(4096), PyValue::Int(4096)])),
            ("filter_width", PyValue::List(vec![PyValue::Int(15)])),
            ("filter_height", PyValue::List(vec![PyValue::Int(15)])),
        ];
        assert_eq!(eval_count("(ProblemSize[0]+max(filter_width)-1) * (ProblemSize[1]+max(filter_height)-1)", &env).unwrap(), 4110 * 4110);
        assert_eq!(eval_count("ProblemSize[0]*ProblemSize[1]", &env).unwrap(), 4096 * 4096);
        assert_eq!(eval_count("max(filter_height) * max(filter_width)", &env).unwrap(), 225);
        assert_eq!(eval_count("ProblemSize[-1] // 2", &env).unwrap(), 2048);
        assert_eq!(eval_count("1", &[]).unwrap(), 1);
    }

    #[test]
    fn python_semantics() {
        let e = |t: &str| eval(t, &[]).unwrap();
        assert_eq!(e("[1, 2] * 2"), eval("[1, 2, 1, 2]", &[]).unwrap());
        assert_eq!(e("[1, 2, 3, 4][1:3]"), eval("[2, 3]", &[]).unwrap());
        assert_eq!(e("[1, 2, 3, 4][::-1]"), eval("[4, 3, 2, 1]", &[]).unwrap());
        assert_eq!(e("[1, 2, 3, 4][-2:]"), eval("[3, 4]", &[]).unwrap());
        assert_eq!(e("sum([1, 2, 3])"), PyValue::Int(6));
        assert_eq!(e("sorted([3, 1, 2])"), eval("[1, 2, 3]", &[]).unwrap());
        assert_eq!(e("len(range(0, 10, 3))"), PyValue::Int(4));
        assert_eq!(e("list(range(10, 0, -3))"), eval("[10, 7, 4, 1]", &[]).unwrap());
        assert_eq!(e("-7 // 2"), PyValue::Int(-4));
        assert_eq!(e("7 / 2"), PyValue::Float(3.5));
        assert_eq!(e("math.ceil(7 / 2)"), PyValue::Int(4));
        assert_eq!(e("2 in [1, 2] and 3 not in (1, 2)"), PyValue::Bool(true));
        assert_eq!(e("1 if [] else 2"), PyValue::Int(2));
        assert_eq!(e("max(x for x in range(5))"), PyValue::Int(4));
        assert_eq!(e("divmod(-7, 2)"), eval("[-4, 1]", &[]).unwrap());
    }

    #[test]
    fn limits_and_errors_are_clear() {
        let err = |t: &str| eval(t, &[]).unwrap_err().to_string();
        assert!(err("list(range(10**9))").contains("makes a list of 1000000000 elements; the limit is 1000000"));
        assert!(err("[i for i in range(999999) for j in range(999999)]").contains("limit"));
        assert!(err("[0] * 10**12").contains("the limit is"));
        assert!(err("2**64").contains("integer overflow"));
        assert!(err("(-2**63) % -1").contains("overflow"), "-2**63 itself overflows: 2**63 does not fit");
        assert_eq!(eval("(-2**62*2) % -1", &[]).unwrap(), PyValue::Int(0));
        assert!(err("(-2**62*2) // -1").contains("overflow"));
        assert!(err("range(1, 5, 0)").contains("step must not be zero"));
        assert!(err("[1, 2][5]").contains("index 5 is out of range"));
        assert!(err("foo + 1").contains("unknown name `foo`"));
        assert!(err("__import__('os')").contains("calls `__import__`"));
        assert!(err("(lambda: 1)()").contains("computed function") || err("(lambda: 1)()").contains("lambda"));
        assert!(err("[1, 2").contains("not an expression"));
        assert!(err("x.y").contains("attribute"));
        // Nesting and length: errors, not stack overflows.
        let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
        assert!(err(&deep).contains("nested more than"), "{}", err(&deep));
        let chain = format!("1{}", "+1".repeat(20_000));
        assert!(err(&chain).contains("nested more than"));
        let long = format!("[{}]", "1, ".repeat(40_000));
        assert!(err(&long).contains("characters long"));
        // Long input is quoted short in the message.
        assert!(err(&long).len() < 600, "{}", err(&long).len());
        // Steps: a small limit trips first.
        let tight = EvalLimits { max_steps: 1000, ..Default::default() };
        assert!(eval_with("sum([i for i in range(5000)])", &[], tight).unwrap_err().to_string().contains("steps"));
        assert!(eval_count("-1", &[]).unwrap_err().to_string().contains("must not be negative"));
        assert!(eval_count("2.5", &[]).unwrap_err().to_string().contains("whole"));
        assert!(eval_values("[[1], 2]", &[]).unwrap_err().to_string().contains("nested list"));
    }
}
