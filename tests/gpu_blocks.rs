//! GPU tests of the host building blocks for users' kernels: partitions into a caller's
//! buffer, loading a module and looking up its entry points, sizing a launch from a tile shape,
//! validating its buffers, and timing it. Skipped without a GPU (`MERGEPATH_REQUIRE_GPU=1`
//! fails instead).

mod common;

use common::{gpu, Rng};
use mergepath::cudarc::driver::PushKernelArg;
use mergepath::partition::{merge_path_partitions_cpu, merge_path_partitions_into, merge_path_tie, partition_count, Tie, TileShape};
use mergepath::{tuning, Error, Less};

/// A user's module: `fill_iota(uint32_t* out, uint64_t n)` writes `out[i] = i` for i < n, one
/// thread each (NUL-terminated PTX, which the driver compiles for the device).
const FILL_IOTA_PTX: &str = "
.version 7.0
.target sm_80
.address_size 64

.visible .entry fill_iota(.param .u64 out, .param .u64 n)
{
    .reg .pred %p;
    .reg .b32 %r<4>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [n];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.s32 %r1, %r1, %r2, %r3;
    cvt.u64.u32 %rd3, %r1;
    setp.ge.u64 %p, %rd3, %rd2;
    @%p bra DONE;
    cvta.to.global.u64 %rd4, %rd1;
    shl.b64 %rd5, %rd3, 2;
    add.s64 %rd4, %rd4, %rd5;
    st.global.u32 [%rd4], %r1;
DONE:
    ret;
}
\0";

#[test]
fn partitions_into_a_callers_buffer_equal_the_cpu_ones() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(5);
    for (a_len, b_len, spacing) in [(0, 0, 7), (1000, 0, 64), (3000, 5000, 1408), (12_345, 6789, 100)] {
        let mut sorted = |n: usize| {
            let mut v: Vec<u32> = (0..n).map(|_| rng.below(500) as u32).collect();
            v.sort_unstable();
            v
        };
        let (a, b) = (sorted(a_len), sorted(b_len));
        let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
        let count = partition_count(a_len + b_len, spacing);
        // Two entries more than needed, which the call leaves alone.
        let mut parts = gpu.upload(&vec![-7i64; count + 2]).unwrap();
        merge_path_partitions_into(gpu, &da, &db, spacing, Less, &mut parts).unwrap();
        let got = gpu.download(&parts).unwrap();
        let want: Vec<i64> = merge_path_partitions_cpu(&a, &b, spacing, |x, y| x < y).into_iter().map(|p| p as i64).collect();
        assert_eq!(got[..count], want[..], "a {a_len} b {b_len} spacing {spacing}");
        assert_eq!(got[count..], [-7, -7]);
        assert_eq!(gpu.download(&mergepath::merge_path_partitions(gpu, &da, &db, spacing, Less).unwrap()).unwrap(), want);

        let mut short = gpu.alloc_zeros::<i64>(count - 1).unwrap();
        let err = merge_path_partitions_into(gpu, &da, &db, spacing, Less, &mut short);
        assert_eq!(err, Err(Error::OutputTooSmall { what: "partitions", needed: count, got: count - 1 }));
        assert_eq!(merge_path_partitions_into(gpu, &da, &db, 0, Less, &mut parts), Err(Error::InvalidArgument { argument: "spacing", reason: "must be positive, got 0".into() }));

        // B first on ties (few distinct keys, so most boundaries fall inside runs of equal keys).
        for (tie, comp_greater) in [(Tie::BFirst, false), (Tie::AFirst, false), (Tie::BFirst, true)] {
            let (a, b) = if comp_greater { (a.iter().rev().copied().collect(), b.iter().rev().copied().collect()) } else { (a.clone(), b.clone()) };
            let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
            let total = a_len + b_len;
            let want: Vec<i64> = (0..count)
                .map(|p| if comp_greater { merge_path_tie(&a, &b, (p * spacing).min(total), tie, |x, y| x > y) } else { merge_path_tie(&a, &b, (p * spacing).min(total), tie, |x, y| x < y) } as i64)
                .collect();
            if comp_greater {
                mergepath::merge_path_partitions_tie_into(gpu, &da, &db, spacing, tie, mergepath::Greater, &mut parts).unwrap();
            } else {
                mergepath::merge_path_partitions_tie_into(gpu, &da, &db, spacing, tie, Less, &mut parts).unwrap();
            }
            assert_eq!(gpu.download(&parts).unwrap()[..count], want[..], "{tie:?} greater={comp_greater} a {a_len} b {b_len} spacing {spacing}");
        }
    }
}

#[test]
fn a_users_module_loads_validates_launches_and_times() {
    let Some(gpu) = gpu() else { return };
    assert!(matches!(gpu.load_module(&[]), Err(Error::InvalidArgument { .. })));
    let module = gpu.load_module(FILL_IOTA_PTX.as_bytes()).unwrap();
    assert_eq!(module.function("no_such_kernel").err(), Some(Error::MissingEntryPoint("no_such_kernel".into())));
    let fill = module.function("fill_iota").unwrap();
    assert_eq!(module.arch("fill_iota"), Ok(80), "the PTX's .target");

    let n = 100_003;
    let mut out = gpu.alloc_zeros::<u32>(n + 5).unwrap();
    let input = gpu.upload(&[0u32; 4]).unwrap();
    let input = gpu.check_input("input", &input).unwrap();
    assert_eq!(input.len, 4);
    let mut small = gpu.alloc_zeros::<u32>(3).unwrap();
    assert_eq!(gpu.check_output("small", &mut small, 4, &[&input]).err(), Some(Error::OutputTooSmall { what: "small", needed: 4, got: 3 }));

    let cfg = TileShape { threads: 256, items_per_thread: 1 }.launch_config(n).unwrap();
    let ((), ms) = gpu
        .time(|| {
            let checked = gpu.check_output("out", &mut out, n, &[&input])?;
            let len = n as u64;
            let mut launch = gpu.stream().launch_builder(&fill);
            launch.arg(&checked.ptr).arg(&len);
            // SAFETY: fill_iota(out, n) writes out[i] for i < n, which `checked` holds; the
            // grid covers n threads.
            unsafe { launch.launch(cfg) }?;
            Ok::<(), Error>(())
        })
        .unwrap();
    assert!(ms.is_finite() && ms >= 0.0, "{ms} ms");
    let got = gpu.download(&out).unwrap();
    assert!(got[..n].iter().enumerate().all(|(i, &x)| x == i as u32), "fill_iota wrote out[i] = i");
    assert_eq!(got[n..], [0; 5]);
}

#[test]
fn the_librarys_tile_shapes_are_rows_of_its_table() {
    let Some(gpu) = gpu() else { return };
    let rows_for = |shape: fn(u32, usize) -> tuning::LaunchShape, key_bytes| -> Vec<TileShape> {
        tuning::compiled_archs().iter().map(|&arch| shape(arch, key_bytes).into()).collect()
    };
    let merge = gpu.merge_tile_shape::<u64>().unwrap();
    assert!(rows_for(tuning::merge_shape, 8).contains(&merge), "{merge:?}");
    let search = gpu.search_tile_shape::<u32>().unwrap();
    assert!(rows_for(tuning::search_shape, 4).contains(&search), "{search:?}");
}
