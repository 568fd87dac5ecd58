# %% [markdown]
# # A walk through a profile with xprof_sql
#
# This script is the notebook of docs/python.md, cell by cell (`# %%`
# marks a cell; Jupyter, VS Code and `jupytext` read it as a notebook).
# CI runs it: `python python/examples/walk.py [PROFILE] [OUT_DIR]`.
# It opens a real JAX profile (20 training steps of a small MLP on CPU),
# shows the slowest HLO ops as a pandas DataFrame, and plots the step
# times with matplotlib.

# %%
import pathlib
import sys

import xprof_sql

repo = pathlib.Path(__file__).resolve().parents[2]
profile = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else repo / "tests/fixtures/xspace/jax_cpu_mlp_20steps_w256.xplane.pb"
out_dir = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else repo / "docs"

session = xprof_sql.open(profile)
print(session)
print("tables:", ", ".join(session.tables()))

# %% [markdown]
# ## The slowest HLO ops
# `hlo_stats` is XProf's HLO op statistics table, as a view; the result is
# a `pyarrow.Table` (handed over without a copy), and `.to_pandas()` makes
# it a DataFrame.

# %%
slowest = session.sql(
    """
    SELECT hlo_op_name, category, occurrences, total_self_time_us,
           round(self_time_pct, 1) AS self_time_pct
    FROM hlo_stats
    ORDER BY total_self_time_us DESC, hlo_op_name
    LIMIT 8
    """
).to_pandas()
print(slowest.to_string(index=False))

# %% [markdown]
# ## Step time
# `step_stats` has one row per step and device: the step's duration, and
# how much of it the ops kept the device busy.

# %%
steps = session.sql(
    """
    SELECT step_num, dur_ps / 1e9 AS step_ms, busy_ps / 1e9 AS busy_ms, idle_ps / 1e9 AS idle_ms
    FROM step_stats ORDER BY step_num
    """
).to_pandas()
print(steps.describe().loc[["count", "mean", "50%", "max"]].round(3).to_string())

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, ax = plt.subplots(figsize=(7, 3.2), dpi=110)
ax.bar(steps["step_num"], steps["busy_ms"], label="busy (ops running)", color="#1f4e79")
ax.bar(steps["step_num"], steps["idle_ms"], bottom=steps["busy_ms"], label="idle", color="#a6c8e8", hatch="//")
p50 = steps["step_ms"].median()
ax.axhline(p50, color="black", linewidth=1, linestyle="--", label=f"median {p50:.3f} ms")
ax.set_xticks(steps["step_num"][:: max(1, len(steps) // 20)])
ax.set_xlabel("step")
ax.set_ylabel("ms")
ax.set_title(f"Step time, {profile.name} (step_stats)")
ax.legend(loc="upper right", fontsize=8)
fig.tight_layout()
png = out_dir / "python_step_time.png"
fig.savefig(png)
print("wrote", png)
