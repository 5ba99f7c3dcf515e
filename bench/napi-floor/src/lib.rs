//! The same-work floor: the least a Node addon can do for one AniLink call.
//!
//! It sends the exact request AniLink sends (method, path, headers and body captured by
//! `bench/run.mjs` from AniLink itself) over the same stack the addon uses: hyper 1's HTTP/1.1
//! connection API, keep-alive connections with `TCP_NODELAY`, on a tokio runtime with one
//! worker. Each response's body text goes to JavaScript with one threadsafe-function call,
//! where the benchmark client parses and checks it as every client does. No retries, pacing,
//! breaker, hooks or option handling: what AniLink costs above this is its own overhead.
//!
//! `sendInline` does the same work without the worker thread (see [`inline`]): the request
//! is driven on the JavaScript thread and its answer handed over by a direct call, which is
//! what the thread hand-off costs when subtracted from `send`.
//!
//! ```js
//! const floor = new Floor(url, ['content-type', 'application/json', …], body, (id, status, text) => …);
//! floor.send(id); // one request; its answer arrives as (id, status, text), status 0 on failure
//! floor.sendInline(id); // the same, on the JavaScript thread (Linux)
//! ```

mod inline;

use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, HOST};
use hyper::{Method, Request, Uri};
use hyper_util::rt::TokioIo;
use napi::bindgen_prelude::{FnArgs, Function};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Error, JsValue, Status};
use napi_derive::napi;
use tokio::net::TcpStream;

/// The runtime AniLink's addon builds (src/lib.rs): multi-threaded with one worker.
#[napi_derive::module_init]
fn init() {
    if let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        napi::bindgen_prelude::create_custom_tokio_runtime(runtime);
    }
}

/// One finished request on its way to JavaScript.
struct Answer {
    id: u32,
    /// The HTTP status, or 0 when the exchange failed (`text` then says why).
    status: u32,
    text: String,
}

/// Strong, so the process stays alive while requests are in flight; the benchmark client
/// exits explicitly when its measurement is done.
type Deliver = ThreadsafeFunction<Answer, (), FnArgs<(u32, u32, String)>, Status, false>;

type Sender = SendRequest<Full<Bytes>>;
type Connection = http1::Connection<TokioIo<TcpStream>, Full<Bytes>>;

/// Where a request finds a keep-alive connection, and where a new connection's task runs.
trait Connections {
    fn take(&self) -> Option<Sender>;
    fn keep(&self, sender: Sender);
    /// Run `connection` until its sender is dropped (the socket then closes).
    fn drive(&self, connection: Connection);
}

struct Shared {
    /// `host:port` to dial.
    address: String,
    path: Uri,
    headers: HeaderMap,
    body: Bytes,
    /// Keep-alive connections between two requests; a request with none idle opens one.
    idle: Mutex<Vec<Sender>>,
    deliver: Deliver,
}

/// The worker's connections: shared, their tasks on the runtime's worker.
impl Connections for Shared {
    fn take(&self) -> Option<Sender> {
        lock(&self.idle).pop()
    }

    fn keep(&self, sender: Sender) {
        lock(&self.idle).push(sender);
    }

