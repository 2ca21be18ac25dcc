//! Reductions over the ranks of a communicator: [`sum_across`] (an MPI all-reduce) and
//! [`fold_across`] (an all-gather of serialized values, folded in rank order on every rank).

use mpi::topology::Communicator;
use mpi::traits::CommunicatorCollectives;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::mpi_error;
use crate::Error;

/// Sums a `u64` over all ranks (an MPI all-reduce); every rank gets the sum.
pub fn sum_across<C: Communicator>(comm: &C, value: u64) -> u64 {
    let mut out = 0u64;
    comm.all_reduce_into(&value, &mut out, mpi::collective::SystemOperation::sum());
    out
}

/// Folds a value over all ranks: each rank's value is serialized, gathered on every rank
/// (an MPI all-gather) and folded in rank order, so every rank gets the same result.
pub fn fold_across<C, V, F>(comm: &C, value: V, fold: F) -> Result<V, Error>
where
    C: Communicator,
    V: Serialize + DeserializeOwned,
    F: Fn(V, V) -> V,
{
    let bytes =
        postcard::to_allocvec(&value).map_err(|e| mpi_error(format!("serializing: {e}")))?;
    let all = all_gather_bytes(comm, &bytes);
    let mut acc: Option<V> = None;
    for b in all {
        let v: V =
            postcard::from_bytes(&b).map_err(|e| mpi_error(format!("deserializing: {e}")))?;
        acc = Some(match acc {
            None => v,
            Some(a) => fold(a, v),
        });
    }
    Ok(acc.expect("a communicator has at least one rank"))
}

fn all_gather_bytes<C: Communicator>(comm: &C, bytes: &[u8]) -> Vec<Vec<u8>> {
    let n = comm.size() as usize;
    let mut lens = vec![0i32; n];
    let len = i32::try_from(bytes.len()).expect("a value of less than 2 GiB");
    comm.all_gather_into(&len, &mut lens[..]);
    let displs: Vec<i32> = lens
        .iter()
        .scan(0i32, |acc, &l| {
            let d = *acc;
            *acc += l;
            Some(d)
        })
        .collect();
    let total: i32 = lens.iter().sum();
    let mut buf = vec![0u8; total as usize];
    {
        let mut part = mpi::datatype::PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
        comm.all_gather_varcount_into(bytes, &mut part);
    }
    (0..n)
        .map(|i| buf[displs[i] as usize..(displs[i] + lens[i]) as usize].to_vec())
        .collect()
}
