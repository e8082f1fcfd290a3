() => {
  // Words (runs of non-space in one text node) that wrap other than right after a hyphen.
  const bad = [];
  for (const cell of document.querySelectorAll('#runs td, #runs th')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
      const text = node.textContent;
      const re = /\S+/g; let m;
      while ((m = re.exec(text))) {
        let last = null;
        for (let i = m.index; i < m.index + m[0].length; i++) {
          const range = document.createRange();
          range.setStart(node, i); range.setEnd(node, i + 1);
          const rect = range.getBoundingClientRect();
          if (rect.width === 0) continue;
          const top = Math.round(rect.top);
          if (last !== null && top > last + 2 && text[i - 1] !== '-') { bad.push(m[0]); break; }
          last = top;
        }
      }
    }
  }
  return bad;
}
