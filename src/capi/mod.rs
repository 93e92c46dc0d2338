//! The C ABI of `libwave_jit.so`, declared in `include/wave_jit.h` (generated from this module
//! by cbindgen; `tests/c_header.rs` fails when the two differ).
//!
//! Conventions, the same for every function:
//! - Functions that can fail return an `int32_t` status: [`WAVE_OK`] (0) or one of the
//!   `WAVE_ERROR_*` codes. The message of the last failure on the calling thread is
//!   [`wave_last_error`]'s.
//! - Objects are opaque handles made by a `*_new` / `*_load` / `*_alloc` function, written to
//!   an out-parameter, and released by the matching `*_free` function (which accepts NULL).
//!   Modules and kernels are immutable and may be used from any thread at once; a device
//!   serialises the calls made on it (and on its buffers). A kernel keeps its module alive and
//!   a buffer its device's memory, so handles may be freed in any order.
//! - No Rust panic crosses this boundary: every entry point catches one and returns
//!   [`WAVE_ERROR_INTERNAL`] (a bug in wave-jit) with the panic's message. A device that was
//!   in use when that happened refuses further calls with the same code.
//!
//! Besides its own API the library exports the reference runtime's emulator entry,
//! [`wave_emulate`], with the same signature and behaviour.

mod emulate;
mod handles;

pub use emulate::wave_emulate;
pub use handles::*;

use crate::error::Error;
use std::cell::RefCell;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// Success.
pub const WAVE_OK: i32 = 0;
/// A NULL or invalid argument: a missing handle, a bad engine number or alignment, text that is
/// not UTF-8, a buffer of another device or already freed, too many kernel arguments.
pub const WAVE_ERROR_ARGUMENT: i32 = 1;
/// Out of device memory (or the host refused to map it).
pub const WAVE_ERROR_OUT_OF_MEMORY: i32 = 2;
/// The binary or source does not load (also `wave_emulate`'s code for it).
pub const WAVE_ERROR_LOAD: i32 = 3;
/// Device memory cannot be written: the range is outside the buffer or device (also
/// `wave_emulate`'s code for it).
pub const WAVE_ERROR_WRITE: i32 = 4;
/// The launch failed: rejected before it ran, or stopped by an error (also `wave_emulate`'s code
/// for it).
pub const WAVE_ERROR_RUN: i32 = 5;
/// Device memory cannot be read: the range is outside the buffer or device (also
/// `wave_emulate`'s code for it).
pub const WAVE_ERROR_READ: i32 = 6;
/// No kernel with that name or index.
pub const WAVE_ERROR_NOT_FOUND: i32 = 7;
/// A bug in wave-jit: a panic caught at the boundary. Please report the message.
pub const WAVE_ERROR_INTERNAL: i32 = 8;

/// A failed call: its status code and message.
#[derive(Debug)]
struct Failure {
    status: i32,
    message: String,
}

impl Failure {
    fn new(status: i32, message: impl Into<String>) -> Failure {
        Failure { status, message: message.into() }
    }

    fn argument(message: impl Into<String>) -> Failure {
        Failure::new(WAVE_ERROR_ARGUMENT, message)
    }

    /// The status an API error maps to; `access` is the code of a buffer range error in this
    /// call ([`WAVE_ERROR_WRITE`] when writing, [`WAVE_ERROR_READ`] when reading).
    fn of(error: Error, access: i32) -> Failure {
        let status = match &error {
            Error::Load(_) => WAVE_ERROR_LOAD,
            Error::NoSuchKernel { .. } => WAVE_ERROR_NOT_FOUND,
            Error::OutOfMemory { .. } => WAVE_ERROR_OUT_OF_MEMORY,
            Error::DeviceMemory(wave_runtime::DeviceError::Map(_)) => WAVE_ERROR_OUT_OF_MEMORY,
            Error::BufferRange { .. } => access,
            Error::Run(_) => WAVE_ERROR_RUN,
            _ => WAVE_ERROR_ARGUMENT,
        };
        Failure::new(status, error.to_string())
    }
}

thread_local! {
    /// The last failure's message on this thread, followed by a NUL byte.
    static LAST_ERROR: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

fn set_last_error(message: &str) {
    LAST_ERROR.with(|last| {
        let mut last = last.borrow_mut();
        last.clear();
        last.extend_from_slice(message.as_bytes());
        last.push(0);
    });
}

/// The message of the last failed call on this thread: UTF-8, `*len` bytes, valid until the
/// next call on this thread. As the reference's, it is not NUL-terminated as far as `*len`
/// counts, but a NUL byte follows it, so it may also be printed as a C string. Before any
/// failure: an empty message. `len` may be NULL.
///
/// # Safety
/// `len` is NULL or points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn wave_last_error(len: *mut usize) -> *const u8 {
    // Never injected (see `inject_panic`): a test reads the injected panics' messages here.
    let message = catch_unwind(|| {
        LAST_ERROR.with(|last| {
            let mut last = last.borrow_mut();
            if last.is_empty() {
                last.push(0);
            }
            (last.as_ptr(), last.len() - 1)
        })
    });
    let (ptr, n) = message.unwrap_or((c"".as_ptr().cast(), 0));
    if !len.is_null() {
        // SAFETY: the caller passes NULL or a valid, writable `size_t`.
        unsafe { *len = n };
    }
    ptr
}

