//! Opening the authorization page: `$BROWSER` when set, else the system opener.

use futures::future::BoxFuture;

use super::Opener;

/// Opens URLs with `$BROWSER` (the URL as its last argument) when set, else the
/// platform's opener (`xdg-open` on Linux, `open` on macOS).
#[derive(Debug, Default, Clone)]
pub struct SystemOpener;

impl Opener for SystemOpener {
    fn open(&self, _url: &str) -> BoxFuture<'static, Result<(), String>> {
        Box::pin(async { Err("opening a browser is not implemented yet".to_string()) })
    }
}
