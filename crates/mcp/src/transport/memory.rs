//! An in-memory transport for deterministic client tests: the test plays the server.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::sync::mpsc;

use super::{Connection, Inbound, Outbound, TransportError, TransportReceiver, TransportSender};

/// The test's end: read what the client sent, write what the "server" answers.
pub struct MemoryPeer {
    pub from_client: mpsc::UnboundedReceiver<Vec<u8>>,
    pub to_client: mpsc::UnboundedSender<Inbound>,
}

struct Sender(mpsc::UnboundedSender<Vec<u8>>);
struct Receiver(mpsc::UnboundedReceiver<Inbound>);

impl TransportSender for Sender {
    fn send(&self, message: Outbound) -> Result<(), TransportError> {
        self.0
            .send(Vec::from(message.bytes))
            .map_err(|_| TransportError::Closed)
    }
    fn close(&self) -> BoxFuture<'static, ()> {
        async {}.boxed()
    }
}

impl TransportReceiver for Receiver {
    fn recv(&mut self) -> BoxFuture<'_, Inbound> {
        async move {
            self.0
                .recv()
                .await
                .unwrap_or_else(|| Inbound::Closed("the test peer hung up".into()))
        }
        .boxed()
    }
}

/// A connected pair.
pub fn pair() -> (Connection, MemoryPeer) {
    let (ctx, crx) = mpsc::unbounded_channel();
    let (stx, srx) = mpsc::unbounded_channel();
    (
        Connection {
            sender: Arc::new(Sender(ctx)),
            receiver: Box::new(Receiver(srx)),
        },
        MemoryPeer {
            from_client: crx,
            to_client: stx,
        },
    )
}
