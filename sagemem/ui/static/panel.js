// The panel's only script of its own (the content policy allows no inline script).
// Esc closes an open drawer (a <details>), or cancels the confirmation on the page by
// following its Cancel link: every dialog of the panel is a page with one.
document.addEventListener("keydown", function (event) {
  if (event.key !== "Escape" || event.defaultPrevented) {
    return;
  }
  var open = document.querySelectorAll("details[open]");
  if (open.length > 0) {
    open[open.length - 1].removeAttribute("open");
    event.preventDefault();
    return;
  }
  var cancel = document.querySelector("a[data-cancel]");
  if (cancel) {
    event.preventDefault();
    window.location.assign(cancel.getAttribute("href"));
  }
});
