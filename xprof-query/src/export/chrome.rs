//! Chrome Trace Event JSON: `{"displayTimeUnit": "ns", "traceEvents": [...]}`
//! with `M` events naming processes (devices) and threads (track lanes),
//! `X` slices, `s`/`f` flow pairs and `C` counter samples.
//!
//! Times: `ts` and `dur` are microseconds written as decimals with six
//! places, the exact picoseconds of the tables (`12.000345` µs is
//! 12,000,345 ps); this project's reader reads them back exactly, and
//! viewers parse them as doubles (nanoseconds survive for traces shorter
//! than about 100 days).

use std::collections::HashMap;
use std::io::Write;

use super::timeline::{ArgValue, CounterSample, FlowLink, Lane, LaneNames, Slice, TimelineSink};

/// Streams a timeline as Chrome Trace Event JSON.
pub struct ChromeJsonWriter<W: Write> {
    out: W,
    first: bool,
    /// pid per (trace, device), in order of first use from 1.
    pids: HashMap<(i32, i32), u64>,
    /// tid per lane, in order of first use from 1.
    tids: HashMap<Lane, u64>,
    /// Processes named so far (counters may name a process with no slice).
    named: std::collections::HashSet<u64>,
}

impl<W: Write> ChromeJsonWriter<W> {
    /// The writer, once the document is finished.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Starts the document.
    pub fn new(mut out: W) -> std::io::Result<Self> {
        out.write_all(b"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"xprof-sql\"},\"traceEvents\":[")?;
        Ok(Self {
            out,
            first: true,
            pids: HashMap::new(),
            tids: HashMap::new(),
            named: Default::default(),
        })
    }

    fn sep(&mut self) -> std::io::Result<()> {
        if self.first {
            self.first = false;
            self.out.write_all(b"\n")
        } else {
            self.out.write_all(b",\n")
        }
    }

    fn pid(&mut self, trace_id: i32, device_id: i32) -> (u64, bool) {
        let next = self.pids.len() as u64 + 1;
        let mut new = false;
        let pid = *self.pids.entry((trace_id, device_id)).or_insert_with(|| {
            new = true;
            next
        });
        (pid, new)
    }

    fn name_process(&mut self, pid: u64, name: &str) -> std::io::Result<()> {
        if !self.named.insert(pid) {
            return Ok(());
        }
        self.sep()?;
        write!(
            self.out,
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":{}}}}}",
            json_string(name)
        )?;
        self.sep()?;
        write!(
            self.out,
            "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{pid},\"tid\":0,\"args\":{{\"sort_index\":{pid}}}}}"
        )
    }

    fn place(&self, lane: &Lane) -> (u64, u64) {
        let pid = self
            .pids
            .get(&(lane.trace_id, lane.device_id))
            .copied()
            .unwrap_or(0);
        let tid = self.tids.get(lane).copied().unwrap_or(0);
        (pid, tid)
    }
}

impl<W: Write> TimelineSink for ChromeJsonWriter<W> {
    fn lane(&mut self, lane: &Lane, names: &LaneNames) -> std::io::Result<()> {
        let (pid, _) = self.pid(lane.trace_id, lane.device_id);
        self.name_process(pid, &names.process)?;
        let tid = self.tids.len() as u64 + 1;
        self.tids.insert(lane.clone(), tid);
        self.sep()?;
        write!(
            self.out,
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":{}}}}}",
            json_string(&names.thread)
        )?;
        self.sep()?;
        write!(
            self.out,
            "{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"sort_index\":{tid}}}}}"
        )
    }

    fn slice(&mut self, lane: &Lane, slice: &Slice) -> std::io::Result<()> {
        let (pid, tid) = self.place(lane);
        self.sep()?;
        write!(
            self.out,
            "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{},\"name\":{}",
            micros(slice.ts_ps),
            micros(slice.dur_ps),
            json_string(&slice.name)
        )?;
        if !slice.args.is_empty() {
            self.out.write_all(b",\"args\":{")?;
            for (i, (key, value)) in slice.args.iter().enumerate() {
                if i > 0 {
                    self.out.write_all(b",")?;
                }
                write!(self.out, "{}:{}", json_string(key), json_value(value))?;
            }
            self.out.write_all(b"}")?;
        }
        self.out.write_all(b"}")
    }

    fn flow(&mut self, flow: &FlowLink) -> std::io::Result<()> {
        let (from_pid, from_tid) = self.place(&flow.from.0);
        let (to_pid, to_tid) = self.place(&flow.to.0);
        let cat = json_string(&flow.kind);
        self.sep()?;
        write!(
            self.out,
            "{{\"ph\":\"s\",\"id\":\"{:016x}\",\"pid\":{from_pid},\"tid\":{from_tid},\"ts\":{},\"name\":\"flow\",\"cat\":{cat}}}",
            flow.link_id,
            micros(flow.from.1)
        )?;
        self.sep()?;
        write!(
            self.out,
            "{{\"ph\":\"f\",\"bp\":\"e\",\"id\":\"{:016x}\",\"pid\":{to_pid},\"tid\":{to_tid},\"ts\":{},\"name\":\"flow\",\"cat\":{cat}}}",
            flow.link_id,
            micros(flow.to.1)
        )
    }

    fn counter(&mut self, sample: &CounterSample, process: &str) -> std::io::Result<()> {
        let (pid, _) = self.pid(sample.trace_id, sample.device_id);
        self.name_process(pid, process)?;
        self.sep()?;
        write!(
            self.out,
            "{{\"ph\":\"C\",\"pid\":{pid},\"tid\":0,\"ts\":{},\"name\":{},\"args\":{{\"value\":{}}}}}",
            micros(sample.ts_ps),
            json_string(&sample.name),
            json_number(sample.value)
        )
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()
    }
}

/// Picoseconds as exact decimal microseconds (`-0.000001` for -1 ps).
pub fn micros(ps: i64) -> String {
    let sign = if ps < 0 { "-" } else { "" };
    let abs = ps.unsigned_abs();
    format!("{sign}{}.{:06}", abs / 1_000_000, abs % 1_000_000)
}

/// A JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON number; NaN and infinities, which JSON lacks, as strings.
fn json_number(v: f64) -> String {
    if v.is_finite() {
        // `{:?}` prints the shortest text that reads back as the same f64.
        format!("{v:?}")
    } else {
        json_string(&v.to_string())
    }
}

fn json_value(v: &ArgValue) -> String {
    match v {
        ArgValue::Int(i) => i.to_string(),
        ArgValue::Uint(u) => u.to_string(),
        ArgValue::Double(d) => json_number(*d),
        ArgValue::Str(s) => json_string(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_are_exact_picoseconds() {
        assert_eq!(micros(0), "0.000000");
        assert_eq!(micros(12_000_345), "12.000345");
        assert_eq!(micros(-1), "-0.000001");
        assert_eq!(micros(i64::MIN), "-9223372036854.775808");
    }

    #[test]
    fn json_strings_escape_quotes_and_controls() {
        assert_eq!(json_string("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
        assert_eq!(json_number(f64::NAN), "\"NaN\"");
        assert_eq!(json_number(0.1), "0.1");
    }
}
