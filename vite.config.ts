import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

// The npm project is the repository root; the web front end lives in ui/ and builds to
// ui/dist, which tauri.conf.json embeds. Vitest runs the component tests in happy-dom.
export default defineConfig({
  root: "ui",
  // Caches go to the root node_modules (ignored), not ui/node_modules.
  cacheDir: "../node_modules/.vite",
  plugins: [svelte()],
  clearScreen: false,
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    chunkSizeWarningLimit: 1500,
  },
  server: { port: 1420, strictPort: true },
  test: {
    root: "ui",
    include: ["src/**/*.test.ts"],
    environment: "happy-dom",
  },
  resolve: process.env.VITEST ? { conditions: ["browser"] } : undefined,
});
