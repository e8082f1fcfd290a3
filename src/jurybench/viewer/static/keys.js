// jurybench viewer: j and k follow the page's "next" and "previous" links (rel="next" /
// rel="prev"), as Alt+J and Alt+K (their accesskeys) do without this script. Keys typed into
// a form field are left alone. This file is the viewer's only script; pages work without it.
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
