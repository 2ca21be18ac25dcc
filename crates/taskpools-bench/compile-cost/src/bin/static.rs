//! The pool named at compile time (`Builder::pool_type`, here `private-public`, the default
//! pool): only that pool's phase loop is compiled for each of the three task types.

#[path = "../tasks.rs"]
mod tasks;

use taskpools::pool::types::PrivatePublic;
use taskpools::Builder;
use tasks::{Queens, Range, Tree};

fn main() -> Result<(), taskpools::Error> {
    let b = Builder::new().threads(2).pool_type::<PrivatePublic>();
    let tree = b.run([Tree(12)])?.tasks_run();
    let (_, sum) = b.run_reduce(|_| 0, [Range(0, 100_000)], |a, b| a + b)?;
    let queens = Queens {
        n: 8,
        cols: Vec::new(),
    };
    let (_, solutions) = b.run_reduce(|_| 0, [queens], |a, b| a + b)?;
    tasks::check(tree, sum, solutions);
    Ok(())
}
