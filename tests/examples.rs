//! The Rust example of the README runs (the C example is run by tests/c_api.rs, the Python one
//! by tests/python.rs).

#[path = "../examples/embed.rs"]
mod embed;

#[test]
fn rust_example_runs_a_kernel() {
    embed::main().unwrap();
}
