//! A record-batch stream that fails once its query has run too long.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream};
use futures_util::Stream;

/// Wraps `inner` so that it ends with a "Resources exhausted" error once
/// `limit` has passed since `started`. Dropping it (after the error)
/// drops the inner stream, which cancels the query's tasks.
pub(crate) struct Deadline {
    inner: Option<SendableRecordBatchStream>,
    schema: SchemaRef,
    sleep: Pin<Box<tokio::time::Sleep>>,
    limit: Duration,
}

impl Deadline {
    pub(crate) fn new(
        inner: SendableRecordBatchStream,
        started: tokio::time::Instant,
        limit: Duration,
    ) -> Self {
        Self {
            schema: inner.schema(),
            inner: Some(inner),
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
