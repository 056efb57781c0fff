// nav.js: navigation inside the dashboard without a reload; app.js
// listens for "svcd:navigate" and draws the page of the new URL.

/** go navigates to path inside the dashboard. */
export function go(path) {
  history.pushState(null, "", path);
  window.dispatchEvent(new Event("svcd:navigate"));
}