/// Run an entry point's body: its failure becomes a status and the thread's last error; a
/// panic becomes [`WAVE_ERROR_INTERNAL`].
fn guard(entry: &'static str, body: impl FnOnce() -> Result<(), Failure>) -> i32 {
    match catch_unwind(AssertUnwindSafe(|| {
        inject_panic(entry);
        body()
    })) {
        Ok(Ok(())) => WAVE_OK,
        Ok(Err(failure)) => {
            set_last_error(&failure.message);
            failure.status
        }
        Err(payload) => {
            set_last_error(&internal_error(entry, payload.as_ref()));
            WAVE_ERROR_INTERNAL
        }
    }
}

/// [`guard`] for entry points that return a value instead of a status: `fallback` on a panic.
fn guard_value<T>(entry: &'static str, fallback: T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(|| {
        inject_panic(entry);
        body()
    })) {
        Ok(value) => value,
        Err(payload) => {
            set_last_error(&internal_error(entry, payload.as_ref()));
            fallback
        }
    }
}

fn internal_error(entry: &str, payload: &(dyn std::any::Any + Send)) -> String {
    let what = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic");
    format!("internal error in {entry} (a bug in wave-jit; please report it): {what}")
}

/// Testing the panic barrier: when the environment variable `WAVE_JIT_TEST_PANIC` is an entry
/// point's name, or `*` for all of them but `wave_last_error`, that entry point panics inside
/// its guard (read once, at the first call).
fn inject_panic(entry: &str) {
    static TARGET: OnceLock<Option<String>> = OnceLock::new();
    if let Some(target) = TARGET.get_or_init(|| std::env::var("WAVE_JIT_TEST_PANIC").ok()) {
        if target == "*" || target == entry {
            panic!("WAVE_JIT_TEST_PANIC: injected panic in {entry}");
        }
    }
}

/// `*ptr`, or an argument error naming `what` when it is NULL.
///
/// # Safety
/// `ptr` is NULL or points to a live `T` that outlives the returned reference.
unsafe fn deref<'a, T>(ptr: *const T, what: &str) -> Result<&'a T, Failure> {
    // SAFETY: the caller's contract.
    unsafe { ptr.as_ref() }.ok_or_else(|| Failure::argument(format!("`{what}` is NULL")))
}

/// Store `value` in the out-parameter `out` (an argument error when it is NULL).
///
/// # Safety
/// `out` is NULL or points to a writable `T`.
unsafe fn put<T>(out: *mut T, what: &str, value: T) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::argument(format!("`{what}` is NULL")));
    }
    // SAFETY: not NULL, and the caller's contract makes it writable.
    unsafe { out.write(value) };
    Ok(())
}

/// Set an out-parameter handle to NULL if it can be written (so that a failed call leaves no
/// stale handle behind).
///
/// # Safety
/// `out` is NULL or points to a writable pointer.
unsafe fn clear<T>(out: *mut *mut T) {
    if !out.is_null() {
        // SAFETY: not NULL, and the caller's contract makes it writable.
        unsafe { out.write(std::ptr::null_mut()) };
    }
}

/// `len` bytes at `ptr` (NULL is allowed when `len` is 0).
///
/// # Safety
/// `ptr` is NULL or valid for reading `len` bytes for the returned lifetime.
unsafe fn bytes<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a [u8], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::argument(format!("`{what}` is NULL but its length is {len}")));
    }
    // SAFETY: not NULL, and the caller's contract makes `len` bytes readable.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// `len` writable bytes at `ptr` (NULL is allowed when `len` is 0).
///
/// # Safety
/// `ptr` is NULL or valid for reading and writing `len` bytes, not aliased, for the returned
/// lifetime.
unsafe fn bytes_mut<'a>(ptr: *mut u8, len: usize, what: &str) -> Result<&'a mut [u8], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(Failure::argument(format!("`{what}` is NULL but its length is {len}")));
    }
    // SAFETY: not NULL, and the caller's contract makes `len` bytes writable and unaliased.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// The NUL-terminated UTF-8 string at `ptr`.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that outlives the returned reference.
unsafe fn text<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(Failure::argument(format!("`{what}` is NULL")));
    }
    // SAFETY: not NULL, and the caller's contract makes it a NUL-terminated string.
    let c = unsafe { CStr::from_ptr(ptr) };
    c.to_str().map_err(|e| Failure::argument(format!("`{what}` is not UTF-8: {e}")))
}
