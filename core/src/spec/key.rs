//! Problem keys: the values that decide when a stored winner is reused.

use crate::spec::value::Value;
use serde::{Deserialize, Serialize};

/// How key values are bucketed before lookup, so that nearby shapes share a winner.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bucket {
    /// Exact values.
    #[default]
    Exact,
    /// Integers rounded up to the next power of two (Triton's `autotune(key=...)` habit).
    Pow2,
}

impl Bucket {
    /// Applies the bucket to one value (non-integers pass through).
    pub fn apply(self, v: &Value) -> Value {
        match (self, v) {
            (Bucket::Pow2, Value::Int(i)) if *i > 0 => Value::Int((*i as u64).next_power_of_two() as i64),
            _ => v.clone(),
        }
    }

    /// Applies the bucket to a raw integer (the runtime handle's fast path).
    pub fn apply_i64(self, v: i64) -> i64 {
        match self {
            Bucket::Pow2 if v > 0 => (v as u64).next_power_of_two() as i64,
            _ => v,
        }
    }
}

/// A bucketing function supplied by a library user, in place of the built-in rules.
pub type BucketFn = std::sync::Arc<dyn Fn(&str, &Value) -> Value + Send + Sync>;

/// The key: named values, bucketed, in a stable order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ProblemKey {
    /// Name and bucketed value pairs.
    pub fields: Vec<(String, Value)>,
}

impl ProblemKey {
    /// Builds a key, bucketing each value.
    pub fn new(fields: &[(String, Value)], bucket: Bucket) -> ProblemKey {
        ProblemKey { fields: fields.iter().map(|(k, v)| (k.clone(), bucket.apply(v))).collect() }
    }

    /// Builds a key with a user function.
    pub fn with_fn(fields: &[(String, Value)], f: &BucketFn) -> ProblemKey {
        ProblemKey { fields: fields.iter().map(|(k, v)| (k.clone(), f(k, v))).collect() }
    }

    /// Stable text form: `N=4096,dtype=f32`.
    pub fn text(&self) -> String {
        self.fields.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pow2_buckets() {
        let k = ProblemKey::new(&[("N".into(), Value::Int(3000)), ("t".into(), Value::from("f32"))], Bucket::Pow2);
        assert_eq!(k.text(), "N=4096,t=f32");
        assert_eq!(Bucket::Pow2.apply_i64(4096), 4096);
        assert_eq!(Bucket::Exact.apply_i64(3000), 3000);
        let f: BucketFn = std::sync::Arc::new(|_, v| Value::Int(v.as_i64().unwrap_or(0) / 1000 * 1000));
        assert_eq!(ProblemKey::with_fn(&[("N".into(), Value::Int(3500))], &f).text(), "N=3000");
    }
}
