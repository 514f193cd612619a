//! Who proposed a config, in a tune whose search learns from other devices' results: a short
//! tag each result carries ([`crate::run::ConfigResult::proposed_by`]) and the database keeps in
//! its trace, so that a report can say which evaluations the priors chose and what they found.
//!
//! Tags: [`SOURCES`] (the sources' weighted ranking), `favourite:NAME` (one source's favourite,
//! [`favourite`]), [`CONTRAST`] (the config the sources rank last) and `search:WHY` (the search
//! without priors, given the turn for a reason, [`search`]). A strategy that learns from no
//! prior tags nothing.

/// The sources' ranking (weighted by how well each agrees with what was measured here, and
/// corrected by it) chose the config.
pub const SOURCES: &str = "sources";

/// The config the sources rank last, measured to check that their ranking does not run the
/// wrong way.
pub const CONTRAST: &str = "contrast";

/// Source `name`'s favourite, measured because the first picks serve that source poorly.
pub fn favourite(name: &str) -> String {
    format!("favourite:{name}")
}

/// The search without priors chose it, its turn given for `why` (a word of [`REASONS`]).
pub fn search(why: &str) -> String {
    format!("search:{why}")
}

/// Why a turn went to the search without priors: each tag word and its words for a reader.
pub const REASONS: &[(&str, &str)] = &[
    ("no-prior", "no prior to learn from"),
    ("yardstick", "the yardstick the sources' picks are held to"),
    ("blind", "turns shared in a batch asked before the sources' picks were measured"),
    ("one-source", "turns shared with a single source, or sources ranking alike"),
    ("distrust", "the sources ranking what was measured here worse than chance"),
    ("beaten", "the search ahead of the sources' favourites"),
    ("contrast", "turns shared after the sources' least favourite beat their favourites"),
    ("surprise", "turns shared after a config the sources rank low came close"),
    ("hand-over", "even the best source ranking the sources' own picks poorly"),
    ("stalled", "the sources' picks finding nothing better"),
];

/// Whether the sources' ranking chose a config proposed by `tag` (their weighted ranking, or
/// one source's favourite; not the contrast, which checks that ranking, nor the search's turns).
pub fn from_priors(tag: &str) -> bool {
    tag == SOURCES || tag.starts_with("favourite:")
}

/// `tag` in words, for a report: `the sources' ranking`, `the A100's favourite`, `the search
/// without priors (the yardstick …)`. An unknown tag (a newer kerntune's) is shown as it is.
pub fn words(tag: &str) -> String {
    match tag.split_once(':') {
        None if tag == SOURCES => "the sources' ranking".into(),
        None if tag == CONTRAST => "the sources' least favourite, a check on their ranking".into(),
        Some(("favourite", name)) => format!("{name}'s favourite"),
        Some(("search", why)) => match REASONS.iter().find(|r| r.0 == why) {
            Some((_, said)) => format!("the search without priors: {said}"),
            None => format!("the search without priors: {why}"),
        },
        _ => tag.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tag_reads_as_words_and_says_whether_the_priors_chose_it() {
        assert_eq!(words(SOURCES), "the sources' ranking");
        assert_eq!(words(&favourite("A100")), "A100's favourite");
        assert_eq!(words(&search("stalled")), "the search without priors: the sources' picks finding nothing better");
        assert_eq!(words("search:later"), "the search without priors: later");
        assert_eq!(words("something new"), "something new");
        for (why, _) in REASONS {
            assert!(!from_priors(&search(why)));
            assert!(!words(&search(why)).ends_with(&format!(": {why}")), "{why} has no words");
        }
        assert!(from_priors(SOURCES) && from_priors(&favourite("W6600")) && !from_priors(CONTRAST) && !from_priors("new"));
    }
}
