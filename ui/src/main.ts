import { mount } from "svelte";
import App from "./App.svelte";
import { tauriBackend } from "./lib/backend/tauri";
import "./app.css";

const target = document.getElementById("app");
if (!target) throw new Error("#app is missing from index.html");
mount(App, { target, props: { backend: tauriBackend } });
