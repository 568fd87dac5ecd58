//! The interactive shell of `xprof-sql query`/`shell`: the loop reading
//! statements and dot-commands (at a terminal with the line editor of
//! [`helper`], else from a pipe or file), what each dot-command does, and
//! Ctrl-C, which cancels the running statement and keeps the shell.
//!
//! - [`command`]: the table of dot-commands (`.help`, completion, parsing);
//! - [`statement`]: where statements end;
//! - [`helper`]: the line editor's completion, validation and history.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;
use std::time::Instant;

use crate::output::OutputFormat;
use crate::query::{OpenOptions, ProfileSession};
use arrow::array::AsArray;

use crate::cli::schema::print_schema;
use crate::cli::{AnyResult, outln, peak_memory_note, run_sql_capped};

pub mod command;
pub mod helper;
pub mod statement;

use command::DotCommand;
use helper::ShellHelper;
use statement::statement_complete;

/// What the shell's dot-commands change.
struct ShellSettings {
    format: OutputFormat,
    timer: bool,
    /// Rows a table shows (`None`: all).
    max_rows: Option<usize>,
    /// Where results go after `.output FILE` (`None`: stdout).
    output: Option<std::io::BufWriter<std::fs::File>>,
    /// `--read-only`: `.open` (which reads a path) is refused too.
    read_only: bool,
}

/// Rows the shell's tables show unless `.maxrows` says otherwise.
const SHELL_MAX_ROWS: usize = 100;

/// The shell over `session` until `.quit` or the end of the input;
/// `read_only` refuses `.open` too.
pub async fn run(mut session: ProfileSession, read_only: bool) -> AnyResult<()> {
    let session = &mut session;
    let mut settings = ShellSettings {
        format: OutputFormat::Table,
        timer: false,
        max_rows: Some(SHELL_MAX_ROWS),
        output: None,
        read_only,
    };
    let result = if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        shell_at_terminal(session, &mut settings).await
    } else {
        shell_from_lines(session, &mut settings).await
    };
    if let Some(mut out) = settings.output.take() {
        out.flush()?;
    }
    result
}

/// Runs `sql` as the shell does: in the current mode, timed if asked.
/// Errors are printed, not returned, so the shell goes on.
async fn shell_run(session: &ProfileSession, sql: &str, settings: &mut ShellSettings) {
    let started = Instant::now();
    let redirect = settings.output.as_mut().map(|w| w as &mut dyn Write);
    let result = run_sql_capped(
        session,
        sql,
        settings.format,
        None,
        settings.max_rows,
        redirect,
    );
    if let Err(e) = result.await {
        eprintln!("error: {e}");
    }
    if let Some(Err(e)) = settings.output.as_mut().map(|w| w.flush()) {
        eprintln!("error: .output: {e}");
    }
    if settings.timer {
        eprintln!(
            "Run Time: {:.3} s{}",
            started.elapsed().as_secs_f64(),
            peak_memory_note()
        );
    }
}

/// One dot-command line; `Ok(false)` means leave the shell.
async fn shell_command(
    session: &mut ProfileSession,
    line: &str,
    settings: &mut ShellSettings,
) -> AnyResult<bool> {
    let mut parts = line.split_whitespace();
    let name = parts.next().unwrap_or_default();
    let arg = parts.next();
    match (name.parse::<DotCommand>()?, arg) {
        (DotCommand::Quit, _) => return Ok(false),
        (DotCommand::Help, _) => eprintln!("{}", command::help()),
        (DotCommand::Tables, _) => {
            let sql = format!(
                "SELECT table_name, table_type FROM information_schema.tables \
                 WHERE table_schema = '{}' ORDER BY table_name",
                session.schema().replace('\'', "''")
            );
            for batch in session.collect(&sql).await? {
                let batch = crate::output::plain_batch(&batch)?;
                let names = batch.column(0).as_string::<i32>();
                let kinds = batch.column(1).as_string::<i32>();
                for i in 0..batch.num_rows() {
                    // Helper views (`_NAME`) are the views' private parts.
                    if names.value(i).starts_with('_') {
                        continue;
                    }
                    if kinds.value(i) == "VIEW" {
                        outln!("{} (view)", names.value(i));
                    } else {
                        outln!("{}", names.value(i));
                    }
                }
            }
        }
        (DotCommand::Schema, table) => print_schema(table, false)?,
        (DotCommand::Mode, Some(mode)) => {
            settings.format = match mode {
                "table" => OutputFormat::Table,
                "csv" => OutputFormat::Csv,
                "json" => OutputFormat::Json,
                "markdown" => OutputFormat::Markdown,
                "line" => OutputFormat::Line,
                other => {
                    return Err(
                        format!(".mode {other}: one of table, csv, json, markdown, line").into(),
                    );
                }
            }
        }
        (DotCommand::MaxRows, Some(n)) => {
            let n: usize = n
                .parse()
                .map_err(|_| format!(".maxrows {n}: a number of rows (0: all)"))?;
            settings.max_rows = (n > 0).then_some(n);
        }
        (DotCommand::Timer, Some("on")) => settings.timer = true,
        (DotCommand::Timer, Some("off")) => settings.timer = false,
        (DotCommand::Read, Some(file)) => {
            let sql = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
            shell_run(session, &sql, settings).await;
        }
        (DotCommand::Output, file) => {
            if let Some(mut previous) = settings.output.take() {
                previous.flush()?;
            }
            if let Some(file) = file {
                let f = std::fs::File::create(file).map_err(|e| format!("{file}: {e}"))?;
                settings.output = Some(std::io::BufWriter::new(f));
            }
        }
        (DotCommand::Open, Some(input)) => {
            if settings.read_only {
                return Err(".open reads a path: not allowed in a read-only session".into());
            }
            session.open(&[input], &OpenOptions::default()).await?;
            eprintln!("opened {input}");
        }
        (
            DotCommand::Mode
            | DotCommand::Timer
            | DotCommand::Read
            | DotCommand::MaxRows
            | DotCommand::Open,
            _,
        ) => {
            return Err(format!("{name}: see .help for its argument").into());
        }
    }
    Ok(true)
}

