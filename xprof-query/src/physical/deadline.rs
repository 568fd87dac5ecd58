//! A record-batch stream that fails once its query has run too long.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::task::{Context, Poll};
use std::time::Duration;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream};
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use futures_util::Stream;
use futures_util::task::AtomicWaker;

/// Wraps `inner` so that it ends with a "Resources exhausted" error once
/// `limit` has passed since `started`. Dropping it (after the error)
/// drops the inner stream, which cancels the query's tasks.
///
/// The inner stream is driven by a task of its own, never inside this
/// stream's `poll_next`: a plan of one partition (an in-memory table of
/// one batch) does all its work in one poll of its stream, which would
/// hold the timer back until the query had finished.
///
/// The timer is a thread of its own, not a Tokio timer: while every
/// worker thread is inside a long poll of the query's operators, no
/// worker turns Tokio's timer wheel, and the limit passed seconds late
/// under load. The thread wakes the reader at the limit; a reader polling
/// from outside the workers (`block_on`, as the CLI and tests do) gets the
/// error on time. Dropping the stream ends the thread.
pub(crate) struct Deadline {
    inner: Option<SendableRecordBatchStream>,
    schema: SchemaRef,
    timer: Arc<Timer>,
    /// Dropped with the stream: tells the timer thread to end early.
    _stop: std::sync::mpsc::Sender<()>,
    limit: Duration,
}

/// What the timer thread shares with the stream.
#[derive(Default)]
struct Timer {
    passed: AtomicBool,
    waker: AtomicWaker,
}

impl Deadline {
    /// Must be called within a Tokio runtime (it spawns the driver task).
    pub(crate) fn new(
        mut inner: SendableRecordBatchStream,
        started: tokio::time::Instant,
        limit: Duration,
    ) -> Self {
        use futures_util::StreamExt;
        let schema = inner.schema();
        let mut driven = RecordBatchReceiverStreamBuilder::new(schema.clone(), 2);
        let tx = driven.tx();
        driven.spawn(async move {
            while let Some(item) = inner.next().await {
                if tx.send(item).await.is_err() {
                    break; // the deadline passed, or the reader went away
                }
            }
            Ok(())
        });
        let timer = Arc::new(Timer::default());
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let at = (started + limit).into_std();
        let shared = Arc::clone(&timer);
        // If the thread cannot start, the limit is not enforced for this
        // stream; the query still runs.
        let _ = std::thread::Builder::new()
            .name("xprof-sql-deadline".into())
            .spawn(move || {
                let wait = at.saturating_duration_since(std::time::Instant::now());
                if let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(wait) {
                    shared.passed.store(true, Ordering::Release);
                    shared.waker.wake();
                }
            });
        Self {
            schema,
            inner: Some(driven.build()),
            timer,
            _stop: stop,
            limit,
        }
    }
}

/// The error a query past its time limit ends with.
pub(crate) fn timed_out(limit: Duration) -> DataFusionError {
    DataFusionError::ResourcesExhausted(format!(
        "the query ran past its time limit of {:.3} s and was cancelled",
        limit.as_secs_f64()
    ))
}

impl Stream for Deadline {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        if let Poll::Ready(item) = inner.as_mut().poll_next(cx) {
            return Poll::Ready(item);
        }
        self.timer.waker.register(cx.waker());
        if self.timer.passed.load(Ordering::Acquire) {
            self.inner = None;
            return Poll::Ready(Some(Err(timed_out(self.limit))));
        }
        Poll::Pending
    }
}

impl RecordBatchStream for Deadline {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
