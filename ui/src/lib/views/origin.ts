// Where a view's document comes from: its server's own origin of the view scheme, which
// the desktop crate serves (src-tauri/src/views/scheme.rs; the same name is checked there).

import type { ViewOpened } from "../bindings";

/** The URI scheme views are served from. */
export const VIEW_SCHEME = "h9view";

/** The origin of a view's server: what its frame's messages must come from. */
export function viewOrigin(v: Pick<ViewOpened, "origin">): string {
  return `${VIEW_SCHEME}://${v.origin}`;
}

/** The URL the view's frame loads. */
export function viewSource(v: Pick<ViewOpened, "origin" | "viewId">): string {
  return `${viewOrigin(v)}/${v.viewId}`;
}
