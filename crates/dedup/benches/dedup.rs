//! Dedup operations per second (criterion). Baseline: the same workload on a
//! `Vec` with linear scans, measured in the same run, so the ratio is visible.

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use bridge_dedup::{BoundedSet, DedupPair};
    use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
    use std::hint::black_box;

    const OPS: u64 = 10_000;

    fn ids(n: u64) -> Vec<String> {
        // uuid-shaped strings, half of them repeated so both paths are exercised.
        (0..n)
            .map(|i| format!("{:08x}-0000-4000-8000-{:012x}", i % (n / 2), i % (n / 2)))
            .collect()
    }

    /// One pass of a workload over the ids, from an empty structure of the given capacity.
    type Workload = fn(&[String], usize);

    /// One pass of `BoundedSet::insert` over `ids`, from an empty set of `capacity`.
    fn bounded_set(ids: &[String], capacity: usize) {
        let mut set = BoundedSet::with_capacity(capacity);
        for id in ids {
            black_box(set.insert(id.clone()));
        }
    }

    /// One pass of `DedupPair` over `ids`: every tenth recorded as sent, the rest observed.
    fn dedup_pair(ids: &[String], capacity: usize) {
        let mut pair = DedupPair::with_capacity(capacity);
        for (i, id) in ids.iter().enumerate() {
            if i % 10 == 0 {
                black_box(pair.record_sent(id.clone()));
            } else {
                black_box(pair.observe(id.clone()));
            }
        }
    }

    /// The baseline: the same bounded set as a `Vec` scanned linearly.
    fn vec_scan(ids: &[String], capacity: usize) {
        let mut v: Vec<String> = Vec::with_capacity(capacity);
        for id in ids {
            if !v.contains(id) {
                if v.len() == capacity {
                    v.remove(0);
                }
                v.push(id.clone());
            }
        }
        black_box(v.len());
    }

    fn bench(c: &mut Criterion) {
        let ids = ids(OPS);
        let workloads: [(&str, Workload); 3] = [
            ("BoundedSet::insert", bounded_set),
            ("DedupPair::observe", dedup_pair),
            ("baseline Vec linear scan", vec_scan),
        ];
        let mut group = c.benchmark_group("dedup");
        group.throughput(Throughput::Elements(OPS));
        for capacity in [100usize, 2_000] {
            for (name, workload) in workloads {
                group.bench_with_input(BenchmarkId::new(name, capacity), &ids, |b, ids| {
                    b.iter(|| workload(ids, capacity))
                });
            }
        }
        group.finish();
    }

    criterion_group!(benches, bench);
}

#[cfg(not(target_arch = "wasm32"))]
criterion::criterion_main!(native::benches);

#[cfg(target_arch = "wasm32")]
fn main() {}
