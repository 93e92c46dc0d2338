mod common;
use wave_gpu_backends::{write, Options, Target};

#[test]
fn dump_for_manual_check() {
    let Ok(dir) = std::env::var("WAVE_GPU_DUMP") else { return };
    for (name, k) in [("every_op", common::every_op_kernel(true)), ("control", common::control_kernel())] {
        for t in Target::ALL {
            match write(&k, t, &Options::default()) {
                Ok(s) => std::fs::write(format!("{dir}/{name}.{}", t.extension()), s).unwrap(),
                Err(e) => eprintln!("{name} {t}: {e}"),
            }
        }
    }
}
