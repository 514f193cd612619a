//! "Did you mean …?": the known name nearest a misspelt one, for messages about bad input (a
//! spec's unknown key, a parameter the kernel does not use, a `db remove` filter that matches
//! nothing).

/// The candidate nearest `name` by Damerau–Levenshtein distance, ignoring case (a swapped pair
/// of letters is one edit), when it is within a `per`-th of `name`'s length (at least one edit):
/// near enough to be what was meant. Of equally near ones, the first in sort order, so that the
/// hint does not depend on the candidates' order.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>, per: usize) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let bound = (name.chars().count() / per.max(1)).max(1);
    candidates.into_iter().map(|c| (strsim::damerau_levenshtein(&lower, &c.to_lowercase()), c)).filter(|(d, _)| *d <= bound).min().map(|(_, c)| c)
}

/// The ordinals a machine has of `n` devices, for a message about one it lacks: `none`, `only
/// #0`, `#0 and #1`, `#0 to #7`.
pub fn ordinals(n: usize) -> String {
    match n {
        0 => "none".into(),
        1 => "only #0".into(),
        2 => "#0 and #1".into(),
        n => format!("#0 to #{}", n - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::{nearest, ordinals};

    #[test]
    fn the_ordinals_a_machine_has_are_named() {
        assert_eq!(["none", "only #0", "#0 and #1", "#0 to #7"], [0, 1, 2, 8].map(ordinals));
    }

    #[test]
    fn the_nearest_name_within_the_bound_is_hinted() {
        let keys = ["warmup_min", "max_reps", "min_reps", "atol"];
        assert_eq!(nearest("max_rep", keys, 3), Some("max_reps"));
        assert_eq!(nearest("MAX_REPS", keys, 3), Some("max_reps"));
        // A swapped pair is one edit.
        assert_eq!(nearest("mxa_reps", keys, 4), Some("max_reps"));
        // Two edits in six letters: within a third, not within a quarter.
        assert_eq!(nearest("abstol", keys, 3), Some("atol"));
        assert_eq!(nearest("abstol", keys, 4), None);
        assert_eq!(nearest("seed", keys, 3), None);
        // Equally near: the first in sort order, whatever the candidates' order.
        assert_eq!(nearest("ab", ["ac", "aa"], 3), Some("aa"));
        assert_eq!(nearest("ab", ["aa", "ac"], 3), Some("aa"));
    }
}