    fn drive(&self, connection: Connection) {
        tokio::spawn(async move {
            let _ = connection.await;
        });
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[napi]
pub struct Floor {
    shared: Arc<Shared>,
    /// `on_response`, for the direct calls of `sendInline`.
    on_response: inline::Callback,
}

#[napi]
impl Floor {
    /// `headers` is a flat `[name, value, …]` list sent in that order (`host` is set from
    /// `url`); `on_response(id, status, text)` runs on the JavaScript thread once per request.
    #[napi(constructor)]
    pub fn new(
        env: Env,
        url: String,
        headers: Vec<String>,
        body: String,
        on_response: Function<'_, FnArgs<(u32, u32, String)>, ()>,
    ) -> napi::Result<Self> {
        let invalid = |what: String| Error::new(Status::InvalidArg, what);
        let uri: Uri = url
            .parse()
            .map_err(|e| invalid(format!("bad url {url}: {e}")))?;
        let authority = uri
            .authority()
            .filter(|_| uri.scheme_str() == Some("http"))
            .ok_or_else(|| invalid(format!("expected an http://host:port/ url, got {url}")))?;
        let address = format!(
            "{}:{}",
            authority.host(),
            authority.port_u16().unwrap_or(80)
        );
        let host = HeaderValue::from_str(authority.as_str())
            .map_err(|e| invalid(format!("bad host in {url}: {e}")))?;
        let path: Uri = uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .parse()
            .map_err(|e| invalid(format!("bad path in {url}: {e}")))?;

        if !headers.len().is_multiple_of(2) {
            return Err(invalid("headers must be [name, value, …] pairs".into()));
        }
        let mut header_map = HeaderMap::new();
        header_map.insert(HOST, host);
        for pair in headers.chunks_exact(2) {
            let name = HeaderName::from_bytes(pair[0].as_bytes())
                .map_err(|e| invalid(format!("bad header name {:?}: {e}", pair[0])))?;
            if name == HOST {
                continue;
            }
            let value = HeaderValue::from_str(&pair[1])
                .map_err(|e| invalid(format!("bad value for header {name}: {e}")))?;
            header_map.append(name, value);
        }

        let inline_callback = inline::Callback::new(&env, on_response.raw())?;
        let deliver: Deliver = on_response
            .build_threadsafe_function::<Answer>()
            .callee_handled::<false>()
            .build_callback(|context| {
                let Answer { id, status, text } = context.value;
                Ok(FnArgs::from((id, status, text)))
            })?;
        Ok(Self {
            on_response: inline_callback,
            shared: Arc::new(Shared {
                address,
                path,
                headers: header_map,
                body: Bytes::from(body),
                idle: Mutex::default(),
                deliver,
            }),
        })
    }

    /// Starts one request on the runtime; its answer comes back through `on_response`.
    #[napi]
    pub fn send(&self, id: u32) {
        let shared = Arc::clone(&self.shared);
        napi::bindgen_prelude::spawn(async move {
            let answer = Answer::of(id, shared.exchange(&*shared).await);
            shared
                .deliver
                .call(answer, ThreadsafeFunctionCallMode::NonBlocking);
        });
    }

    /// Starts one request on this (the JavaScript) thread; its answer comes back through
    /// `on_response`, called directly from the libuv callback that reads it. Linux only.
    #[napi]
    pub fn send_inline(&self, env: Env, id: u32) -> napi::Result<()> {
        inline::start(&env, Arc::clone(&self.shared), self.on_response.clone(), id)
    }
}

impl Answer {
    fn of(id: u32, outcome: Result<(u32, String), String>) -> Self {
        match outcome {
            Ok((status, text)) => Answer { id, status, text },
            Err(text) => Answer {
                id,
                status: 0,
                text,
            },
        }
    }
}

impl Shared {
    async fn exchange(&self, connections: &impl Connections) -> Result<(u32, String), String> {
        let mut sender = match connections.take() {
            Some(sender) => sender,
            None => {
                let (sender, connection) = self.connect().await?;
                connections.drive(connection);
                sender
            }
        };
        let mut request = Request::new(Full::new(self.body.clone()));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.path.clone();
        *request.headers_mut() = self.headers.clone();
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("request failed: {e}"))?;
        let status = u32::from(response.status().as_u16());
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("reading the body failed: {e}"))?
            .to_bytes();
        if !sender.is_closed() {
            connections.keep(sender);
        }
        let text = String::from_utf8(Vec::from(body)).map_err(|_| "body is not UTF-8")?;
        Ok((status, text))
    }

    async fn connect(&self) -> Result<(Sender, Connection), String> {
        let tcp = TcpStream::connect(&self.address)
            .await
            .map_err(|e| format!("connect to {} failed: {e}", self.address))?;
        tcp.set_nodelay(true)
            .map_err(|e| format!("TCP_NODELAY failed: {e}"))?;
        http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| format!("HTTP handshake failed: {e}"))
    }
}
