//! Expressions over parameter and problem names: restrictions, launch geometry, resource
//! formulas and key buckets.
//!
//! The syntax is Python's expression syntax, because that is what Kernel Tuner restrictions, T1
//! files and most published search spaces use: `and`/`or`/`not`, chained comparisons
//! (`64 <= a*b <= 1024`), true division `/` (yields a float), floor division `//`, Python's `%`
//! (result takes the divisor's sign), `**`, `x if c else y`, `x in (1, 2, 4)`, and the functions
//! `min max abs int float round ceil floor sqrt log log2 log10 exp pow div_ceil`, the
//! trigonometric and hyperbolic ones (`sin cos tan asin acos atan atan2 sinh cosh tanh hypot`,
//! for data generated from an element's index) — each also as `math.ceil`, `np.ceil` — and the
//! constants `math.pi`, `math.e`, `math.tau`, `math.inf` (`np.pi` alike). Parsing is done by the `rustpython-parser` crate; the tree is then compiled
//! into a small evaluator whose variables are slot indices, so that evaluating a restriction
//! for one configuration costs tens of nanoseconds and allocates nothing.

use crate::spec::error::quote;
use crate::spec::value::Value;
use rustpython_parser::ast::{self, Constant};
use std::fmt;

/// Why an expression could not be compiled.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ExprError {
    /// The text is not a Python expression.
    #[error("`{source_text}` is not an expression: {message}")]
    Syntax {
        /// The expression text.
        source_text: String,
        /// The parser's message.
        message: String,
    },
    /// A name in the expression is neither a parameter nor a problem variable.
    #[error("`{source_text}` uses unknown name `{name}`; known names: {known}")]
    UnknownName {
        /// The expression text.
        source_text: String,
        /// The unknown name.
        name: String,
        /// The names that could have been used, comma separated.
        known: String,
    },
    /// The expression is longer or more deeply nested than the limits allow.
    #[error("`{source_text}` {what}; simplify it")]
    TooComplex {
        /// The expression text (quoted short).
        source_text: String,
        /// Which limit.
        what: String,
    },
    /// A construct outside the supported subset (lambdas, comprehensions, ...).
    #[error("`{source_text}` uses {what}, which expressions here do not support")]
    Unsupported {
        /// The expression text.
        source_text: String,
        /// What was found.
        what: String,
    },
}

/// An error while evaluating a compiled expression (division by zero, a type mismatch).
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("{0}")]
pub struct EvalError(pub String);

#[derive(Clone, Copy, Debug)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

#[derive(Clone, Copy, Debug)]
enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
}

#[derive(Clone, Copy, Debug)]
enum Func {
    Min,
    Max,
    Abs,
    Int,
    Float,
    Round,
    Ceil,
    Floor,
    Sqrt,
    Log,
    Log2,
    Exp,
    Pow,
    DivCeil,
    Log10,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Hypot,
}

#[derive(Clone, Debug)]
enum Node {
    Const(Value),
    Var(usize),
    Not(Box<Node>),
    Neg(Box<Node>),
    Invert(Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
    And(Vec<Node>),
    Or(Vec<Node>),
    Compare(Box<Node>, Vec<(CmpOp, Node)>),
    IfElse(Box<Node>, Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
    Seq(Vec<Node>),
}

/// A value during evaluation; strings are borrowed so evaluation never allocates.
#[derive(Clone, Copy, Debug)]
enum V<'a> {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(&'a str),
    Seq(&'a [Node]),
}

impl V<'_> {
    /// The value as a message shows it: a string quoted as written, not Rust's debug form.
    fn shown(&self) -> String {
        match self {
            V::Int(i) => i.to_string(),
            V::Float(f) => f.to_string(),
            V::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            V::Str(s) => format!("the string '{}'", quote(s)),
            V::Seq(_) => "a sequence".to_string(),
        }
    }
}

