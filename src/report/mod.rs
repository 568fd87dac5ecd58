//! `xprof-sql report`: one self-contained HTML file of a profile's
//! pictures, every chart drawn from a view of this project and aggregated
//! in SQL first, so a 100 MB profile gives a page of a few hundred KB.
//!
//! Each section (`page::Section`, one file each, in the order of the
//! list in [`report`]) names the view it draws from and shows the SQL behind
//! each chart on demand (`<details>`); a section whose queries return no
//! rows is left out. Charts are inline SVG ([`svg`]); the page has no
//! network reference and one small script that records script errors
//! into `<body data-errors>`, which it sets once the page has loaded (so
//! the browser test, which reads it, knows the script ran). Every drawn
//! value is in a `data-value` attribute of its mark, under an element
//! with `data-chart="<view>"`, so a test compares the page with the views.

mod busy_timeline;
mod compiled_kernels;
mod kernel;
mod llo;
mod overview;
mod page;
mod proton;
mod pytorch;
mod step_time;
pub mod svg;
mod top_ops;

pub use page::Result;

use std::fmt::Write as _;

use xprof_query::ProfileSession;

use page::ask;

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1100px;padding:16px 24px;color:#1a1a1a}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
nav a{margin-right:14px;font-size:13px}.sub{color:#555;font-size:13px}
figure{margin:16px 0}figcaption{font-size:12px;color:#444;margin-top:4px}.view{color:#777}
details summary{cursor:pointer;color:#2060a0;font-size:12px}pre{background:#f4f4f4;padding:8px;font-size:11px;overflow-x:auto}
table{border-collapse:collapse;font-size:12px;margin:8px 0}th,td{border-bottom:1px solid #e2e2e2;padding:3px 8px;text-align:left;max-width:380px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums}td.path{max-width:none}th{background:#f0f0f0}
.table{overflow-x:auto}h3{font-size:15px;margin:24px 0 4px}
.multiples{display:flex;flex-wrap:wrap}.multiples .execution svg{width:372px;height:auto}
table.heat td{text-align:right}";

/// The report of everything opened in `session`, as one HTML document.
pub async fn report(session: &ProfileSession, title: &str) -> Result<String> {
    let traces = ask(session, "SELECT count(*) AS n FROM traces").await?;
    let several = traces.f64s("n").first().copied().unwrap_or(0.0) > 1.0;
    let mut sections = Vec::new();
    // The sections in page order: one file each.
    for s in [
        overview::section(session, several).await?,
        step_time::section(session).await?,
        top_ops::section(session, several).await?,
        busy_timeline::section(session, several).await?,
        llo::section(session).await?,
        kernel::section(session).await?,
        compiled_kernels::section(session).await?,
        proton::section(session).await?,
        pytorch::section(session).await?,
    ]
    .into_iter()
    .flatten()
    {
        sections.push(s);
    }
    let mut html = String::with_capacity(1 << 16);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"generator\" content=\"xprof-sql {}\"><title>{}</title><style>{STYLE}</style>\
         <script>window.addEventListener('error',function(e){{document.body.dataset.errors=\
         (document.body.dataset.errors||'')+e.message+';'}});window.addEventListener('load',\
         function(){{document.body.dataset.errors=document.body.dataset.errors||''}});</script>\
         </head>\n<body>\
         <h1>{}</h1><p class=\"sub\">xprof-sql report: every chart is a view of the profile's tables; \
         open \"SQL\" under a chart for its query.</p><nav>",
        env!("CARGO_PKG_VERSION"),
        svg::escape(title),
        svg::escape(title)
    );
    for s in &sections {
        let _ = write!(html, "<a href=\"#{}\">{}</a>", s.id, svg::escape(&s.title));
    }
    html.push_str("</nav>\n");
    for s in &sections {
        let _ = write!(
            html,
            "<section id=\"{}\" data-views=\"{}\"><h2>{}</h2>\n{}</section>\n",
            s.id,
            s.views.join(" "),
            svg::escape(&s.title),
            s.body
        );
    }
    html.push_str("</body></html>\n");
    Ok(html)
}
