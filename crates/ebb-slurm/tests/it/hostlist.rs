use std::collections::BTreeSet;

use ebb_slurm::hostlist::{compress, expand};
use proptest::prelude::*;

/// Host names as clusters write them: a short prefix (maybe with a rack number inside),
/// then a number, zero-padded or not, or no number at all.
fn host_name() -> impl Strategy<Value = String> {
    prop_oneof![
        ("(gpu|node|rack[0-9]-gpu|[a-c]{0,2})", "[0-9]{1,3}").prop_map(|(p, d)| p + &d),
        "[a-z]{1,6}(\\.lan)?",
        "[0-9]{1,4}",
    ]
}

proptest! {
    #[test]
    fn expand_inverts_compress(names in proptest::collection::vec(host_name(), 0..40)) {
        let spec = compress(&names);
        let expanded = expand(&spec).unwrap();
        let unique: BTreeSet<&String> = expanded.iter().collect();
        prop_assert_eq!(unique.len(), expanded.len(), "{} names a host twice", spec);
        let given: BTreeSet<&String> = names.iter().collect();
        prop_assert_eq!(unique, given, "{}", spec);
        // Compressing again is stable.
        prop_assert_eq!(compress(&expanded), spec);
    }

    #[test]
    fn expand_never_panics(spec in "\\PC{0,40}") {
        let _ = expand(&spec);
    }

    #[test]
    fn expand_never_panics_on_bracket_soup(spec in "[a-c0-9\\[\\],\\- ]{0,30}") {
        if let Ok(names) = expand(&spec) {
            prop_assert!(names.len() <= ebb_slurm::hostlist::MAX_HOSTS);
        }
    }
}