/// A compiled expression over a fixed list of variable names.
#[derive(Clone, Debug)]
pub struct Expr {
    text: String,
    root: Node,
    vars_used: Vec<usize>,
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Expr {
    /// Compiles `text` with `names[i]` bound to slot `i` at evaluation time.
    pub fn compile(text: &str, names: &[&str]) -> Result<Expr, ExprError> {
        let trimmed = text.trim();
        with_python_ast(trimmed, |body| {
            let mut c = Compiler { text: trimmed, names, used: Vec::new(), depth: 0 };
            let root = c.expr(body)?;
            let mut vars_used = c.used;
            vars_used.sort_unstable();
            vars_used.dedup();
            Ok(Expr { text: trimmed.to_string(), root, vars_used })
        })
    }

    /// The source text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The slots this expression reads, sorted.
    pub fn vars_used(&self) -> &[usize] {
        &self.vars_used
    }

    /// Evaluates with `slots[i]` as the value of name `i`.
    pub fn eval(&self, slots: &[Value]) -> Result<Value, EvalError> {
        let v = eval(&self.root, slots)?;
        Ok(match v {
            V::Int(i) => Value::Int(i),
            V::Float(f) => Value::Float(f),
            V::Bool(b) => Value::Bool(b),
            V::Str(s) => Value::Str(s.to_string()),
            V::Seq(_) => return Err(EvalError("a sequence is not a value".into())),
        })
    }

    /// Evaluates as a condition (Python truthiness).
    pub fn eval_bool(&self, slots: &[Value]) -> Result<bool, EvalError> {
        truthy(eval(&self.root, slots)?)
    }

    /// Evaluates to a float (integers and booleans convert).
    pub fn eval_f64(&self, slots: &[Value]) -> Result<f64, EvalError> {
        num_f(eval(&self.root, slots)?)
    }

    /// Evaluates to an integer; a float result must be integral.
    pub fn eval_i64(&self, slots: &[Value]) -> Result<i64, EvalError> {
        match eval(&self.root, slots)? {
            V::Int(i) => Ok(i),
            V::Bool(b) => Ok(b as i64),
            V::Float(f) if f.fract() == 0.0 => float_to_int(f).map_err(|e| EvalError(format!("`{}`: {e}", quote(&self.text)))),
            V::Float(f) => Err(EvalError(format!("`{}` gave {f}, not a whole number; wrap it in ceil() or int()", quote(&self.text)))),
            other => Err(EvalError(format!("`{}` gave {}, not a number", quote(&self.text), other.shown()))),
        }
    }
}

/// The longest expression accepted, in characters.
pub const MAX_EXPR_CHARS: usize = 64 * 1024;
/// The deepest nesting accepted (each operator, call and bracket is a level).
pub const MAX_EXPR_DEPTH: usize = 200;
/// Above this length, parsing runs on a thread with a large stack (see [`with_python_ast`]).
const BIG_STACK_CHARS: usize = 2048;

fn too_deep(text: &str) -> ExprError {
    ExprError::TooComplex { source_text: quote(text).into_owned(), what: format!("is nested more than {MAX_EXPR_DEPTH} levels deep") }
}

/// Parses `text` as one Python expression and hands its tree to `f`. The limits every
/// expression is held to live here: at most [`MAX_EXPR_CHARS`] characters, and a long text is
/// parsed (and its tree dropped, which recurses) on a thread with a large stack, so that no
/// input can overflow the caller's stack; `f` checks [`MAX_EXPR_DEPTH`] as it walks.
pub(crate) fn with_python_ast<T: Send>(text: &str, f: impl FnOnce(&ast::Expr) -> Result<T, ExprError> + Send) -> Result<T, ExprError> {
    let chars = text.chars().count();
    if chars > MAX_EXPR_CHARS {
        return Err(ExprError::TooComplex {
            source_text: quote(text).into_owned(),
            what: format!("is {chars} characters long; the limit is {MAX_EXPR_CHARS}"),
        });
    }
    let run = || {
        let parsed = rustpython_parser::parse(text, rustpython_parser::Mode::Expression, "<expr>")
            .map_err(|e| ExprError::Syntax { source_text: quote(text).into_owned(), message: e.error.to_string() })?;
        match parsed {
            ast::Mod::Expression(e) => f(&e.body),
            _ => Err(ExprError::Syntax { source_text: quote(text).into_owned(), message: "expected a single expression".into() }),
        }
    };
    if chars <= BIG_STACK_CHARS {
        return run();
    }
    // 64 KiB of text nests at most 64 Ki levels; a frame of the parser's recursive drop is far
    // below 4 KiB, so 256 MiB is ample (only the pages used are ever touched).
    std::thread::scope(|s| std::thread::Builder::new().stack_size(256 << 20).spawn_scoped(s, run).map(|h| h.join()))
        .map_err(|e| ExprError::TooComplex { source_text: quote(text).into_owned(), what: format!("could not be parsed: {e}") })?
        .unwrap_or_else(|_| Err(ExprError::TooComplex { source_text: quote(text).into_owned(), what: "could not be parsed".into() }))
}

struct Compiler<'a> {
    text: &'a str,
    names: &'a [&'a str],
    used: Vec<usize>,
    depth: usize,
}

