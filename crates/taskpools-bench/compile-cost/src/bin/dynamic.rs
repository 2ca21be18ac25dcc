//! The pool chosen by name at run time (`dynamic [POOL]`, default `private-public`): every
//! pool's phase loop is compiled for each of the three task types.

#[path = "../tasks.rs"]
mod tasks;

use taskpools::Builder;
use tasks::{Queens, Range, Tree};

fn main() -> Result<(), taskpools::Error> {
    let name = std::env::args().nth(1);
    let b = Builder::new()
        .threads(2)
        .pool_name(name.as_deref().unwrap_or("private-public"))?;
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
