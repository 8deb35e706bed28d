use super::*;
use http_body_util::Empty;

/// An S3 server stand-in: answers every request 200 with `upstream METHOD PATH`.
fn upstream() -> (String, oneshot::Sender<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let serving = async {
                while let Ok((stream, _)) = listener.accept().await {
                    tokio::spawn(async move {
                        let service =
                            hyper::service::service_fn(|request: Request<Incoming>| async move {
                                let line = format!(
                                    "upstream {} {}",
                                    request.method(),
                                    request.uri().path()
                                );
                                let _ = request.into_body().collect().await;
                                Ok::<_, Infallible>(plain(StatusCode::OK, line))
                            });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            };
            tokio::select! {
                () = serving => {}
                _ = stopped => {}
            }
        });
    });
    (format!("http://{address}"), stop)
}

async fn send(endpoint: &str, method: Method, path: &str) -> (StatusCode, String) {
    let stream = tokio::net::TcpStream::connect(endpoint.trim_start_matches("http://"))
        .await
        .unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", endpoint.trim_start_matches("http://"))
        .body(Empty::<Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test]
async fn refuses_the_first_writes_with_slow_down_and_forwards_the_rest() {
    let (upstream, _stop) = upstream();
    let front = SlowDownFront::start(&upstream, 2).unwrap();
    let endpoint = front.endpoint().to_owned();

    let (status, body) = send(&endpoint, Method::GET, "/b/deploy/current.json").await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, "upstream GET /b/deploy/current.json")
    );
    let (status, body) = send(&endpoint, Method::PUT, "/b/deploy/current.json").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(body.contains("<Code>SlowDown</Code>"), "{body}");
    assert!(
        body.contains("<Resource>/b/deploy/current.json</Resource>"),
        "{body}"
    );
    let (status, _) = send(&endpoint, Method::POST, "/b/k").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let (status, body) = send(&endpoint, Method::PUT, "/b/k").await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, "upstream PUT /b/k")
    );
    assert_eq!(front.refused(), ["PUT /b/deploy/current.json", "POST /b/k"]);
}

#[test]
fn refuses_an_endpoint_it_cannot_forward_to() {
    for endpoint in [
        "https://127.0.0.1:9000",
        "http://127.0.0.1:9000/path",
        "http://",
    ] {
        assert!(SlowDownFront::start(endpoint, 1).is_err(), "{endpoint}");
    }
}