impl Compiler<'_> {
    fn unsupported(&self, what: &str) -> ExprError {
        ExprError::Unsupported { source_text: quote(self.text).into_owned(), what: what.to_string() }
    }

    fn expr(&mut self, e: &ast::Expr) -> Result<Node, ExprError> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return Err(too_deep(self.text));
        }
        let node = self.node(e);
        self.depth -= 1;
        node
    }

    fn node(&mut self, e: &ast::Expr) -> Result<Node, ExprError> {
        Ok(match e {
            ast::Expr::Constant(c) => Node::Const(self.constant(&c.value)?),
            ast::Expr::Name(n) => {
                let id = n.id.as_str();
                match id {
                    "True" => Node::Const(Value::Bool(true)),
                    "False" => Node::Const(Value::Bool(false)),
                    _ => match self.names.iter().position(|k| *k == id) {
                        Some(i) => {
                            self.used.push(i);
                            Node::Var(i)
                        }
                        None => {
                            return Err(ExprError::UnknownName {
                                source_text: quote(self.text).into_owned(),
                                name: id.to_string(),
                                // A problem that gives no sizes leaves a buffer's length nothing to name.
                                known: if self.names.is_empty() { "none".into() } else { quote(&self.names.join(", ")).into_owned() },
                            });
                        }
                    },
                }
            }
            ast::Expr::BoolOp(b) => {
                let vals = b.values.iter().map(|v| self.expr(v)).collect::<Result<Vec<_>, _>>()?;
                match b.op {
                    ast::BoolOp::And => Node::And(vals),
                    ast::BoolOp::Or => Node::Or(vals),
                }
            }
            ast::Expr::UnaryOp(u) => {
                let inner = Box::new(self.expr(&u.operand)?);
                match u.op {
                    ast::UnaryOp::Not => Node::Not(inner),
                    ast::UnaryOp::USub => Node::Neg(inner),
                    ast::UnaryOp::UAdd => *inner,
                    ast::UnaryOp::Invert => Node::Invert(inner),
                }
            }
            ast::Expr::BinOp(b) => {
                let op = bin_op(b.op).ok_or_else(|| self.unsupported("the `@` operator"))?;
                Node::Bin(op, Box::new(self.expr(&b.left)?), Box::new(self.expr(&b.right)?))
            }
            ast::Expr::Compare(c) => {
                let left = Box::new(self.expr(&c.left)?);
                let mut rest = Vec::with_capacity(c.ops.len());
                for (op, rhs) in c.ops.iter().zip(&c.comparators) {
                    let op = match op {
                        ast::CmpOp::Eq | ast::CmpOp::Is => CmpOp::Eq,
                        ast::CmpOp::NotEq | ast::CmpOp::IsNot => CmpOp::Ne,
                        ast::CmpOp::Lt => CmpOp::Lt,
                        ast::CmpOp::LtE => CmpOp::Le,
                        ast::CmpOp::Gt => CmpOp::Gt,
                        ast::CmpOp::GtE => CmpOp::Ge,
                        ast::CmpOp::In => CmpOp::In,
                        ast::CmpOp::NotIn => CmpOp::NotIn,
                    };
                    rest.push((op, self.expr(rhs)?));
                }
                Node::Compare(left, rest)
            }
            // Python's constants of its math modules: `math.pi`, `np.e`, …
            ast::Expr::Attribute(a) => match a.value.as_ref() {
                ast::Expr::Name(m) if ["math", "np", "numpy"].contains(&m.id.as_str()) => Node::Const(Value::Float(match a.attr.as_str() {
                    "pi" => std::f64::consts::PI,
                    "e" => std::f64::consts::E,
                    "tau" => std::f64::consts::TAU,
                    "inf" => f64::INFINITY,
                    other => return Err(self.unsupported(&format!("`{}.{other}` (constants: pi, e, tau, inf)", m.id))),
                })),
                _ => return Err(self.unsupported("an attribute")),
            },
            ast::Expr::IfExp(i) => Node::IfElse(Box::new(self.expr(&i.test)?), Box::new(self.expr(&i.body)?), Box::new(self.expr(&i.orelse)?)),
            ast::Expr::Tuple(t) => Node::Seq(t.elts.iter().map(|x| self.expr(x)).collect::<Result<_, _>>()?),
            ast::Expr::List(t) => Node::Seq(t.elts.iter().map(|x| self.expr(x)).collect::<Result<_, _>>()?),
            ast::Expr::Set(t) => Node::Seq(t.elts.iter().map(|x| self.expr(x)).collect::<Result<_, _>>()?),
            ast::Expr::Call(call) => {
                if !call.keywords.is_empty() {
                    return Err(self.unsupported("keyword arguments"));
                }
                let fname = match call.func.as_ref() {
                    ast::Expr::Name(n) => n.id.to_string(),
                    ast::Expr::Attribute(a) => match a.value.as_ref() {
                        ast::Expr::Name(m) if ["math", "np", "numpy"].contains(&m.id.as_str()) => a.attr.to_string(),
                        _ => return Err(self.unsupported("an attribute call")),
                    },
                    _ => return Err(self.unsupported("a computed function")),
                };
                let func = match fname.as_str() {
                    "min" => Func::Min,
                    "max" => Func::Max,
                    "abs" => Func::Abs,
                    "int" => Func::Int,
                    "float" => Func::Float,
                    "round" => Func::Round,
                    "ceil" => Func::Ceil,
                    "floor" => Func::Floor,
                    "sqrt" => Func::Sqrt,
                    "log" => Func::Log,
                    "log2" => Func::Log2,
                    "exp" => Func::Exp,
                    "pow" => Func::Pow,
                    "div_ceil" => Func::DivCeil,
                    "log10" => Func::Log10,
                    "sin" => Func::Sin,
                    "cos" => Func::Cos,
                    "tan" => Func::Tan,
                    "asin" | "arcsin" => Func::Asin,
                    "acos" | "arccos" => Func::Acos,
                    "atan" | "arctan" => Func::Atan,
                    "atan2" | "arctan2" => Func::Atan2,
                    "sinh" => Func::Sinh,
                    "cosh" => Func::Cosh,
                    "tanh" => Func::Tanh,
                    "hypot" => Func::Hypot,
                    other => return Err(self.unsupported(&format!("the function `{other}`"))),
                };
                let args = call.args.iter().map(|a| self.expr(a)).collect::<Result<Vec<_>, _>>()?;
                let arity_ok = match func {
                    Func::Min | Func::Max => !args.is_empty(),
                    Func::Pow | Func::DivCeil | Func::Atan2 | Func::Hypot => args.len() == 2,
                    Func::Round => args.len() == 1 || args.len() == 2,
                    _ => args.len() == 1,
                };
                if !arity_ok {
                    return Err(self.unsupported(&format!("`{fname}` with {} arguments", args.len())));
                }
                Node::Call(func, args)
            }
            ast::Expr::Lambda(_) => return Err(self.unsupported("a lambda")),
            ast::Expr::ListComp(_) | ast::Expr::SetComp(_) | ast::Expr::DictComp(_) | ast::Expr::GeneratorExp(_) => {
                return Err(self.unsupported("a comprehension"))
            }
            _ => return Err(self.unsupported("this kind of expression")),
        })
    }

    fn constant(&self, c: &Constant) -> Result<Value, ExprError> {
        Ok(match c {
            Constant::Bool(b) => Value::Bool(*b),
            Constant::Int(i) => Value::Int(i.to_string().parse::<i64>().map_err(|_| self.unsupported("an integer beyond 64 bits"))?),
            Constant::Float(f) => Value::Float(*f),
            Constant::Str(s) => Value::Str(s.clone()),
            _ => return Err(self.unsupported("this kind of constant")),
        })
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError(msg.into()))
}

