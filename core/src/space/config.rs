//! A configuration: one value for every tunable parameter, plus the standard knobs.

use crate::spec::value::Value;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The knobs every autotuner shares, independent of the kernel's own parameter names.
///
/// A backend reads the ones it understands: `maxnreg` becomes `--maxrregcount` on CUDA,
/// `occupancy` sizes persistent grids (grid = SMs × occupancy), `num_stages` and `num_warps`
/// feed the resource estimates of the config generators.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Knobs {
    /// Threads per block (work-group size), when the kernel's class maps a parameter to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// Warps (NVIDIA) or wavefronts (AMD) per block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_warps: Option<u32>,
    /// Software pipeline stages (multi-buffered shared memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_stages: Option<u32>,
    /// Resident blocks per SM that a persistent grid targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<u32>,
    /// Thread-block cluster size (sm_90+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_ctas: Option<u32>,
    /// Register cap per thread handed to the compiler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maxnreg: Option<u32>,
}

impl Knobs {
    fn entries(&self) -> [(&'static str, Option<u32>); 6] {
        [
            ("threads", self.threads),
            ("num_warps", self.num_warps),
            ("num_stages", self.num_stages),
            ("occupancy", self.occupancy),
            ("num_ctas", self.num_ctas),
            ("maxnreg", self.maxnreg),
        ]
    }

    /// True when no knob is set.
    pub fn is_empty(&self) -> bool {
        self.entries().iter().all(|(_, v)| v.is_none())
    }
}

/// Named parameter values in declaration order, plus knobs.
///
/// The textual form (`Display`, [`Config::key`]) is stable: `name=value` pairs joined by `,` in
/// declaration order, then `@knob=value` for each set knob. It identifies a config in the
/// database and in logs, so two processes that enumerate the same space agree on it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Config {
    /// Parameter name and value pairs, in the space's declaration order.
    pub params: Vec<(String, Value)>,
    /// Standard knobs.
    #[serde(default, skip_serializing_if = "Knobs::is_empty")]
    pub knobs: Knobs,
}

impl Config {
    /// Builds a config from pairs.
    pub fn new<I, S, V>(pairs: I) -> Config
    where
        I: IntoIterator<Item = (S, V)>,
        S: Into<String>,
        V: Into<Value>,
    {
        Config { params: pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect(), knobs: Knobs::default() }
    }

    /// The value of a parameter.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The value of an integer parameter.
    pub fn get_i64(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }

    /// The stable textual key.
    pub fn key(&self) -> String {
        self.to_string()
    }

    /// Parameters as `-D`-style (name, value) pairs, knobs excluded.
    pub fn defines(&self) -> impl Iterator<Item = (&str, String)> {
        self.params.iter().map(|(k, v)| (k.as_str(), v.to_source()))
    }

    /// Parses the textual form back (values parse as int, float, bool, else string).
    pub fn parse(text: &str) -> Option<Config> {
        let mut cfg = Config::default();
        if text.is_empty() {
            return Some(cfg);
        }
        for part in text.split(',') {
            let (k, v) = part.split_once('=')?;
            if let Some(knob) = k.strip_prefix('@') {
                let v: u32 = v.parse().ok()?;
                let slot = match knob {
                    "threads" => &mut cfg.knobs.threads,
                    "num_warps" => &mut cfg.knobs.num_warps,
                    "num_stages" => &mut cfg.knobs.num_stages,
                    "occupancy" => &mut cfg.knobs.occupancy,
                    "num_ctas" => &mut cfg.knobs.num_ctas,
                    "maxnreg" => &mut cfg.knobs.maxnreg,
                    _ => return None,
                };
                *slot = Some(v);
            } else {
                cfg.params.push((k.to_string(), parse_value(v)));
            }
        }
        Some(cfg)
    }
}

/// Parses a value written by [`Value`]'s `Display`.
pub fn parse_value(v: &str) -> Value {
    if let Ok(i) = v.parse::<i64>() {
        Value::Int(i)
    } else if v == "true" || v == "false" {
        Value::Bool(v == "true")
    } else if let Ok(f) = v.parse::<f64>() {
        Value::Float(f)
    } else {
        Value::Str(v.to_string())
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (k, v) in &self.params {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            write!(f, "{k}={v}")?;
        }
        for (k, v) in self.knobs.entries() {
            if let Some(v) = v {
                if !first {
                    f.write_str(",")?;
                }
                first = false;
                write!(f, "@{k}={v}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_round_trips() {
        let mut c = Config::new([("bx", Value::Int(16)), ("pad", Value::Bool(true)), ("t", Value::from("float"))]);
        c.knobs.num_stages = Some(3);
        let s = c.key();
        assert_eq!(s, "bx=16,pad=true,t=float,@num_stages=3");
        assert_eq!(Config::parse(&s).unwrap(), c);
        assert_eq!(c.get_i64("bx"), Some(16));
        let defs: Vec<_> = c.defines().collect();
        assert_eq!(defs[1], ("pad", "1".to_string()));
    }
}
