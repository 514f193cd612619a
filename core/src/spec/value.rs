//! Parameter values: the scalars a tunable parameter, a problem size or an expression takes.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One value of a tunable parameter or problem variable.
///
/// Integers, floats, booleans and strings cover every parameter kind seen in Kernel Tuner,
/// Triton and T1 files. Equality and hashing use the textual form, so `Float(1.0)` and `Int(1)`
/// are different values (as they are different `-D` defines).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// A boolean (`true`/`false`), written as `1`/`0` into C defines.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A string, e.g. a type name such as `float`.
    Str(String),
}

impl Value {
    /// The value as an integer, if it is one (booleans count as 0/1, integral floats too).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(*b as i64),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(*f as i64),
            _ => None,
        }
    }

    /// The value as a float, if it is numeric.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Bool(b) => Some(*b as i64 as f64),
            Value::Str(_) => None,
        }
    }

    /// Python truthiness: zero, empty and false are false.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
        }
    }

    /// The form written into source code as a define or constant.
    pub fn to_source(&self) -> String {
        match self {
            Value::Bool(b) => (*b as i32).to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => format_float(*f),
            Value::Str(s) => s.clone(),
        }
    }

    /// Converts a TOML value (from a spec) into a parameter value.
    pub fn from_toml(v: &toml::Value) -> Option<Value> {
        match v {
            toml::Value::Integer(i) => Some(Value::Int(*i)),
            toml::Value::Float(f) => Some(Value::Float(*f)),
            toml::Value::Boolean(b) => Some(Value::Bool(*b)),
            toml::Value::String(s) => Some(Value::Str(s.clone())),
            _ => None,
        }
    }

    /// Converts a JSON value (from a Kernel Tuner cache or T1 file) into a parameter value.
    pub fn from_json(v: &serde_json::Value) -> Option<Value> {
        match v {
            serde_json::Value::Bool(b) => Some(Value::Bool(*b)),
            serde_json::Value::Number(n) => n.as_i64().map(Value::Int).or_else(|| n.as_f64().map(Value::Float)),
            serde_json::Value::String(s) => Some(Value::Str(s.clone())),
            _ => None,
        }
    }
}

fn format_float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => f.write_str(&format_float(*x)),
            Value::Str(s) => f.write_str(s),
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            (Value::Str(a), Value::Str(b)) => a == b,
            _ => false,
        }
    }
}
impl Eq for Value {}

impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Value::Bool(b) => b.hash(state),
            Value::Int(i) => i.hash(state),
            Value::Float(f) => f.to_bits().hash(state),
            Value::Str(s) => s.hash(state),
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(v as i64)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(v.to_string())
    }
}

/// Two values' texts in their natural order: numbers by size where both read as one (`4` before
/// `16`, `0.5` before `2`), others as text. Parameter values in a report's or a diagnosis's
/// lists, and problem sizes in a database's list of entries, are ordered so.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        _ => a.cmp(b),
    }
}
