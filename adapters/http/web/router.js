// @ts-check
// The one way to show the current page again (after a change made on it, with the change's message shown on the
// page as it is now). `app.js` gives the renderer at start; views call `refresh()`. Neither imports the other,
// and no view fires a made-up `hashchange` to be drawn again.

/** @type {() => Promise<unknown> | unknown} */
let render = () => undefined;

/** Sets what draws the current page (`app.js`'s router, once, at start). */
export function setRenderer(fn) {
  render = fn;
}

/** Draws the current page again, from the API's answers as they are now. */
export function refresh() {
  return render();
}
