//! The untimed call tree of a Proton tree profile: `profile_nodes` and the
//! metrics not promoted to columns, `node_metrics`.

use crate::StatValue;

table! {
    /// Every node of an untimed call tree: Proton's tree profile (hatchet JSON), kernels and scopes
    /// with aggregate metrics and no timestamps. The root (`ROOT`) is node 0; nodes are numbered
    /// depth first, so a node's subtree is the nodes from it to the next one at its depth or above.
    /// Metrics other than those promoted here are in `node_metrics`.
    ProfileNodes: PROFILE_NODES = "profile_nodes", sorted by ["node_id"],
    ProfileNodeRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        /// Id of the node in this trace: its position in a depth-first walk from the root (0).
        node_id: i64 = (Int64),
        /// `node_id` of the parent; NULL for the root.
        parent_id: Option<i64> = (Int64 null),
        /// Depth: 0 for the root.
        depth: i32 = (Int32),
        /// `frame.name`: a kernel, a scope, or a Python frame (`file.py:function@line`).
        name: &'a str = (Utf8),
        /// Names from the root's child down to this node (the root's is empty).
        path: &'a [String] = (ListUtf8),
        /// `frame.type` (`function`, ...); NULL when absent.
        frame_type: Option<&'a str> = (Utf8 null),
        /// Metric `time (ns)` (inclusive), in ps.
        time_ps: Option<i64> = (Int64 null),
        /// Metric `count`: kernel launches.
        count: Option<i64> = (Int64 null),
        /// Metric `device_id` as written (a string): the device of a kernel; joins the `devices`
        /// row whose `ordinal` it names.
        device_id: Option<&'a str> = (Utf8 null),
        /// Metric `device_type`: `CUDA` or `HIP`.
        device_type: Option<&'a str> = (Utf8 null),
        /// Metric `flops`.
        flops: Option<f64> = (Float64 null),
        /// Metric `flops8`.
        flops8: Option<f64> = (Float64 null),
        /// Metric `flops16`.
        flops16: Option<f64> = (Float64 null),
        /// Metric `flops32`.
        flops32: Option<f64> = (Float64 null),
        /// Metric `flops64`.
        flops64: Option<f64> = (Float64 null),
        /// Metric `bytes`.
        bytes: Option<f64> = (Float64 null),
        /// Number of the node's metrics in `node_metrics`.
        metric_count: i32 = (Int32),
    }
}

table! {
    /// Every metric of a `profile_nodes` node not promoted to a column there: PC-sampling stall
    /// reasons, `cycles`, `normalized_cycles`, user metrics, and every exclusive (` (exc)`) or
    /// property (` (pty)`) metric, typed.
    NodeMetrics: NODE_METRICS = "node_metrics", sorted by ["node_id"],
    NodeMetricRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        /// Node the metric belongs to; joins `profile_nodes`.
        node_id: i64 = (Int64),
        /// Metric name, without its ` (exc)` or ` (pty)` suffix.
        metric: &'a str = (Utf8),
        /// `inclusive` (a plain name), `exclusive` (` (exc)`) or `property` (` (pty)`).
        kind: &'a str = (DictUtf8),
        value: StatValue<'a> = (values),
    }
}
