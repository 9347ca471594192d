//! A request body must arrive within a deadline: a client that trickles
//! its body a byte at a time would otherwise hold a connection and a
//! request slot for as long as it likes.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use tokio::time::{Instant, Sleep};

/// Middleware: gives the request body `limit` from now; a request whose body
/// was late gets `408` and its connection is closed.
pub async fn enforce(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    let late = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + limit;
    let request = request.map(|body| {
        Body::new(DeadlineBody {
            inner: body,
            deadline,
            sleep: None,
            limit,
            late: late.clone(),
        })
    });
    let response = next.run(request).await;
    if !late.load(Ordering::Relaxed) {
        return response;
    }
    let mut response = (
        StatusCode::REQUEST_TIMEOUT,
        format!("the request body did not arrive within {limit:?}\n"),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

struct DeadlineBody {
    inner: Body,
    deadline: Instant,
    /// Armed only once the body has to be waited for.
    sleep: Option<Pin<Box<Sleep>>>,
    limit: Duration,
    late: Arc<AtomicBool>,
}

impl http_body::Body for DeadlineBody {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        let deadline = self.deadline;
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.late.store(true, Ordering::Relaxed);
        let limit = self.limit;
        Poll::Ready(Some(Err(axum::Error::new(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("the request body did not arrive within {limit:?}"),
        )))))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    /// A body that never sends anything, like a client that went quiet.
    struct Silent;

    impl http_body::Body for Silent {
        type Data = bytes::Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
            Poll::Pending
        }
    }

    fn with_deadline(inner: Body, late: &Arc<AtomicBool>) -> DeadlineBody {
        DeadlineBody {
            inner,
            deadline: Instant::now() + Duration::from_millis(50),
            sleep: None,
            limit: Duration::from_millis(50),
            late: late.clone(),
        }
    }

    #[tokio::test]
    async fn a_body_that_never_ends_fails_at_the_deadline() {
        let late = Arc::new(AtomicBool::new(false));
        let Err(error) = with_deadline(Body::new(Silent), &late).collect().await else {
            panic!("the body fails");
        };
        assert!(error.to_string().contains("did not arrive within 50ms"), "{error}");
        assert!(late.load(Ordering::Relaxed));
    }

    #[tokio::test]
    async fn a_complete_body_is_untouched() {
        let late = Arc::new(AtomicBool::new(false));
        let body = with_deadline(Body::from("hello"), &late);
        assert_eq!(body.collect().await.unwrap().to_bytes(), "hello");
        assert!(!late.load(Ordering::Relaxed));
    }
}
