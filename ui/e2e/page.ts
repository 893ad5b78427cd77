// What the Chromium tests load before the app's bundle (bundled by serve.mjs): the backend
// of the scenario named in the URL, answering the page's IPC. `window.__mock` is that
// backend, for the tests to drive and inspect.

import { install } from "./mock-ipc";
import { scenario, type Scenario } from "./scenarios";

const backend = scenario((new URLSearchParams(location.search).get("scenario") ?? "flows") as Scenario);
install(backend, backend.project?.path ?? "");
Object.assign(window, { __mock: backend });