fn truthy(v: V<'_>) -> Result<bool, EvalError> {
    Ok(match v {
        V::Bool(b) => b,
        V::Int(i) => i != 0,
        V::Float(f) => f != 0.0,
        V::Str(s) => !s.is_empty(),
        V::Seq(s) => !s.is_empty(),
    })
}

fn num_f(v: V<'_>) -> Result<f64, EvalError> {
    match v {
        V::Int(i) => Ok(i as f64),
        V::Float(f) => Ok(f),
        V::Bool(b) => Ok(b as i64 as f64),
        _ => err(format!("{} is not a number", v.shown())),
    }
}

/// An integer view: ints and bools are integers, floats are not.
fn as_int(v: V<'_>) -> Option<i64> {
    match v {
        V::Int(i) => Some(i),
        V::Bool(b) => Some(b as i64),
        _ => None,
    }
}

fn eval<'a>(n: &'a Node, slots: &'a [Value]) -> Result<V<'a>, EvalError> {
    Ok(match n {
        Node::Const(c) => from_value(c),
        Node::Var(i) => from_value(&slots[*i]),
        Node::Not(x) => V::Bool(!truthy(eval(x, slots)?)?),
        Node::Neg(x) => match eval(x, slots)? {
            V::Float(f) => V::Float(-f),
            v => match as_int(v) {
                Some(i) => V::Int(i.checked_neg().ok_or_else(|| EvalError("integer overflow".into()))?),
                None => return err(format!("cannot negate {v:?}")),
            },
        },
        Node::Invert(x) => match as_int(eval(x, slots)?) {
            Some(i) => V::Int(!i),
            None => return err("`~` needs an integer"),
        },
        Node::And(vals) => {
            let mut last = V::Bool(true);
            for v in vals {
                last = eval(v, slots)?;
                if !truthy(last)? {
                    return Ok(last);
                }
            }
            last
        }
        Node::Or(vals) => {
            let mut last = V::Bool(false);
            for v in vals {
                last = eval(v, slots)?;
                if truthy(last)? {
                    return Ok(last);
                }
            }
            last
        }
        Node::Bin(op, a, b) => binop(*op, eval(a, slots)?, eval(b, slots)?)?,
        Node::Compare(left, rest) => {
            let mut lhs = eval(left, slots)?;
            for (op, rn) in rest {
                let rhs = eval(rn, slots)?;
                if !compare(*op, lhs, rhs, slots)? {
                    return Ok(V::Bool(false));
                }
                lhs = rhs;
            }
            V::Bool(true)
        }
        Node::IfElse(c, a, b) => {
            if truthy(eval(c, slots)?)? {
                eval(a, slots)?
            } else {
                eval(b, slots)?
            }
        }
        Node::Seq(items) => V::Seq(items),
        Node::Call(f, args) => call(*f, args, slots)?,
    })
}

