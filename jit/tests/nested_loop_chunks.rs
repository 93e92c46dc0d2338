//! Loop nests run one vector (or a few) at a time: each loop nested in a chunk-major loop
//! keeps masks per vector across its trips, so `chunk::vectors_per_chunk` counts them, and a
//! deep nest runs per vector in a run-time chunk loop instead of on the whole wave at once
//! (`nest_loop_64`'s optimized tier at W = 64 took 1.8 s that way). Against the interpreter,
//! with no instruction budget (a budget keeps nests wave-major), at every width: the
//! conformance suite's nests, whose lanes leave at different depths, in full waves, in
//! partial ones (chunks with no live lane) and with two workers.

mod common;

use common::{check_completes, full_and_partial_waves, WIDTHS};
use wave_runtime::Dispatch;

const NESTS: [(&str, &str); 4] = [
    ("nest_loop_32.wave", include_str!("../../conformance/programs/control/nest_loop_32.wave")),
    ("nest_loop_64.wave", include_str!("../../conformance/programs/control/nest_loop_64.wave")),
    ("nest_mixed_64.wave", include_str!("../../conformance/programs/control/nest_mixed_64.wave")),
    ("nested_loops.wave", include_str!("../../conformance/programs/control/nested_loops.wave")),
];

#[test]
fn nests_match_the_interpreter_without_a_budget() {
    for (name, source) in NESTS {
        let kernel = common::assembled(source, name);
        for w in WIDTHS {
            for threads in full_and_partial_waves(w).into_iter().chain([70]) {
                let d = Dispatch {
                    wave_width: w,
                    grid: [2, 1, 1],
                    workgroup: [threads, 1, 1],
                    max_instructions: 0,
                    threads: 2,
                    ..Dispatch::default()
                };
                check_completes(&kernel, &d, 1 << 16);
            }
        }
    }
}
