//! Fake downstreams for the handler tests: any unary gRPC method answered
//! by a closure and every request kept, served by tonic's own server code
//! (framing, status and details in trailers) on a loopback port, so the
//! gateway talks to it exactly as to a service. A method with no answer is
//! UNIMPLEMENTED, as a real server would say.

use std::future::{Ready, ready};
use std::sync::{Arc, Mutex};

use axum::response::IntoResponse;
use tokio::net::TcpListener;
use tonic::server::{Grpc, UnaryService};
use tonic::service::Routes;
use tonic::{Request, Response, Status};
use tonic_prost::ProstCodec;

/// What one method was asked, in order.
#[derive(Clone)]
pub struct Calls<T>(Arc<Mutex<Vec<T>>>);

impl<T> Default for Calls<T> {
    fn default() -> Self {
        Self(Arc::default())
    }
}

impl<T: Clone> Calls<T> {
    pub fn all(&self) -> Vec<T> {
        self.0.lock().unwrap().clone()
    }

    /// The only call made; fails the test unless there was exactly one.
    pub fn one(&self) -> T {
        let calls = self.all();
        assert_eq!(calls.len(), 1, "calls made");
        calls.into_iter().next().unwrap()
    }
}

/// One method's answer as tonic's server code wants it.
#[derive(Clone)]
struct Unary<F>(F);

impl<Req, Res, F> UnaryService<Req> for Unary<F>
where
    F: Fn(Req) -> Result<Res, Status>,
{
    type Response = Res;
    type Future = Ready<Result<Response<Res>, Status>>;

    fn call(&mut self, request: Request<Req>) -> Self::Future {
        ready((self.0)(request.into_inner()).map(Response::new))
    }
}

/// A gRPC server of the methods given to [`Fake::answer`].
#[derive(Default)]
pub struct Fake {
    router: axum::Router,
}

impl Fake {
    /// `method` is the full path, e.g. `/storefront.orders.v1.OrderService/ListOrders`;
    /// the returned [`Calls`] keeps each request it is sent.
    pub fn answer<Req, Res, F>(self, method: &str, answer: F) -> (Self, Calls<Req>)
    where
        Req: prost::Message + Default + Clone + Send + 'static,
        Res: prost::Message + Send + 'static,
        F: Fn(&Req) -> Result<Res, Status> + Clone + Send + Sync + 'static,
    {
        let calls = Calls::<Req>::default();
        let kept = calls.clone();
        let unary = Unary(move |request: Req| {
            let reply = answer(&request);
            kept.0.lock().unwrap().push(request);
            reply
        });
        let handler = move |request: axum::extract::Request| {
            let unary = unary.clone();
            async move {
                let mut grpc = Grpc::new(ProstCodec::<Res, Req>::default());
                grpc.unary(unary, request).await.into_response()
            }
        };
        let router = self.router.route(method, axum::routing::post(handler));
        (Self { router }, calls)
    }

    /// Serves until the test ends; the URL to call it at.
    pub async fn serve(self) -> String {
        self.serve_until(tokio_util::sync::CancellationToken::new())
            .await
    }

    /// Serves until `stop` (then drains, as a stopping replica does).
    pub async fn serve_until(self, stop: tokio_util::sync::CancellationToken) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
        let unimplemented = || async {
            Status::unimplemented("not part of this fake").into_http::<axum::body::Body>()
        };
        let router = self.router.fallback(unimplemented);
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_routes(Routes::from(router))
                .serve_with_incoming_shutdown(incoming, stop.cancelled_owned()),
        );
        url
    }
}
