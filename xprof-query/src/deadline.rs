//! A record-batch stream that fails once its query has run too long.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream};
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use futures_util::Stream;

/// Wraps `inner` so that it ends with a "Resources exhausted" error once
/// `limit` has passed since `started`. Dropping it (after the error)
/// drops the inner stream, which cancels the query's tasks.
///
/// The inner stream is driven by a task of its own, never inside this
/// stream's `poll_next`: a plan of one partition (an in-memory table of
/// one batch) does all its work in one poll of its stream, which would
/// hold the timer back until the query had finished.
pub(crate) struct Deadline {
    inner: Option<SendableRecordBatchStream>,
    schema: SchemaRef,
    sleep: Pin<Box<tokio::time::Sleep>>,
    limit: Duration,
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
        Self {
            schema,
            inner: Some(driven.build()),
            sleep: Box::pin(tokio::time::sleep_until(started + limit)),
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
        if self.sleep.as_mut().poll(cx).is_ready() {
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