fn from_value(v: &Value) -> V<'_> {
    match v {
        Value::Int(i) => V::Int(*i),
        Value::Float(f) => V::Float(*f),
        Value::Bool(b) => V::Bool(*b),
        Value::Str(s) => V::Str(s),
    }
}

fn py_mod_f(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 && (r < 0.0) != (b < 0.0) {
        r + b
    } else {
        r
    }
}

fn binop<'a>(op: BinOp, a: V<'a>, b: V<'a>) -> Result<V<'a>, EvalError> {
    if let (V::Str(_), V::Str(_)) = (a, b) {
        return err("string arithmetic is not supported");
    }
    let num = |v: V<'_>| match v {
        V::Int(i) => Ok(Num::Int(i)),
        V::Bool(b) => Ok(Num::Int(b as i64)),
        V::Float(f) => Ok(Num::Float(f)),
        other => err(format!("{} is not a number", other.shown())),
    };
    Ok(match arith(op, num(a)?, num(b)?)? {
        Num::Int(i) => V::Int(i),
        Num::Float(f) => V::Float(f),
    })
}

/// A number during evaluation: Python's `int` (here 64-bit, overflow is an error) or `float`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    pub(crate) fn f(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

/// A whole float as an integer; an error for NaN, infinities and values beyond 64 bits (Python
/// would make a big integer; a silent saturation would give wrong launch sizes).
pub(crate) fn float_to_int(x: f64) -> Result<i64, EvalError> {
    if x.is_nan() || x.is_infinite() {
        return err(format!("cannot convert {x} to an integer"));
    }
    if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&x) {
        return Err(overflow());
    }
    Ok(x as i64)
}

fn overflow() -> EvalError {
    EvalError("integer overflow: the result does not fit in 64 bits".into())
}

/// Python's floor division of integers, `None` on overflow (`i64::MIN // -1`).
pub(crate) fn floor_div(x: i64, y: i64) -> Option<i64> {
    let q = x.checked_div(y)?;
    Some(if (x % y != 0) && ((x < 0) != (y < 0)) { q - 1 } else { q })
}

/// Python's `%` for integers (the result takes the divisor's sign); `i64::MIN % -1` is 0.
fn py_mod(x: i64, y: i64) -> i64 {
    let r = x.checked_rem(y).unwrap_or(0);
    if r != 0 && ((r < 0) != (y < 0)) {
        r + y
    } else {
        r
    }
}

/// Binary arithmetic with Python's semantics: integers stay integers (checked: overflow is an
/// error, never a wrap or a panic) except under `/`; floats follow IEEE.
pub(crate) fn arith(op: BinOp, a: Num, b: Num) -> Result<Num, EvalError> {
    if let (Num::Int(x), Num::Int(y)) = (a, b) {
        return Ok(Num::Int(match op {
            BinOp::Add => x.checked_add(y).ok_or_else(overflow)?,
            BinOp::Sub => x.checked_sub(y).ok_or_else(overflow)?,
            BinOp::Mul => x.checked_mul(y).ok_or_else(overflow)?,
            BinOp::Div => {
                if y == 0 {
                    return err("division by zero");
                }
                return Ok(Num::Float(x as f64 / y as f64));
            }
            BinOp::FloorDiv => {
                if y == 0 {
                    return err("division by zero");
                }
                floor_div(x, y).ok_or_else(overflow)?
            }
            BinOp::Mod => {
                if y == 0 {
                    return err("modulo by zero");
                }
                py_mod(x, y)
            }
            BinOp::Pow if y >= 0 => x.checked_pow(u32::try_from(y).map_err(|_| overflow())?).ok_or_else(overflow)?,
            BinOp::Pow => return Ok(Num::Float((x as f64).powf(y as f64))),
            BinOp::BitAnd => x & y,
            BinOp::BitOr => x | y,
            BinOp::BitXor => x ^ y,
            BinOp::Shl => {
                let s = u32::try_from(y).map_err(|_| EvalError("negative shift count".into()))?;
                x.checked_shl(s).filter(|r| s < 64 && (r >> s) == x).ok_or_else(overflow)?
            }
            BinOp::Shr => {
                let s = u32::try_from(y).map_err(|_| EvalError("negative shift count".into()))?;
                x >> s.min(63)
            }
        }));
    }
    let (x, y) = (a.f(), b.f());
    Ok(Num::Float(match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => {
            if y == 0.0 {
                return err("division by zero");
            }
            x / y
        }
        BinOp::FloorDiv => {
            if y == 0.0 {
                return err("division by zero");
            }
            (x / y).floor()
        }
        BinOp::Mod => {
            if y == 0.0 {
                return err("modulo by zero");
            }
            py_mod_f(x, y)
        }
        BinOp::Pow => x.powf(y),
        _ => return err("bit operations need integers"),
    }))
}

