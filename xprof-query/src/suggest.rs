//! "Did you mean …" for a table or view name that is not there, as
//! DataFusion already says for a mistyped column: the nearest names of
//! the schema the statement named (tables and views, not the helper views
//! whose names start with `_`) by edit distance ([`with_table_suggestion`]).

use datafusion::common::utils::datafusion_strsim::levenshtein;
use datafusion::error::DataFusionError;
use datafusion::prelude::SessionContext;

/// DataFusion's words for a table it did not find: `table 'C.S.T' not
/// found`, the name resolved to its catalog and schema.
const PREFIX: &str = "table '";
const SUFFIX: &str = "' not found";

/// `error` with the nearest table or view names of the schema appended
/// when it says a table was not found; any other error as it is.
pub(crate) fn with_table_suggestion(
    ctx: &SessionContext,
    error: DataFusionError,
) -> DataFusionError {
    let DataFusionError::Plan(message) = error.find_root() else {
        return error;
    };
    let Some(name) = message
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
    else {
        return error;
    };
    let parts: Vec<&str> = name.split('.').collect();
    let [catalog, schema, table] = parts[..] else {
        return error;
    };
    let Some(provider) = ctx.catalog(catalog).and_then(|c| c.schema(schema)) else {
        return error;
    };
    let names = nearest(table, provider.table_names());
    if names.is_empty() {
        return error;
    }
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    DataFusionError::Plan(format!(
        "{message}. Did you mean {}? (`xprof-sql schema` lists the tables and views)",
        quoted.join(" or ")
    ))
}

/// The names of `candidates` nearest to `wanted` (ignoring case): those
/// at the least edit distance, if it is within a third of the name's
/// length (at least 1), at most three; helper views (`_name`) are left
/// out.
fn nearest(wanted: &str, candidates: Vec<String>) -> Vec<String> {
    let wanted_lower = wanted.to_lowercase();
    let limit = (wanted.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, String)> = candidates
        .into_iter()
        .filter(|c| !c.starts_with('_'))
        .map(|c| (levenshtein(&wanted_lower, &c.to_lowercase()), c))
        .filter(|(distance, _)| *distance <= limit)
        .collect();
    scored.sort();
    let Some(best) = scored.first().map(|(distance, _)| *distance) else {
        return Vec::new();
    };
    scored
        .into_iter()
        .take_while(|(distance, _)| *distance == best)
        .take(3)
        .map(|(_, name)| name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::nearest;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_nearest_names_within_a_third_of_the_length_come_first() {
        let all = names(&[
            "events",
            "event_args",
            "tracks",
            "device_busy",
            "_kineto_events",
        ]);
        assert_eq!(nearest("evnts", all.clone()), vec!["events"]);
        assert_eq!(nearest("EVENTS_ARGS", all.clone()), vec!["event_args"]);
        assert_eq!(nearest("device_bsy", all.clone()), vec!["device_busy"]);
        // Only the nearest: `tracks` (1 edit), not `traces` (2 edits).
        let more = names(&["traces", "tracks"]);
        assert_eq!(nearest("trackss", more.clone()), vec!["tracks"]);
        assert_eq!(nearest("trakcs", more), vec!["traces", "tracks"]);
        // Helpers are not suggested, and a name far from every one gets none.
        assert_eq!(nearest("_kineto_event", all.clone()), Vec::<String>::new());
        assert_eq!(nearest("steps", all), Vec::<String>::new());
    }
}
