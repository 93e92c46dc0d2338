//! What every subcommand writes to the terminal: results on stdout (a closed pipe ends the
//! program quietly), warnings and progress on stderr (progress only on a terminal).

use std::io::{ErrorKind, IsTerminal, Write};

/// Write `text` to stdout and flush it. When the reader has gone (`wave-jit conformance | head -1`)
/// the program ends at once with exit code 0, as `head`'s writer is expected to: the reader asked
/// for no more. Other write errors (a full disk) are returned.
pub fn print(text: &str) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(format!("cannot write to stdout: {e}")),
    }
}

/// A warning on stderr: something odd that wave-emu accepts silently and so do we.
pub fn warn(message: &str) {
    // Not `eprintln!`: that panics when stderr is a closed pipe.
    let _ = writeln!(std::io::stderr(), "warning: {message}");
}

/// A progress line on stderr, rewritten in place; shown only when stderr is a terminal (a log
/// file or a pipe would collect every rewrite).
pub struct Progress {
    on_terminal: bool,
    shown: bool,
}

impl Progress {
    pub fn new() -> Progress {
        Progress { on_terminal: std::io::stderr().is_terminal(), shown: false }
    }

    pub fn show(&mut self, message: &str) {
        if self.on_terminal {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K{message}");
            let _ = err.flush();
            self.shown = true;
        }
    }

    /// Erase the line, if one was shown.
    pub fn clear(&mut self) {
        if self.shown {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
            self.shown = false;
        }
    }
}