/// The shell reading a pipe or file: statements end at `;`, the last one
/// may end without; Ctrl-C stops the process as for any filter.
async fn shell_from_lines(
    session: &mut ProfileSession,
    settings: &mut ShellSettings,
) -> AnyResult<()> {
    // stdin at a terminal but stdout redirected: prompts go to stderr.
    let prompts = std::io::stdin().is_terminal();
    let prompt = |more: bool| {
        if prompts {
            eprint!("{}", if more { "   ...> " } else { "xprof> " });
        }
    };
    let mut buf = String::new();
    prompt(false);
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let trimmed = line.trim();
        if buf.is_empty() && trimmed.starts_with('.') {
            match shell_command(session, trimmed, settings).await {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(e) => eprintln!("error: {e}"),
            }
            prompt(false);
            continue;
        }
        buf.push_str(&line);
        buf.push('\n');
        if statement_complete(&buf) {
            shell_run(session, &buf, settings).await;
            buf.clear();
        }
        prompt(!buf.is_empty());
    }
    if !buf.trim().is_empty() {
        let redirect = settings.output.as_mut().map(|w| w as &mut dyn Write);
        run_sql_capped(
            session,
            &buf,
            settings.format,
            None,
            settings.max_rows,
            redirect,
        )
        .await?;
    }
    Ok(())
}

/// The shell at a terminal: line editing, multi-line statements, tab
/// completion from the catalog, a history file; Ctrl-C cancels the running
/// statement (or the line being typed) and keeps the shell, Ctrl-D leaves.
async fn shell_at_terminal(
    session: &mut ProfileSession,
    settings: &mut ShellSettings,
) -> AnyResult<()> {
    use rustyline::error::ReadlineError;
    use std::sync::atomic::{AtomicBool, Ordering};
    let config = rustyline::Config::builder()
        .auto_add_history(false)
        .completion_type(rustyline::CompletionType::List)
        .max_history_size(10_000)?
        .build();
    let mut editor: rustyline::Editor<ShellHelper, rustyline::history::FileHistory> =
        rustyline::Editor::with_config(config)?;
    editor.set_helper(Some(ShellHelper::new(catalog_names(session).await?)));
    let history = helper::history_path();
    if let Some(path) = history.as_ref().filter(|p| p.exists())
        && let Err(e) = editor.load_history(path)
    {
        eprintln!("warning: history {}: {e}", path.display());
    }
    // While a statement runs the terminal delivers Ctrl-C as SIGINT: it
    // sets this flag instead of ending the process. While a line is typed,
    // the editor reads Ctrl-C as a key.
    let interrupted = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&interrupted))?;
    eprintln!("xprof-sql shell: SQL ending in `;`; `.help` for commands; Ctrl-D leaves");
    let mut history_warned = false;
    loop {
        let line = match editor.readline("xprof> ") {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        editor.add_history_entry(text)?;
        if let Some(path) = &history
            && let Err(e) = editor.append_history(path)
            && !history_warned
        {
            eprintln!("warning: history {}: {e}", path.display());
            history_warned = true;
        }
        interrupted.store(false, Ordering::SeqCst);
        let is_command = text.starts_with('.');
        let work = async {
            if is_command {
                shell_command(session, text, settings).await
            } else {
                shell_run(session, text, settings).await;
                Ok(true)
            }
        };
        match until_interrupted(work, &interrupted).await {
            None => eprintln!("cancelled (Ctrl-C)"),
            Some(Ok(true)) => {}
            Some(Ok(false)) => break,
            Some(Err(e)) => eprintln!("error: {e}"),
        }
        if is_command && text.starts_with(".open") {
            let names = catalog_names(session).await?;
            if let Some(helper) = editor.helper_mut() {
                helper.extend(names);
            }
        }
    }
    Ok(())
}

/// Runs `work` until it ends (`Some`) or `interrupted` is set (`None`; the
/// work is dropped, which cancels a running query and its tasks).
async fn until_interrupted<T>(
    work: impl std::future::Future<Output = T>,
    interrupted: &std::sync::atomic::AtomicBool,
) -> Option<T> {
    let mut work = std::pin::pin!(work);
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(25));
    loop {
        tokio::select! {
            done = &mut work => return Some(done),
            _ = tick.tick() => {
                if interrupted.swap(false, std::sync::atomic::Ordering::SeqCst) {
                    return None;
                }
            }
        }
    }
}

/// Names the shell completes: the session's tables, views and columns.
async fn catalog_names(session: &ProfileSession) -> AnyResult<Vec<String>> {
    let sql = format!(
        "SELECT DISTINCT table_name, column_name FROM information_schema.columns \
         WHERE table_schema = '{}'",
        session.schema().replace('\'', "''")
    );
    let mut names = Vec::new();
    for batch in session.collect(&sql).await? {
        let batch = crate::output::plain_batch(&batch)?;
        for column in batch.columns() {
            let values = column.as_string::<i32>();
            names.extend(values.iter().flatten().map(String::from));
        }
    }
    Ok(names)
}
