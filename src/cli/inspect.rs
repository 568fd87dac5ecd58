//! `xprof-sql inspect`: the planes and lines an XSpace file holds.

use std::path::{Path, PathBuf};

use crate::cli::{AnyResult, outln};

/// `inspect`'s arguments.
#[derive(clap::Args)]
pub struct InspectArgs {
    /// An `.xplane.pb` file (optionally `.gz`).
    input: PathBuf,
    /// JSON in the shape of XProf's `list_xplane_lines`.
    #[arg(long)]
    json: bool,
}

/// `inspect`: the planes and lines of an XSpace file, as text or JSON.
pub fn inspect(args: InspectArgs) -> AnyResult<()> {
    let InspectArgs { input, json } = args;
    let input: &Path = &input;
    let bytes = crate::convert::input::open(input)?;
    let reader = crate::convert::registry::detect(input, &bytes)?;
    let planes = reader.inspect(&bytes)?;
    if json {
        let planes_json: Vec<String> = planes
            .iter()
            .map(|p| {
                let lines: Vec<String> = p
                    .lines
                    .iter()
                    .map(|l| {
                        format!(
                            "{{\"name\": {}, \"event_count\": {}}}",
                            json_str(&l.name),
                            l.event_count
                        )
                    })
                    .collect();
                format!(
                    "{{\"name\": {}, \"lines\": [{}], \"total_events\": {}}}",
                    json_str(&p.name),
                    lines.join(", "),
                    p.total_events
                )
            })
            .collect();
        outln!(
            "{{\"format\": {}, \"planes\": [{}]}}",
            json_str(reader.name()),
            planes_json.join(", ")
        );
        return Ok(());
    }
    outln!(
        "{} ({}, {} planes)",
        input.display(),
        reader.name(),
        planes.len()
    );
    for p in &planes {
        outln!(
            "plane {:?} (id {}): {} lines, {} events, {} event metadata, {} plane stats",
            p.name,
            p.id,
            p.lines.len(),
            p.total_events,
            p.event_metadata,
            p.plane_stats
        );
        for l in &p.lines {
            outln!(
                "  line {:?} (id {}): {} events",
                l.name,
                l.id,
                l.event_count
            );
        }
        if !p.stat_names.is_empty() {
            outln!("  stats: {}", p.stat_names.join(", "));
        }
    }
    Ok(())
}

/// A JSON string literal (the exporter's escaping).
fn json_str(s: &str) -> String {
    crate::query::export::chrome::json_string(s)
}
