// Times a list's filter box in the page, the same way in Chromium (Playwright) and in the
// real app (WebDriver): a query typed character by character and deleted again; for each
// keystroke, the time to the DOM updated (`work`) and to the next painted frame (`frames`).

/**
 * Runs in the page (so it must not use anything outside itself).
 * @param {{ selector: string, query: string }} what
 */
export async function typeAndTime({ selector, query }) {
  const input = document.querySelector(selector);
  input.focus();
  const tick = () => new Promise((r) => setTimeout(r, 0));
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const frames = [];
  const work = [];
  const steps = [...query].map((_, i, a) => a.slice(0, i + 1).join(""));
  for (const q of [...steps, ...steps.slice(0, -1).reverse(), ""]) {
    await frame();
    const t0 = performance.now();
    input.value = q;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    await tick(); // the filter ran and the DOM is updated
    void document.body.offsetHeight; // style and layout done
    work.push(performance.now() - t0);
    await frame(); // the next frame is painted
    frames.push(performance.now() - t0);
  }
  return { frames, work };
}

/** The same, as the body of a WebDriver "execute async" script taking `what` as its argument. */
export const TYPE_AND_TIME_SCRIPT = `const done = arguments[arguments.length - 1];
(${typeAndTime.toString()})(arguments[0]).then(done);`;

/** Median and worst of a list of milliseconds, rounded to 0.1 ms. */
export function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return { median: +s[Math.floor(s.length / 2)].toFixed(1), worst: +s.at(-1).toFixed(1) };
}
