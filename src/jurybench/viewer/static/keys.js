// jurybench viewer: j and k follow the page's "next" and "previous" links (rel="next" /
// rel="prev"), as Alt+J and Alt+K (their accesskeys) do without this script. On a label form,
// a choice's key (1-9, or a/b/t) picks that value of the marked criterion and marks the next,
// and Enter saves. Keys typed into a text field are left alone. This file is the viewer's only
// script; pages work without it.
document.addEventListener("keydown", function (event) {
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
  var target = event.target;
  if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
  var rel = event.key === "j" ? "next" : event.key === "k" ? "prev" : null;
  if (!rel) return;
  var link = document.querySelector('a[rel="' + rel + '"]');
  if (link) {
    event.preventDefault();
    window.location.href = link.href;
  }
});

(function () {
  var fields = Array.prototype.slice.call(document.querySelectorAll("fieldset.criterion-field"));
  if (!fields.length) return;
  var current = 0;
  function mark(i) {
    fields.forEach(function (f, k) { f.classList.toggle("current", k === i); });
    current = i;
  }
  fields.forEach(function (f, k) { f.addEventListener("focusin", function () { mark(k); }); });
  mark(0);
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName) ||
        (target.tagName === "INPUT" && target.type === "text"))) return;
    if (event.key === "Enter") {
      var form = fields[0].closest("form");
      if (form) { event.preventDefault(); form.requestSubmit(); }
      return;
    }
    var choice = fields[current].querySelector('input[data-key="' + event.key.toLowerCase() + '"]');
    if (!choice || !event.key || event.key.length !== 1) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    choice.checked = true;
    mark(Math.min(current + 1, fields.length - 1));
  }, true);
})();
