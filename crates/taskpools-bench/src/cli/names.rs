//! Names given to comma-separated options: each parsed by its type, `all` expanded.

use anyhow::Result;
use taskpools::PoolKind;

/// A comma-separated option's values: each name parsed by `one`, `all` expanded to `all`'s
/// members in place, repeats dropped (first position kept).
pub fn names_or_all<T: Clone + PartialEq>(
    names: &[String],
    all: &[T],
    one: impl Fn(&str) -> Result<T>,
) -> Result<Vec<T>> {
    let mut out: Vec<T> = Vec::new();
    for n in names {
        let add = if n == "all" {
            all.to_vec()
        } else {
            vec![one(n)?]
        };
        for x in add {
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
    Ok(out)
}

pub fn parse_pools(names: &[String]) -> Result<Vec<PoolKind>> {
    names_or_all(names, &PoolKind::ALL, |n| Ok(PoolKind::from_name(n)?))
}