fn eq(a: V<'_>, b: V<'_>) -> bool {
    match (a, b) {
        (V::Str(x), V::Str(y)) => x == y,
        (V::Str(_), _) | (_, V::Str(_)) | (V::Seq(_), _) | (_, V::Seq(_)) => false,
        _ => match (as_int(a), as_int(b)) {
            (Some(x), Some(y)) => x == y,
            _ => num_f(a).ok() == num_f(b).ok(),
        },
    }
}

fn compare(op: CmpOp, a: V<'_>, b: V<'_>, slots: &[Value]) -> Result<bool, EvalError> {
    let ord = |a: V<'_>, b: V<'_>| -> Result<std::cmp::Ordering, EvalError> {
        match (a, b) {
            (V::Str(x), V::Str(y)) => Ok(x.cmp(y)),
            _ => match (as_int(a), as_int(b)) {
                (Some(x), Some(y)) => Ok(x.cmp(&y)),
                _ => num_f(a)?.partial_cmp(&num_f(b)?).ok_or_else(|| EvalError("comparison with NaN".into())),
            },
        }
    };
    use std::cmp::Ordering::*;
    Ok(match op {
        CmpOp::Eq => eq(a, b),
        CmpOp::Ne => !eq(a, b),
        CmpOp::Lt => ord(a, b)? == Less,
        CmpOp::Le => ord(a, b)? != Greater,
        CmpOp::Gt => ord(a, b)? == Greater,
        CmpOp::Ge => ord(a, b)? != Less,
        CmpOp::In | CmpOp::NotIn => {
            let V::Seq(items) = b else {
                return err("`in` needs a tuple or list on its right");
            };
            let mut found = false;
            for it in items {
                if eq(a, eval(it, slots)?) {
                    found = true;
                    break;
                }
            }
            found == matches!(op, CmpOp::In)
        }
    })
}

fn call<'a>(f: Func, args: &'a [Node], slots: &'a [Value]) -> Result<V<'a>, EvalError> {
    let mut vals = [V::Int(0); 8];
    if args.len() > vals.len() {
        return err("too many arguments");
    }
    for (slot, a) in vals.iter_mut().zip(args) {
        *slot = eval(a, slots)?;
    }
    let vals = &vals[..args.len()];
    let one_f = || num_f(vals[0]);
    Ok(match f {
        Func::Min | Func::Max => {
            let mut best = vals[0];
            for &v in &vals[1..] {
                let o = compare(CmpOp::Lt, v, best, slots)?;
                if o == matches!(f, Func::Min) && !eq(v, best) {
                    best = v;
                }
            }
            best
        }
        Func::Abs => match vals[0] {
            V::Float(x) => V::Float(x.abs()),
            v => V::Int(as_int(v).ok_or_else(|| EvalError("abs needs a number".into()))?.checked_abs().ok_or_else(overflow)?),
        },
        Func::Int => match vals[0] {
            V::Float(x) => V::Int(float_to_int(x.trunc())?),
            V::Str(s) => V::Int(s.trim().parse().map_err(|_| EvalError(format!("int('{s}')")))?),
            v => V::Int(as_int(v).ok_or_else(|| EvalError("int needs a number".into()))?),
        },
        Func::Float => V::Float(one_f()?),
        Func::Round => {
            if vals.len() == 2 {
                let d = as_int(vals[1]).unwrap_or(0) as i32;
                let m = 10f64.powi(d);
                V::Float((one_f()? * m).round_ties_even() / m)
            } else {
                V::Int(float_to_int(one_f()?.round_ties_even())?)
            }
        }
        Func::Ceil => match as_int(vals[0]) {
            Some(i) => V::Int(i),
            None => V::Int(float_to_int(one_f()?.ceil())?),
        },
        Func::Floor => match as_int(vals[0]) {
            Some(i) => V::Int(i),
            None => V::Int(float_to_int(one_f()?.floor())?),
        },
        Func::Sqrt => V::Float(one_f()?.sqrt()),
        Func::Log => V::Float(one_f()?.ln()),
        Func::Log2 => V::Float(one_f()?.log2()),
        Func::Exp => V::Float(one_f()?.exp()),
        Func::Pow => binop(BinOp::Pow, vals[0], vals[1])?,
        Func::Log10 => V::Float(one_f()?.log10()),
        Func::Sin => V::Float(one_f()?.sin()),
        Func::Cos => V::Float(one_f()?.cos()),
        Func::Tan => V::Float(one_f()?.tan()),
        Func::Asin => V::Float(one_f()?.asin()),
        Func::Acos => V::Float(one_f()?.acos()),
        Func::Atan => V::Float(one_f()?.atan()),
        Func::Atan2 => V::Float(one_f()?.atan2(num_f(vals[1])?)),
        Func::Sinh => V::Float(one_f()?.sinh()),
        Func::Cosh => V::Float(one_f()?.cosh()),
        Func::Tanh => V::Float(one_f()?.tanh()),
        Func::Hypot => V::Float(one_f()?.hypot(num_f(vals[1])?)),
        Func::DivCeil => match (as_int(vals[0]), as_int(vals[1])) {
            // -(a // -b): Python's ceiling division, without the overflow of a + b - 1.
            (Some(a), Some(b)) if b != 0 => V::Int(b.checked_neg().and_then(|nb| floor_div(a, nb)).and_then(i64::checked_neg).ok_or_else(overflow)?),
            _ => return err("div_ceil needs two integers, the second non-zero"),
        },
    })
}

