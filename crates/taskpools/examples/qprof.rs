use taskpools::{Builder, Ctx, PoolKind, Runtime, Task};
#[derive(Clone, Copy)]
struct B { all: u32, cols: u32, left: u32, right: u32 }
struct Q(B);
impl Task<u64> for Q {
    #[inline]
    fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
        let b = self.0;
        if b.cols == b.all { *ctx.local() += 1; return; }
        let mut free = !(b.cols | b.left | b.right) & b.all;
        while free != 0 {
            let q = free & free.wrapping_neg();
            free ^= q;
            ctx.put(Q(B { all: b.all, cols: b.cols | q, left: ((b.left | q) << 1) & b.all, right: (b.right | q) >> 1 }));
        }
    }
}
fn main() {
    let t: usize = std::env::args().nth(1).map_or(1, |s| s.parse().unwrap());
    let pool = std::env::args().nth(2).unwrap_or("dq8".into());
    let rt = Runtime::builder().threads(t).pin(true).build().unwrap();
    let b = Builder::new().runtime(&rt).threads(t).pool(PoolKind::from_name(&pool).unwrap()).pin(true);
    let n = 13;
    for _ in 0..10 {
        let (r, s) = b.run_reduce(|_| 0u64, [Q(B { all: (1 << n) - 1, cols: 0, left: 0, right: 0 })], |a, b| a + b).unwrap();
        println!("{s} {:?}", r.elapsed);
    }
}
