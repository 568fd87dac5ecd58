//! The interactive shell driven through a pseudo-terminal, as a person at
//! a terminal uses it: line editing, multi-line statements, tab completion
//! from the catalog, Ctrl-C cancelling a running query (delivered by the
//! terminal as SIGINT), Ctrl-C dropping a half-typed line, Ctrl-D leaving,
//! and the history file read back by the next shell.
#![cfg(target_os = "linux")]

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A child process on the slave side of a pseudo-terminal, which is its
/// controlling terminal; we hold the master side.
struct Pty {
    master: File,
    /// Everything the child wrote to the terminal.
    output: Arc<Mutex<Vec<u8>>>,
    /// Where in `output` the next `expect` starts looking.
    seen: usize,
    child: Child,
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/jax_cpu_mlp.xplane.pb")
}

impl Pty {
    fn spawn(args: &[&str], history: &Path) -> Pty {
        // SAFETY: plain libc calls on descriptors this function owns.
        let (master, slave_name) = unsafe {
            let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(fd >= 0, "posix_openpt");
            assert_eq!(libc::grantpt(fd), 0);
            assert_eq!(libc::unlockpt(fd), 0);
            let mut name = [0 as libc::c_char; 128];
            assert_eq!(libc::ptsname_r(fd, name.as_mut_ptr(), name.len()), 0);
            let size = libc::winsize {
                ws_row: 40,
                ws_col: 200,
                ws_xpixel: 0,
                ws_ypixel: 0,
            };
            assert_eq!(libc::ioctl(fd, libc::TIOCSWINSZ, &size), 0);
            let name = std::ffi::CStr::from_ptr(name.as_ptr())
                .to_string_lossy()
                .into_owned();
            (<File as std::os::fd::FromRawFd>::from_raw_fd(fd), name)
        };
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&slave_name)
            .unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_xprof-sql"));
        command
            .args(args)
            .env("TERM", "xterm")
            .env("XPROF_SQL_HISTORY", history)
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                // A new session whose controlling terminal is the pty, so
                // the terminal's Ctrl-C reaches the shell as SIGINT.
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("runs");
        let output = Arc::new(Mutex::new(Vec::new()));
        let (mut reader, mut answer) = (master.try_clone().unwrap(), master.try_clone().unwrap());
        let sink = Arc::clone(&output);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with EIO once the child has closed the terminal.
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                let mut out = sink.lock().unwrap();
                out.extend_from_slice(&buf[..n]);
                // The line editor asks where the cursor is; a terminal answers.
                if buf[..n].windows(4).any(|w| w == b"\x1b[6n") {
                    let _ = answer.write_all(b"\x1b[1;1R");
                }
            }
        });
        Pty {
            master,
            output,
            seen: 0,
            child,
        }
    }

    fn send(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
    }

    /// Waits until the terminal shows `needle` after what earlier calls
    /// matched; returns what it showed up to the match.
    fn expect(&mut self, needle: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            {
                let out = self.output.lock().unwrap();
                let text = String::from_utf8_lossy(&out[self.seen..]).into_owned();
                if let Some(at) = text.find(needle) {
                    let shown = text[..at + needle.len()].to_string();
                    self.seen += shown.len();
                    return shown;
                }
                if Instant::now() > deadline {
                    panic!("the terminal did not show {needle:?}; it showed:\n{text}");
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait(mut self, within: Duration) -> ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the shell did not exit");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

const PROMPT: &str = "xprof> ";
const WAIT: Duration = Duration::from_secs(60);

#[test]
fn the_shell_at_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history");
    let example = example();
    let mut shell = Pty::spawn(&["shell", example.to_str().unwrap()], &history);
    shell.expect(PROMPT, WAIT);

    // A statement over two lines runs once its `;` is typed.
    shell.send("SELECT 6 * 7\r");
    shell.send("AS answer;\r");
    let shown = shell.expect("42", WAIT);
    assert!(shown.contains("answer"), "{shown}");
    shell.expect(PROMPT, WAIT);

    // Tab completes a table name from the catalog.
    shell.send("SELECT concat('tab', 'ok', count(*) * 0) AS x FROM hlo_instr\t");
    shell.expect("hlo_instructions", WAIT);
    shell.send(";\r");
    shell.expect("tabok0", WAIT);
    shell.expect(PROMPT, WAIT);

    // Ctrl-C while a query runs cancels it; the shell stays.
    // 391^4 = 2.3 × 10^10 row combinations and no equality to hash on:
    // many minutes unless stopped.
    shell.send(
        "SELECT count(*) FROM events a, events b, events c, events d \
         WHERE a.ts_ps + b.ts_ps + c.ts_ps + d.ts_ps < 0;\r",
    );
    std::thread::sleep(Duration::from_millis(500));
    let cancelled_at = Instant::now();
    shell.send("\x03");
    shell.expect("cancelled (Ctrl-C)", WAIT);
    assert!(cancelled_at.elapsed() < Duration::from_secs(10));
    shell.expect(PROMPT, WAIT);

    // Ctrl-C while typing drops the line.
    shell.send("SELECT 'dropped' AS never\x03");
    shell.expect(PROMPT, WAIT);
    shell.send("SELECT upper('kept') AS word;\r");
    let shown = shell.expect("KEPT", WAIT);
    shell.expect(PROMPT, WAIT);
    assert!(!shown.contains("never |"), "{shown}");

    // Dot-commands work; Ctrl-D leaves with success.
    shell.send(".tables\r");
    shell.expect("hlo_stats (view)", WAIT);
    shell.expect(PROMPT, WAIT);
    shell.send("\x04");
    assert!(shell.wait(WAIT).success());

    // The history file holds the statements, and the next shell recalls
    // the last one with the up arrow.
    let saved = std::fs::read_to_string(&history).unwrap();
    assert!(saved.contains("SELECT upper('kept') AS word;"), "{saved}");
    assert!(saved.contains("AS answer;"), "{saved}");
    assert!(!saved.contains("dropped"), "{saved}");
    let mut shell = Pty::spawn(&["shell", example.to_str().unwrap()], &history);
    shell.expect(PROMPT, WAIT);
    shell.send("\x1b[A"); // up: `.tables`
    shell.send("\x1b[A"); // up: the `'kept'` query
    shell.send("\r");
    shell.expect("KEPT", WAIT);
    shell.expect(PROMPT, WAIT);
    shell.send(".quit\r");
    assert!(shell.wait(WAIT).success());
}