/// Python's binary operator as an expression's; `None` for `@`.
pub(crate) fn bin_op(op: ast::Operator) -> Option<BinOp> {
    Some(match op {
        ast::Operator::Add => BinOp::Add,
        ast::Operator::Sub => BinOp::Sub,
        ast::Operator::Mult => BinOp::Mul,
        ast::Operator::Div => BinOp::Div,
        ast::Operator::FloorDiv => BinOp::FloorDiv,
        ast::Operator::Mod => BinOp::Mod,
        ast::Operator::Pow => BinOp::Pow,
        ast::Operator::BitAnd => BinOp::BitAnd,
        ast::Operator::BitOr => BinOp::BitOr,
        ast::Operator::BitXor => BinOp::BitXor,
        ast::Operator::LShift => BinOp::Shl,
        ast::Operator::RShift => BinOp::Shr,
        ast::Operator::MatMult => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(text: &str, names: &[&str], vals: &[Value]) -> Value {
        Expr::compile(text, names).unwrap().eval(vals).unwrap()
    }

    #[test]
    fn python_semantics() {
        let n = ["a", "b"];
        let v = [Value::Int(8), Value::Int(16)];
        assert_eq!(ev("a*a/b", &n, &v), Value::Float(4.0));
        assert_eq!(ev("(a*a)/b == 4", &n, &v), Value::Bool(true));
        assert_eq!(ev("-7 // 2", &n, &v), Value::Int(-4));
        assert_eq!(ev("-7 % 3", &n, &v), Value::Int(2));
        assert_eq!(ev("7 % -3", &n, &v), Value::Int(-2));
        assert_eq!(ev("2 ** 10", &n, &v), Value::Int(1024));
        assert_eq!(ev("4 <= a <= 8", &n, &v), Value::Bool(true));
        assert_eq!(ev("4 <= b <= 8", &n, &v), Value::Bool(false));
        assert_eq!(ev("not a == 8 and b == 16", &n, &v), Value::Bool(false));
        assert_eq!(ev("a == 8 or 1/0", &n, &v), Value::Bool(true));
        assert_eq!(ev("a if b > 10 else b", &n, &v), Value::Int(8));
        assert_eq!(ev("a in (1, 2, 8)", &n, &v), Value::Bool(true));
        assert_eq!(ev("a not in [1, 2, 8]", &n, &v), Value::Bool(false));
        assert_eq!(ev("ceil(b / 3)", &n, &v), Value::Int(6));
        assert_eq!(ev("math.ceil(b / 3)", &n, &v), Value::Int(6));
        assert_eq!(ev("div_ceil(b, 3)", &n, &v), Value::Int(6));
        assert_eq!(ev("min(a, b, 3)", &n, &v), Value::Int(3));
        assert_eq!(ev("max(a, 2.5)", &n, &v), Value::Int(8));
        assert_eq!(ev("int(7/2)", &n, &v), Value::Int(3));
        assert_eq!(ev("True and 3", &n, &v), Value::Int(3));
    }

    #[test]
    fn math_functions_and_constants_are_pythons() {
        let n = ["i"];
        let f = |text: &str, i: i64| match ev(text, &n, &[Value::Int(i)]) {
            Value::Float(x) => x,
            other => panic!("{text}: {other:?}"),
        };
        // A polygon's vertices on the unit circle, as a Kernel Tuner script makes them.
        let x = f("math.cos(2 * math.pi * (i // 2) / 600) if i % 2 == 0 else np.sin(2 * np.pi * (i // 2) / 600)", 301);
        assert!((x - (2.0 * std::f64::consts::PI * 150.0 / 600.0).sin()).abs() < 1e-15 && (x - 1.0).abs() < 1e-12, "{x}");
        assert_eq!(f("atan2(i, 0)", 1), std::f64::consts::FRAC_PI_2);
        assert_eq!(f("hypot(3, i)", 4), 5.0);
        assert_eq!(f("log10(i)", 1000), 3.0);
        assert_eq!(f("tanh(i) + cosh(i) - sinh(i) + tan(i) + asin(i) + acos(i) + atan(i)", 0), 1.0 + std::f64::consts::FRAC_PI_2);
        assert_eq!(f("math.e ** i", 1), std::f64::consts::E);
        assert_eq!(f("math.tau / 2 - numpy.pi", 0), 0.0);
        assert!(f("-math.inf", 0).is_infinite());
        let e = Expr::compile("math.golden", &n).unwrap_err();
        assert!(e.to_string().contains("constants: pi, e, tau, inf"), "{e}");
        assert!(matches!(Expr::compile("atan2(i)", &n), Err(ExprError::Unsupported { .. })));
        assert!(matches!(Expr::compile("os.sep", &n), Err(ExprError::Unsupported { .. })));
    }

    #[test]
    fn errors_name_the_problem() {
        let e = Expr::compile("a <= c", &["a", "b"]).unwrap_err();
        assert!(matches!(e, ExprError::UnknownName { ref name, .. } if name == "c"), "{e}");
        assert!(e.to_string().contains("known names: a, b"));
        let e = Expr::compile("n", &[]).unwrap_err();
        assert!(e.to_string().ends_with("uses unknown name `n`; known names: none"), "{e}");
        let e = Expr::compile("a <= ", &["a"]).unwrap_err();
        assert!(matches!(e, ExprError::Syntax { .. }), "{e}");
        let e = Expr::compile("lambda x: x", &["a"]).unwrap_err();
        assert!(matches!(e, ExprError::Unsupported { .. }), "{e}");
        let x = Expr::compile("a / 0", &["a"]).unwrap();
        assert!(x.eval(&[Value::Int(1)]).is_err());
    }

    #[test]
    fn strings_compare() {
        let n = ["t"];
        let v = [Value::Str("float".into())];
        assert_eq!(ev("t == 'float'", &n, &v), Value::Bool(true));
        assert_eq!(ev("t != 'half' and t == \"float\"", &n, &v), Value::Bool(true));
        assert_eq!(ev("t == 1", &n, &v), Value::Bool(false));
        // Where a number is needed, the message shows the string as written (no Rust debug form).
        let len = Expr::compile("t", &n).unwrap().eval_i64(&v).unwrap_err().to_string();
        assert_eq!(len, "`t` gave the string 'float', not a number");
        let sum = Expr::compile("t + 1", &n).unwrap().eval_f64(&v).unwrap_err().to_string();
        assert_eq!(sum, "the string 'float' is not a number");
    }

    #[test]
    fn limits_and_overflow_are_errors_not_panics() {
        // Parentheses only group (no tree levels); nested lists and unary minus do nest.
        let parens = format!("{}a{}", "(".repeat(5000), ")".repeat(5000));
        assert_eq!(Expr::compile(&parens, &["a"]).unwrap().eval(&[Value::Int(3)]).unwrap(), Value::Int(3));
        for deep in [format!("a in {}1{}", "[".repeat(5000), "]".repeat(5000)), format!("{}a", "-".repeat(5000))] {
            assert!(matches!(Expr::compile(&deep, &["a"]), Err(ExprError::TooComplex { .. })), "{}", &deep[..20]);
        }
        let chain = format!("a{}", "+1".repeat(20_000));
        let e = Expr::compile(&chain, &["a"]).unwrap_err();
        assert!(e.to_string().contains("nested more than 200 levels") && e.to_string().len() < 600, "{e}");
        let long = "a + ".repeat(20_000) + "a";
        assert!(Expr::compile(&long, &["a"]).unwrap_err().to_string().contains("characters long"));
        let min = Value::Int(i64::MIN);
        let ev = |t: &str| Expr::compile(t, &["m"]).unwrap().eval(std::slice::from_ref(&min));
        assert_eq!(ev("m % -1").unwrap(), Value::Int(0));
        for bad in ["m // -1", "div_ceil(m, -1)", "abs(m)", "-m", "m - 1", "m * 2", "int(1e300)", "ceil(1e300)", "round(float('nan'))", "1 << 64", "1 << -1"] {
            let r = Expr::compile(bad, &["m"]).map(|e| e.eval(std::slice::from_ref(&min)));
            assert!(matches!(r, Err(_) | Ok(Err(_))), "{bad}: {r:?}");
        }
        assert_eq!(Expr::compile("div_ceil(7, 2) + div_ceil(-7, 2)", &[]).unwrap().eval(&[]).unwrap(), Value::Int(1));
        assert!(Expr::compile("2.0**2000", &[]).unwrap().eval_i64(&[]).is_err(), "inf is not an integer");
    }
}
